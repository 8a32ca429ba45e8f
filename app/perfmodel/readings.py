"""Device power readings the power model can learn from: an idle GPU as ``nvidia-smi -q`` shows it, and
the lab's own (hardware, utilisation, watts) observations as a CSV.

An idle reading is taken only in performance state P0 (clocks up, as while a config runs) with the
GPU busy at most 5% of the time: it is the floor a running config sits on at zero utilisation, not
the deeper idle of a GPU whose clocks have dropped (a real H100 reads 125 W the one way, 75 W the
other).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from app.catalog import CatalogHardware, get, match_gpu
from app.errors import NotFoundError
from app.perfmodel.power_fit import Observation

IDLE_BUSY_PCT = 5.0
CSV_COLUMNS = ("catalog_id", "compute_util", "memory_util", "watts")


def _field(text: str, name: str, after: str | None = None) -> str | None:
    start = 0
    if after is not None:
        found = re.search(rf"^\s*{re.escape(after)}\s*$", text, re.MULTILINE)
        if found is None:
            return None
        start = found.end()
    match = re.compile(rf"^\s*{re.escape(name)}\s*:\s*(.+?)\s*$", re.MULTILINE).search(text, start)
    return match.group(1) if match else None


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    found = re.match(r"[-+]?\d+(\.\d+)?", value)
    return float(found.group(0)) if found else None


def nvidia_smi_idle(text: str, label: str = "nvidia-smi -q") -> Observation | None:
    """The idle draw of the first GPU in an ``nvidia-smi -q`` output, as an observation at zero
    utilisation; None when it is no such reading (not P0, busy, or a GPU the catalog lacks)."""
    name = _field(text, "Product Name")
    state = _field(text, "Performance State")
    busy = _number(_field(text, "GPU", after="Utilization"))
    watts = _number(_field(text, "Average Power Draw", after="GPU Power Readings"))
    if name is None or state != "P0" or busy is None or busy > IDLE_BUSY_PCT or not watts:
        return None
    catalog_id, _ = match_gpu(name)
    if catalog_id is None:
        return None
    return Observation(
        hardware=get(catalog_id), compute_util=0.0, memory_util=0.0, watts=watts, label=f"{label}: {name} idle in P0"
    )


def idle_readings(paths: Iterable[Path], root: Path) -> list[Observation]:
    """The idle readings in ``nvidia-smi -q`` files, each labelled with its path under ``root``.

    Raises ValueError naming a file that holds no idle GPU in P0 that the catalog knows: a fit that
    silently lost its floor would move every predicted draw."""
    found = []
    for path in paths:
        label = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        reading = nvidia_smi_idle(path.read_text(encoding="utf-8"), label=label)
        if reading is None:
            raise ValueError(
                f"{path}: not an idle GPU in P0 that the catalog knows; give the `nvidia-smi -q` output of an "
                f"idle GPU with its clocks up (performance state P0, at most {IDLE_BUSY_PCT:.0f}% busy)"
            )
        found.append(reading)
    return found


def observations_csv(text: str, lookup: Callable[[str], CatalogHardware] = get) -> list[Observation]:
    """Device readings, one per row: ``catalog_id, compute_util, memory_util, watts`` (and an optional
    ``label``); utilisations 0..1, memory_util empty when not known. Meant for the lab's results
    (NVML or RAPL mean power) with the utilisations the performance model gives their configs."""
    reader = csv.DictReader(io.StringIO(text))
    missing = [c for c in CSV_COLUMNS if c not in (reader.fieldnames or [])]
    if missing:
        raise ValueError(f"observations CSV lacks the columns {', '.join(missing)} (needs {', '.join(CSV_COLUMNS)})")
    found = []
    for line, row in enumerate(reader, start=2):
        try:
            memory = row["memory_util"].strip()
            compute = float(row["compute_util"])
            memory_util = float(memory) if memory else None
            if compute > 1 or (memory_util is not None and memory_util > 1):
                raise ValueError("utilisations are shares, 0..1")
            found.append(
                Observation(
                    hardware=lookup(row["catalog_id"].strip()),
                    compute_util=compute,
                    memory_util=memory_util,
                    watts=float(row["watts"]),
                    label=(row.get("label") or f"line {line}").strip(),
                )
            )
        except (ValueError, KeyError, NotFoundError) as error:
            raise ValueError(f"observations CSV line {line}: {error}") from error
    return found
