"""How fast a serving plan answers: every batch's decode in one device-model evaluation (what the
planner runs) against one evaluation per batch (what it ran before session 33), side by side in one
run, and whether both plan the same.

    .venv/bin/python -m benchmarks.serving_speed [--rounds 3]

On a fresh SQLite database holding what ships, `app.planner.serving.plan` answers each request below,
alternately with `app.perfmodel.generation.steps_at` as it is and with it called once per batch
(the device model evaluated once per batch, as `generation.step` did before); it prints the
median seconds of each, their ratio, and whether the two answers are the same. The last request is the
largest a read-only key could ask for (session 33's attack battery). The prompt's prefill is worked
out once per part in both (the other half of session 33's change), so the ratio is the batching's
alone; before it the largest plan took 10-19 s on this project's 2-core VMs.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from app.contracts import ServingRequest
from app.db import migrate
from app.db.engine import Database
from app.perfmodel import generation
from app.planner import serving

REQUESTS: dict[str, dict[str, Any]] = {
    "llama3_8b, defaults": {"workload": "llama3_8b"},
    "llama3_8b, 300 in flight, CPUs too": {"workload": "llama3_8b", "concurrency": 300, "include_cpus": True},
    "llama3_70b, 5 requests/s, fastest": {"workload": "llama3_70b", "request_rate_per_s": 5, "objective": "fastest"},
    "llama3_8b, 1e7 requests/s, CPUs, 5 precisions, batches to 65,536": {
        "workload": "llama3_8b",
        "request_rate_per_s": 1e7,
        "include_cpus": True,
        "max_batch": 65536,
        "precisions": ["bf16", "fp16", "fp32", "int8", "int4"],
    },
}


@contextmanager
def one_batch_at_a_time() -> Iterator[None]:
    batched = generation.steps_at

    def per_batch(shape: Any, task: Any, precision: Any, batches: Sequence[int], *args: Any, **kwargs: Any) -> Any:
        return [batched(shape, task, precision, [b], *args, **kwargs)[0] for b in batches]

    generation.steps_at = per_batch  # type: ignore[assignment]
    try:
        yield
    finally:
        generation.steps_at = batched  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        url = f"sqlite:///{Path(folder) / 'serving.db'}"
        migrate.upgrade(url)
        db = Database(url)
        print("| request | one evaluation per batch, s | all batches in one, s | ratio | same answer |")
        print("|---|---|---|---|---|")
        with db.reading() as session:
            for label, body in REQUESTS.items():
                request = ServingRequest.model_validate(body)
                serving.plan(session, request)  # caches (profiles, calibration) warm for both
                old: list[float] = []
                new: list[float] = []
                for _ in range(args.rounds):
                    with one_batch_at_a_time():
                        start = time.perf_counter()
                        before = serving.plan(session, request)
                        old.append(time.perf_counter() - start)
                    start = time.perf_counter()
                    after = serving.plan(session, request)
                    new.append(time.perf_counter() - start)
                same = before.model_dump_json() == after.model_dump_json()
                a, b = statistics.median(old), statistics.median(new)
                print(f"| {label} | {a:.2f} | {b:.2f} | {a / b:.1f}x | {'yes' if same else 'NO'} |")
        db.dispose()


if __name__ == "__main__":
    main()
