"""MLPerf Inference Power results read into (throughput, wall power) pairs of one system.

The source is the cleaned export of the MLCommons results tables in ../shared/datasets/mlperf-power
(MLPerf Power paper, HPCA 2025; see its SOURCES.md). Each submission appears as two rows that share
Public ID, system, model and scenario: one with a performance unit (samples/s, queries/s) and one
with the wall power of the whole system during that run (System Power (W); 'Watts' or 'Power (W)' in
later rounds). This module pairs them and keeps what the power model can use:

- ResNet-50 and BERT-99 (the two models with a FLOP count here), Offline and Server, one node;
- NVIDIA accelerators with a catalog entry and an int8 peak, run with TensorRT or NVIDIA's own
  harness (int8 for ResNet and BERT-99; FP8 where Hopper/Ada ran BERT-99, whose dense peak equals
  int8's on those parts). The MLCommons reference implementation is left out: its precision is the
  framework's, not stated;
- a host CPU whose TDP the codecarbon table gives (``HOST_CPU_NAMES`` names the few that MLPerf
  spells without the suffix the table uses).

Everything left out is counted with its reason, so a calibration can say what it used. Pure
standard library: the datasets are not shipped, the calibration script and benchmark read them.
"""

from __future__ import annotations

import csv
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from app.catalog import CatalogHardware, get
from app.perfmodel.power_fit import CapPair, Fit, Observation

FILES = ("data_cleaned_inference_datacenter.csv", "data_cleaned_inference_edge.csv")
CPU_TDP_FILE = Path("codecarbon-cpu") / "cpu_power.csv"

Workload = Literal["resnet50", "bert-99"]
MODELS: dict[str, Workload] = {
    "ResNet": "resnet50",
    "resnet50": "resnet50",
    "BERT-99.0": "bert-99",
    "bert-99.0": "bert-99",
}
PERFORMANCE_UNITS = frozenset({"samples/s", "queries/s", "Samples/s", "Queries/s"})
POWER_UNITS = frozenset({"System Power (W)", "System Power", "Power (W)", "Watts"})
SCENARIOS = {"Offline": "Offline", "Server": "Server"}

ACCELERATORS: dict[str, str] = {
    "NVIDIA A100-SXM-80GB": "a100-sxm4-80gb",
    "NVIDIA A100-SXM-80GB CTS": "a100-sxm4-80gb",
    "NVIDIA A100-SXM4-40GB": "a100-sxm4-40gb",
    "NVIDIA A100-PCIe-80GB": "a100-pcie-80gb",
    "NVIDIA A100-PCIe-40GB": "a100-pcie-40gb",
    "NVIDIA A100-PCIE-40GB": "a100-pcie-40gb",
    "NVIDIA H100-SXM-80GB": "h100-sxm5-80gb",
    "NVIDIA H100-PCIe-80GB": "h100-pcie-80gb",
    "NVIDIA H200-SXM-141GB": "h200-sxm-141gb",
    "NVIDIA L4": "l4",
    "NVIDIA L40S": "l40s",
    "NVIDIA GeForce RTX 4090": "rtx-4090",
    "NVIDIA GeForce RTX 4090 (Ada Lovelace)": "rtx-4090",
    "NVIDIA A10": "a10",
    "NVIDIA T4": "t4",
}
"""MLPerf's accelerator names -> catalog ids (MLPerf does not use the driver's names that
app.catalog.match_gpu knows). 'CTS' names Dell's variant of the same part. 'NVIDIA A100-PCIe' with no
memory size (1.1-078 and edge rows) is left out: the 40 GB (250 W) and 80 GB (300 W) cards differ."""

HOST_CPU_NAMES: dict[str, str] = {"Intel Xeon Platinum 8480C": "Intel Xeon Platinum 8480+"}
"""Host CPUs codecarbon's table names otherwise: the 8480C of the DGX H100 is taken as the 56-core
8480+ (350 W), the part it is a custom bin of."""

BERT_LARGE_384_FLOPS = 2 * 24 * 384 * (12 * 1024**2 + 2 * 384 * 1024)
"""BERT-large (24 layers, width 1024) on one sequence of 384 tokens, 246.4 GFLOP: per layer and token,
the four attention projections and the two feed-forward matrices are 12 d^2 multiply-adds and the
attention scores and their weighted sum 2 s d; a multiply-add is 2 FLOPs. Embeddings, norms, softmax
and the span head are left out (under 0.1%). The same count for bert_base at 128 tokens, less its
attention term (which the zoo's FLOP counter does not see), is the zoo's 21.74 GFLOP to 0.01%.
MLPerf runs SQuAD with sequences padded to 384, but TensorRT computes only the real tokens, so this
count overstates the work by a factor the calibration learns (the factor 'bert-99')."""

DEVICE_SHARE = 2.0
"""A system's accelerators are read from its wall power only where their TDPs add up to at least twice
its CPUs': a 72 W L4 in a 600 W server says nothing of the L4 that the host's spread does not drown."""

