"""Every zoo workload x task x precision on catalog GPUs through POST /api/v1/predictions, as a
procurement tool asks, and what an expert would flag in the answers.

    .venv/bin/python -m benchmarks.pairs_sweep [--parts ID,ID,...] [--batches 1,32,256]
                                               [--runtime torch-eager]

The real app in-process on a fresh SQLite database that holds only what ships (the catalog, the
published results, hwadvisor's reference runs): a lab that has measured nothing yet. Every answer is
checked for what no figure should show (``flags``):

- a refusal that does not say why (the model's reason, never "None");
- fp16 and bf16 of one workload on one GPU at one batch more than TWIN_SPREAD apart where neither was
  measured: the same tensor units, so a gap that large is a calibration carried from the wrong place;
- a larger batch more than 10% slower than a smaller one where its calibration fell as much: a ratio
  carried from a step of another regime (app/perfmodel/split.py). Where the model's own curve falls
  (its L2 term: a kernel whose working set fits the cache at the smaller batch), it is printed, not
  flagged, and so is a fall whose factor fell from a host-heavy step to the device's while the model's
  own device time per sample grew by as much (``calibration_fell``);
- a TF32 figure below its FP32 figure on one GPU at one batch where neither was measured and the
  device bounds the step (``device_bound``): the same bytes on a matrix unit no slower
  (app/recommender/estimators/modelled.py ``_plain``; without that floor this flags 22, AlexNet's TF32 at
  0.54-0.90x FP32 on the A10, L4, L40S and RTX 4090 among them);
- a figure that is not finite and positive, or a band outside 5-300%.

It prints the answers' counts, each refusal reason with how often it came, the model's own falling
curves and every flag; the exit status is 1 when anything is flagged. Session 22's first sweep (15 GPUs,
batches 1, 32 and 256, about 70 s) found three: ResNet-50 inference in fp16 carried from the one batch
the runs settled (256) down to batch 1, 2.1x its bf16 figure on every NVIDIA part; eager int8 refused
with "the model cannot predict it: None"; and 41 figures 10-45% slower at batch 256 than at 32 on parts
device-bound at 32 (an A10's MobileNet-v2 training), the H100 run's host-bound batch-32 ratio carried to
them. After the twin rule, ``modelled.why_unmodelled`` and the split correction: none flagged; 27 of the
model's own curves fall 10-16% from batch 32 to 256, all on Ada parts (L4, L40S, RTX 4090, RTX 6000
Ada), whose large L2 the model lets a smaller batch's kernels stream from.
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import secrets
import sys
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app.perfmodel.bands import HOST_SHARE

PARTS = (
    "h100-sxm5-80gb",
    "h100-pcie-80gb",
    "h200-sxm-141gb",
    "gh200-96gb",
    "b200-sxm-180gb",
    "a100-sxm4-80gb",
    "a100-pcie-40gb",
    "a10",
    "l4",
    "l40s",
    "t4",
    "v100-sxm2-16gb",
    "rtx-4090",
    "rtx-6000-ada",
    "mi300x",
)
"""The default sweep: a part of every GPU generation since Volta, data-centre and desk-side, and AMD's MI300X."""
BATCHES = (1, 32, 256)
TWIN_SPREAD = 1.5
"""fp16 over bf16 (or back) beyond which an unmeasured pair is flagged: the reference runs measured them
up to 1.43x apart (the H200's MobileNet-v2 training at 256; cuDNN's fp16 and bf16 kernels differ)."""
SLOWER = 0.9
"""A larger batch this much of a smaller one's throughput, or less, is flagged."""
PLAIN_SLOWER = 0.99
"""A TF32 figure under this share of its FP32 figure is flagged (rounding aside)."""
BAND_PCT = (5.0, 300.0)


