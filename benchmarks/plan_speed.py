"""How fast a plan answers as the devices it may use grow: the planner's searched device counts against
evaluating every count, side by side in one run, and whether both plan the same.

    .venv/bin/python -m benchmarks.plan_speed [--rounds 3] [--most 64,1000,5000,20000] [--alone 100000]

On a fresh SQLite database holding what ships (the catalog, the published results, the reference runs),
`app.planner.plan` sizes ResNet-50 training to a throughput target with ``cluster.max_devices`` set to
each of ``--most``, once with `app.planner.scale.searched` (what the planner runs) and once with every
count from the first to the most (what it ran before session 24); it prints the median seconds of each,
their ratio, and whether the two plans list the same hardware, device counts and throughputs. ``--alone``
times the searched planner alone at counts where evaluating every count takes minutes (100,000: 159 s
through the API before session 24).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from app.contracts import Plan, PlanRequest
from app.db import migrate
from app.db.engine import Database
from app.planner import plan, scale

TARGET = 200_000.0
"""Samples/s the plans are sized for: tens to thousands of devices, depending on the part."""


def _every(
    first: int, step: int, most: int, _needed: object, _extra: object, throughput_of: Any
) -> tuple[np.ndarray, np.ndarray]:
    counts = np.arange(first, most + 1, step, dtype=np.float64)
    return counts, throughput_of(counts)


@contextmanager
def every_count() -> Iterator[None]:
    """The planner evaluating every device count, as it did before ``scale.searched``."""
    searched = scale.searched
    scale.searched = _every  # type: ignore[assignment]
    try:
        yield
    finally:
        scale.searched = searched


def _request(most: int) -> PlanRequest:
    return PlanRequest.model_validate(
        {
            "workload": "resnet50",
            "task": "train",
            "target": {"throughput_samples_per_s": TARGET},
            "cluster": {"max_devices": most},
            "limit": 500,
        }
    )


def _timed(ask: Callable[[], Plan], rounds: int) -> tuple[float, Plan]:
    seconds, answer = [], None
    for _ in range(rounds):
        start = time.perf_counter()
        answer = ask()
        seconds.append(time.perf_counter() - start)
    assert answer is not None
    return statistics.median(seconds), answer


def _listed(answer: Plan) -> list[tuple[str, str, int, int, float]]:
    return [
        (c.hardware.name, c.runtime, c.batch_size, c.devices, round(c.throughput_samples_per_s, 6))
        for c in answer.candidates
    ]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--most", default="64,1000,5000,20000", help="max_devices to compare at, comma-separated")
    parser.add_argument("--alone", default="100000", help="max_devices to time the searched planner alone at")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hwadvisor-plan-speed-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'plan.db'}"
        migrate.upgrade(url)
        database = Database(url)
        try:
            with database.reading() as session:
                plan(session, _request(64))  # the recommender's table, built once for both
                print(f"resnet50/train to {TARGET:,.0f} samples/s, median of {args.rounds} rounds (seconds)")
                print(f"  {'max_devices':>11}  {'searched':>9}  {'every count':>11}  {'ratio':>6}  same plans")
                for most in (int(m) for m in args.most.split(",") if m):
                    fast, searched = _timed(lambda m=most: plan(session, _request(m)), args.rounds)
                    with every_count():
                        slow, every = _timed(lambda m=most: plan(session, _request(m)), args.rounds)
                    same = _listed(searched) == _listed(every)
                    print(f"  {most:>11,}  {fast:>9.2f}  {slow:>11.2f}  {slow / fast:>5.1f}x  {same}")
                for most in (int(m) for m in args.alone.split(",") if m):
                    fast, _ = _timed(lambda m=most: plan(session, _request(m)), args.rounds)
                    print(f"  {most:>11,}  {fast:>9.2f}  {'(not run)':>11}")
        finally:
            database.dispose()


if __name__ == "__main__":
    main()