SOFTWARE = re.compile(r"TensorRT|Nvidia inference implementation", re.IGNORECASE)
STATED_TDP = re.compile(r"(?:TDP:\s*|\b)(\d{3})W A100|\(TDP:\s*(\d{3})W\)")
STATED_CAP = re.compile(r"(?:Power Limit(?:ed)?(?: to)?:?|limitted to)\s*(\d{2,4})\s*W", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Pair:
    """One run of one system: its throughput and its wall power, with what the model needs of the system."""

    public_id: str
    system: str
    organization: str
    version: str
    workload: Workload
    scenario: str
    accelerator: str
    catalog_id: str
    accelerators: int
    samples_per_s: float
    """The whole system's throughput (queries/s in the Server scenario: one sample per query)."""
    system_power_w: float
    host_cpu: str
    host_sockets: int
    host_cpu_tdp_w: float
    software: str
    maxq: bool
    """Submitted as MaxQ: tuned for energy (power limits and clocks lowered), not for throughput."""
    stated_tdp_w: float | None = None
    """The board power the notes give where it differs from the catalog part (the 500 W A100 SXM)."""
    stated_cap_w: float | None = None
    """The GPU power limit the notes say the submitter set (nvidia-smi -pl)."""

    @property
    def per_accelerator_samples_per_s(self) -> float:
        return self.samples_per_s / self.accelerators


@dataclass(slots=True)
class Loaded:
    pairs: list[Pair] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    """Why submissions (one performance/power pair each) were left out, with how many."""


def _number(text: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value if value > 0 else None


def _normal_cpu(name: str) -> str:
    name = re.sub(r"\((R|TM)\)", "", name)
    name = re.sub(r"\b\d+-Core Processor\b|\bCPU\b|@.*$|\bProcessor\b", "", name)
    return re.sub(r"\s+", " ", name).strip()


def cpu_tdps(datasets: Path) -> dict[str, float]:
    """codecarbon's CPU name -> TDP (W) table."""
    with (datasets / CPU_TDP_FILE).open(newline="", encoding="utf-8") as handle:
        rows = [(row["Name"].strip(), _number(row["TDP"])) for row in csv.DictReader(handle)]
    return {name: tdp for name, tdp in rows if tdp is not None}


def host_tdp(name: str, tdps: dict[str, float]) -> float | None:
    key = _normal_cpu(name)
    key = HOST_CPU_NAMES.get(key, key)
    return tdps.get(key)


def _stated(pattern: re.Pattern[str], notes: str) -> float | None:
    found = pattern.search(notes)
    if found is None:
        return None
    return float(next(g for g in found.groups() if g))


def load(datasets: Path) -> Loaded:
    """Every usable pair in ``datasets``/mlperf-power, and why the rest was left out."""
    folder = datasets / "mlperf-power"
    if not folder.is_dir():
        raise FileNotFoundError(f"{folder} is missing: give the folder that holds mlperf-power/ (../shared/datasets)")
    tdps = cpu_tdps(datasets)
    groups: dict[tuple[str, str, Workload, str], dict[str, set[float]]] = defaultdict(lambda: defaultdict(set))
    first: dict[tuple[str, str, Workload, str], dict[str, str]] = {}
    for name in FILES:
        with (folder / name).open(newline="", encoding="utf-8") as handle:
            for row in csv.DictReader(handle):
                workload = MODELS.get(row["Model"])
                scenario = SCENARIOS.get(row["Scenario"])
                value = _number(row["Result"])
                if workload is None or scenario is None or value is None:
                    continue
                unit = row["Units"].strip()
                side = "performance" if unit in PERFORMANCE_UNITS else "power" if unit in POWER_UNITS else None
                if side is None:
                    continue
                run = (row["Public ID"], row["SystemName"], workload, scenario)
                groups[run][side].add(value)
                first.setdefault(run, row)
    loaded = Loaded()
    for key, sides in sorted(groups.items()):
        row = first[key]
        reason = _unusable(row, sides)
        if reason:
            loaded.skipped[reason] += 1
            continue
        cpu_tdp = host_tdp(row["host_processor_model_name"], tdps)
        if cpu_tdp is None:
            loaded.skipped[f"host CPU without a TDP in codecarbon's table: {row['host_processor_model_name']}"] += 1
            continue
        (samples,), (power,) = sides["performance"], sides["power"]
        loaded.pairs.append(
            Pair(
                public_id=key[0],
                system=key[1],
                organization=row["Organization"],
                version=row["version"],
                workload=key[2],
                scenario=key[3],
                accelerator=row["accelerator_model_name"],
                catalog_id=ACCELERATORS[row["accelerator_model_name"]],
                accelerators=int(float(row["accelerators_per_node"])),
                samples_per_s=samples,
                system_power_w=power,
                host_cpu=row["host_processor_model_name"],
                host_sockets=int(float(row["host_processors_per_node"])),
                host_cpu_tdp_w=cpu_tdp,
                software=row["Software"],
                maxq="MaxQ" in key[1],
                stated_tdp_w=_stated(STATED_TDP, row["notes"]),
                stated_cap_w=_stated(STATED_CAP, row["notes"]),
            )
        )
    return loaded


def _unusable(row: dict[str, str], sides: dict[str, set[float]]) -> str | None:
    name = row["accelerator_model_name"]
    if name not in ACCELERATORS:
        return f"NVIDIA accelerator without a catalog entry: {name}" if "NVIDIA" in name else "not an NVIDIA GPU"
    if not SOFTWARE.search(row["Software"]):
        return "not TensorRT or NVIDIA's harness: precision not stated"
    if len(sides["performance"]) != 1 or len(sides["power"]) != 1:
        return "no single performance row and single power row"
    if _number(row["number_of_nodes"]) != 1 or not _number(row["accelerators_per_node"]):
        return "not one node with a stated accelerator count"
    if not _number(row["host_processors_per_node"]):
        return "host CPU count not stated"
    return None


def flops_per_sample(workload: Workload) -> float:
    """Forward FLOPs of one sample: the convolutions and GEMMs of the zoo's ResNet-50 profile (what the
    zoo's own FLOP count holds); BERT-large at 384 tokens by formula."""
    if workload == "resnet50":
        from app.contracts import Precision, Task
        from app.perfmodel.profile import TENSOR_CLASSES, shipped

        found = shipped()[("resnet50", Task.infer, Precision.fp32)]
        return sum(b.flops.per_sample for b in found.buckets if b.op_class in TENSOR_CLASSES)
    return float(BERT_LARGE_384_FLOPS)


def hardware(pair: Pair) -> CatalogHardware:
    """The catalog part, with the board power the submission states where it differs (500 W A100 SXM)."""
    part = get(pair.catalog_id)
    if pair.stated_tdp_w and pair.stated_tdp_w != part.tdp_w:
        return part.model_copy(update={"tdp_w": pair.stated_tdp_w, "power_limit_max_w": None})
    return part


def compute_util(pair: Pair) -> float | None:
    """Achieved int8 operations per second per accelerator over the int8 peak (None: no peak known).
    Hopper and Ada run BERT-99 in FP8, whose dense peak is int8's on those parts."""
    part = get(pair.catalog_id)
    if not part.peak_int8_tops:
        return None
    return pair.per_accelerator_samples_per_s * flops_per_sample(pair.workload) / (part.peak_int8_tops * 1e12)


def observation(pair: Pair) -> Observation | None:
    """The pair as a whole-system observation of the power model (None: no int8 peak to scale by).
    Its utilisation carries the factor 'bert-99' for BERT (padding counted, not computed) and 'maxq'
    for a MaxQ submission (clocks and voltage lowered: the same utilisation draws less)."""
    u = compute_util(pair)
    if u is None:
        return None
    return Observation(
        hardware=hardware(pair),
        compute_util=u,
        watts=pair.system_power_w,
        devices=pair.accelerators,
        host_cpu_tdp_w=pair.host_cpu_tdp_w * pair.host_sockets,
        factors=(*(("bert-99",) if pair.workload == "bert-99" else ()), *(("maxq",) if pair.maxq else ())),
        label=f"{pair.public_id} {pair.workload} {pair.scenario}",
    )


def readable(pair: Pair, device_share: float = DEVICE_SHARE) -> bool:
    """Whether the accelerators dominate the system's nominal power enough to be read off its wall."""
    part = hardware(pair)
    return pair.accelerators * (part.tdp_w or 0.0) >= device_share * pair.host_cpu_tdp_w * pair.host_sockets


def cap_pairs(pairs: list[Pair], fit: Fit) -> list[CapPair]:
    """Each MaxQ submission's run against each MaxP (not MaxQ) run of the same part, board power,
    model and scenario, by their devices' draws (wall power less ``fit``'s host) and throughputs per
    device; kept where the MaxQ run drew less (its cap bound). Submissions of different rounds are
    paired too (software improves between rounds: each pair says so in its label)."""
    found = []
    usable = [(p, o) for p in pairs if (o := observation(p)) is not None]
    for q, oq in usable:
        if not q.maxq:
            continue
        for p, op in usable:
            same = (q.catalog_id, q.workload, q.scenario, oq.hardware.tdp_w)
            if p.maxq or (p.catalog_id, p.workload, p.scenario, op.hardware.tdp_w) != same:
                continue
            capped, uncapped = fit.measured_device_w(oq), fit.measured_device_w(op)
            if 0 < capped < uncapped:
                found.append(
                    CapPair(
                        power_ratio=capped / uncapped,
                        throughput_ratio=q.per_accelerator_samples_per_s / p.per_accelerator_samples_per_s,
                        group=q.public_id,
                        label=f"{q.public_id} ({q.version}) vs {p.public_id} ({p.version}) {q.workload} {q.scenario}",
                    )
                )
    return found