@dataclass(frozen=True, slots=True)
class Answer:
    part: str
    workload: str
    task: str
    precision: str
    batch: int
    status: int
    body: dict[str, Any]

    @property
    def throughput(self) -> float:
        return float(self.body["throughput_samples_per_s"])

    @property
    def measured(self) -> bool:
        return bool(self.body["kind"] == "measured")

    @property
    def fits(self) -> bool:
        return all(w["code"] != "out_of_memory" for w in self.body.get("why", []))

    @property
    def modelled(self) -> dict[str, Any] | None:
        """The figures of the answer's ``modelled`` reason, where it has one."""
        return next((w["figures"] for w in self.body.get("why", []) if w["code"] == "modelled"), None)

    @property
    def factor(self) -> float | None:
        """The calibration's factor on the model's figure (the ``modelled`` reason's), where it has one."""
        figures = self.modelled
        return float(figures["factor"]) if figures is not None else None

    @property
    def device_per_sample(self) -> float:
        """The model's own device time per sample, before calibration: the larger of its compute and its memory
        time, over the batch."""
        figures = self.modelled
        assert figures is not None, "only a modelled answer has a device time"
        return float(max(figures["compute_ms"], figures["memory_ms"]) * figures["factor"]) / self.batch

    @property
    def device_bound(self) -> bool:
        """Whether the step is surely the device's by the bands' rule (app/perfmodel/bands.py ``HOST_SHARE``):
        the host's time under that share of its compute or of its memory time, each no more than the
        device's time."""
        figures = self.modelled
        if figures is None:
            return False
        return bool(figures["host_ms"] < HOST_SHARE * max(figures["compute_ms"], figures["memory_ms"]))

    @property
    def label(self) -> str:
        return f"{self.part} {self.workload}/{self.task} {self.precision} batch {self.batch}"


def combos() -> list[tuple[str, str, str]]:
    """Every zoo workload, task and precision the shipped profiles hold."""
    from app.perfmodel.profile import shipped

    return sorted({(w, t.value, p.value) for w, t, p in shipped()})


def ask_all(
    client: Any,
    headers: dict[str, str],
    parts: Iterable[str],
    batches: Sequence[int],
    runtime: str,
    asked: Iterable[tuple[str, str, str]] | None = None,
) -> list[Answer]:
    """POST /api/v1/predictions for every part x (workload, task, precision) x batch."""
    answers = []
    for part in parts:
        for workload, task, precision in asked if asked is not None else combos():
            for batch in batches:
                body = {
                    "catalog_id": part,
                    "workload": workload,
                    "task": task,
                    "runtime": runtime,
                    "precision": precision,
                    "batch_size": batch,
                }
                response = client.post("/api/v1/predictions", json=body, headers=headers)
                answers.append(Answer(part, workload, task, precision, batch, response.status_code, response.json()))
    return answers


def flags(answers: Sequence[Answer]) -> list[str]:
    """What no answer should show, one line each (module docstring)."""
    found: list[str] = []
    ok = {(a.part, a.workload, a.task, a.precision, a.batch): a for a in answers if a.status == 200}
    for a in answers:
        if a.status == 404 and (a.body.get("detail", "").endswith("None") or ": None (" in a.body.get("detail", "")):
            found.append(f"{a.label}: refused without a reason: {a.body.get('detail')}")
        elif a.status not in (200, 404):
            found.append(f"{a.label}: status {a.status}: {a.body}")
    for a in ok.values():
        low, high = BAND_PCT
        if not (math.isfinite(a.throughput) and a.throughput > 0):
            found.append(f"{a.label}: throughput {a.throughput}")
        if not low <= a.body["error_pct"] <= high:
            found.append(f"{a.label}: band {a.body['error_pct']:.1f}%")
    for (part, workload, task, precision, batch), a in ok.items():
        twin = ok.get((part, workload, task, "bf16", batch)) if precision == "fp16" else None
        if twin is not None and not (a.measured or twin.measured):
            ratio = a.throughput / twin.throughput
            if not 1 / TWIN_SPREAD <= ratio <= TWIN_SPREAD:
                found.append(f"{a.label}: {ratio:.2f}x its bf16 figure ({a.body['source']} / {twin.body['source']})")
    for (part, workload, task, precision, batch), a in ok.items():
        plain = ok.get((part, workload, task, "fp32", batch)) if precision == "tf32" else None
        if plain is None or a.measured or plain.measured or not a.device_bound:
            continue
        if a.throughput < PLAIN_SLOWER * plain.throughput:
            found.append(f"{a.label}: {a.throughput / plain.throughput:.2f}x its fp32 figure, the device's step")
    for small, large in falls(answers):
        if calibration_fell(small, large):
            found.append(
                f"{large.label}: {large.throughput:,.1f}/s, below batch {small.batch}'s {small.throughput:,.1f}/s, "
                f"its calibration x{large.factor:.2f} against x{small.factor:.2f}"
            )
    return found


def calibration_fell(small: Answer, large: Answer) -> bool:
    """Whether the larger batch's calibration factor is SLOWER times the smaller's or less, where the model's
    own device time per sample did not grow as much. A step that is partly the host's at the smaller batch
    and the device's at the larger takes the split's host factor at one and its device factor at the other
    (app/perfmodel/split.py): the factor falls by design there, and the fall is the model's where its device
    time per sample grew by as much (the L2 term: a smaller batch's kernels streaming from the cache)."""
    if small.factor is None or large.factor is None or large.factor >= SLOWER * small.factor:
        return False
    grew = large.device_per_sample / small.device_per_sample
    return grew * large.throughput / small.throughput < 1 / SLOWER


def falls(answers: Sequence[Answer]) -> list[tuple[Answer, Answer]]:
    """Each (smaller, larger) batch of one curve, both modelled and fitting in memory, where the larger is
    more than 10% slower. ``flags`` keeps those whose calibration fell as much (``calibration_fell``: a ratio
    carried from a step of another regime); the rest are the model's own curve (``main`` prints them)."""
    curves: dict[tuple[str, str, str, str], list[Answer]] = {}
    for a in answers:
        if a.status == 200 and a.fits and not a.measured:
            curves.setdefault((a.part, a.workload, a.task, a.precision), []).append(a)
    found = []
    for curve in curves.values():
        for small, large in itertools.pairwise(sorted(curve, key=lambda a: a.batch)):
            if large.throughput < SLOWER * small.throughput:
                found.append((small, large))
    return found


def reasons(answers: Sequence[Answer]) -> Counter[str]:
    """Each refusal's reason (the part named in it made generic) with how often it came."""
    said: Counter[str] = Counter()
    for a in answers:
        if a.status == 404:
            detail = str(a.body.get("detail", ""))
            said[detail.split("cannot predict it: ")[-1].replace(a.part, "PART")] += 1
    return said


@contextlib.contextmanager
def shipped_client() -> Iterator[tuple[Any, dict[str, str]]]:
    """The app on a fresh SQLite database holding only what ships (a lab that has measured nothing yet), with a
    read-only token's headers."""
    from fastapi.testclient import TestClient

    from app.config import Settings
    from app.db import migrate
    from app.db.engine import Database
    from app.server.app import create_app

    with tempfile.TemporaryDirectory(prefix="hwadvisor-sweep-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'sweep.db'}"
        migrate.upgrade(url)
        admin = secrets.token_hex(32)
        database = Database(url)
        try:
            app = create_app(Settings(database_url=url, admin_token=admin, data_dir=Path(tmp)), database=database)
            with TestClient(app) as client:
                made = client.post(
                    "/api/v1/tokens", json={"kind": "readonly"}, headers={"Authorization": f"Bearer {admin}"}
                )
                made.raise_for_status()
                yield client, {"Authorization": f"Bearer {made.json()['token']}"}
        finally:
            database.dispose()


def sweep(parts: Sequence[str], batches: Sequence[int], runtime: str) -> list[Answer]:
    """The shipped app asked every pair."""
    with shipped_client() as (client, headers):
        return ask_all(client, headers, parts, batches, runtime)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--parts", default=",".join(PARTS), help="catalog ids, comma-separated")
    parser.add_argument("--batches", default=",".join(map(str, BATCHES)), help="batch sizes, comma-separated")
    parser.add_argument("--runtime", default="torch-eager")
    args = parser.parse_args(argv)
    parts = [p for p in args.parts.split(",") if p]
    batches = [int(b) for b in args.batches.split(",") if b]
    answers = sweep(parts, batches, args.runtime)
    print(
        f"{len(answers)} answers: "
        + ", ".join(f"{n} x {s}" for s, n in sorted(Counter(a.status for a in answers).items()))
    )
    kinds = Counter(f"{a.body['kind']} ({a.body['source']})" for a in answers if a.status == 200)
    for kind, n in kinds.most_common():
        print(f"  {n:6d} {kind}")
    print("refused:")
    for reason, n in reasons(answers).most_common():
        print(f"  {n:6d} {reason}")
    own = [(small, large) for small, large in falls(answers) if not calibration_fell(small, large)]
    print(f"the model's own curve slower at a larger batch (not flagged): {len(own)}")
    for small, large in own:
        print(f"  {large.label}: {large.throughput:,.1f}/s, batch {small.batch} {small.throughput:,.1f}/s")
    found = flags(answers)
    print(f"flagged: {len(found)}")
    for line in found:
        print(f"  {line}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
