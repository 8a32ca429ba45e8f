"""Published results and the lab's changes to catalog entries."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from app.contracts.common import (
    Label,
    Name,
    Positive,
    Precision,
    Strict,
    Task,
    Text,
    WorkloadName,
)
from app.contracts.machine import MachineSpec
from app.contracts.results import Result, split_legacy_workload

PUBLIC_SOURCE = r"public:[a-z0-9][a-z0-9_.\-]{0,60}"
REFERENCE_SOURCE = r"reference:hwadvisor-[a-z0-9][a-z0-9_.\-]{0,50}"


class PublicResult(Strict):
    """A measured result from outside the lab, kept apart from the lab's under its source: 'public:...'
    for what someone else published, 'reference:hwadvisor-...' for a reference run hwadvisor ships."""

    source: Annotated[str, Field(pattern=rf"^({PUBLIC_SOURCE}|{REFERENCE_SOURCE})$")]
    hardware_id: Name
    hardware_name: Label
    workload: WorkloadName = Field(description="The bare name; 'resnet50/train' is read as the task too.")
    task: Task | None = None
    unit: Annotated[str, Field(max_length=32)] = "samples/s"
    runtime: Name
    precision: Precision
    batch_size: int = Field(ge=1, le=100_000_000, description="Recommendation models (NCF) use millions.")
    devices: int = Field(default=1, ge=1, le=1024)
    throughput_samples_per_s: Positive = Field(description="For all the devices together.")
    latency_p99_ms: Positive | None = None
    mean_power_w: Positive | None = None
    note: Text | None = None

    @model_validator(mode="before")
    @classmethod
    def _legacy_workload(cls, data: Any) -> Any:
        return split_legacy_workload(data)


class ReferenceRunInfo(Strict):
    id: Label
    suite: Name
    harness: Text = Field(description="How the engine measured then: what changed between the runs, if anything.")
    gpu_uuid: Label | None = Field(
        default=None, description="The GPU it ran on: runs of one reference may be on different machines of one kind."
    )


class ReferenceResult(Strict):
    run: Label = Field(description="The id of the run (ReferenceRunInfo) it was measured in.")
    settled: bool = Field(
        description="Measured after the GPU's clock and power had settled (its median step more than a quarter "
        "second after the config began, or by a harness that warms a GPU up for a second): only these stand as "
        "evidence for recommendations."
    )
    result: Result


class ReferenceRun(Strict):
    """A machine hwadvisor measured itself, shipped with the package (app/catalog/data/reference/):
    its spec, its software, every result, and what to know about them."""

    source: Annotated[str, Field(pattern=rf"^{REFERENCE_SOURCE}$")]
    captured: Annotated[str, Field(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
    hardware_id: Name = Field(description="The catalog entry of the GPU measured.")
    device: Annotated[str, Field(pattern=r"^cuda:[0-9]{1,2}$")] = "cuda:0"
    machine: MachineSpec = Field(description="The first run's machine (the others are of the same kind).")
    runs: list[ReferenceRunInfo] = Field(min_length=1)
    results: list[ReferenceResult] = Field(min_length=1)
    notes: list[Text] = Field(default_factory=list)


class PublicImportReport(Strict):
    imported: int
    source: str


Peak = Annotated[float, Field(ge=0.001, le=1e6, description="TFLOP/s (int8: TOP/s), dense.")]
Watts = Annotated[float, Field(ge=1, le=100_000)]
PriceDate = Annotated[str, Field(pattern=r"^[0-9]{4}-(0[1-9]|1[0-2])(-(0[1-9]|[12][0-9]|3[01]))?$")]
"""YYYY-MM or YYYY-MM-DD."""
FormFactor = Literal["sxm", "oam", "pcie", "mezzanine", "board", "soc"]
"""How a GPU is built into a machine: an NVIDIA SXM module, an OCP Accelerator Module, a PCIe add-in
card, a mezzanine module (MXM, a Grace Hopper superchip module), a GPU soldered onto a system board,
or a GPU integrated in a system-on-chip (Jetson, GB10, an APU)."""
FORM_FACTOR_TEXT = "sxm, oam, pcie (add-in card), mezzanine (MXM or a superchip module), board (soldered), soc."
LinkBandwidth = Annotated[
    float,
    Field(
        ge=1,
        le=100_000,
        description="GPU-to-GPU link bandwidth per GPU (NVLink, Infinity Fabric, Xe Link), GB/s, both directions "
        "together, all its links summed; for a bridged PCIe board, with its bridge partner(s).",
    ),
]
MAX_ALIASES = 16
Alias = Annotated[str, Field(min_length=1, max_length=200, pattern=r"\S")]


class CatalogPatch(Strict):
    """Fields a user may set on a catalog entry (their own price quote, a spec the datasets lack)."""

    kind: Literal["gpu", "cpu"] | None = None
    vendor: Annotated[Label, Field(max_length=64)] | None = None  # the column's width
    name: Label | None = None
    peak_fp32_tflops: Peak | None = None
    peak_tf32_tflops: Peak | None = None
    peak_bf16_tflops: Peak | None = None
    peak_fp16_tflops: Peak | None = None
    peak_int8_tops: Peak | None = None
    memory_gb: Annotated[float, Field(ge=0.001, le=1e6)] | None = None
    memory_bandwidth_gb_s: Annotated[float, Field(ge=0.1, le=1e6)] | None = None
    tdp_w: Watts | None = None
    power_limit_min_w: Watts | None = None
    power_limit_max_w: Watts | None = None
    nvlink_gb_s: LinkBandwidth | None = None
    form_factor: FormFactor | None = Field(default=None, description=FORM_FACTOR_TEXT)
    price_usd: Annotated[float, Field(ge=0, le=1e9)] | None = None
    price_date: PriceDate | None = Field(
        default=None, description="When your price was quoted; unset with a new price_usd, the day it was set."
    )
    aliases: list[Alias] | None = Field(
        default=None,
        max_length=MAX_ALIASES,
        description="Device names (a GPU's driver name, a CPU's model name) that are this entry, matched "
        "exactly when a machine enrols or reports its spec. Added to a shipped entry's own aliases; "
        "a new list replaces the lab's earlier one.",
    )
    note: Text | None = None

    @model_validator(mode="after")
    def _names_are_not_null(self) -> CatalogPatch:
        for name in ("kind", "vendor", "name", "aliases"):
            if name in self.model_fields_set and getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null (leave it out to keep it)")
        return self


class CatalogMatch(Strict):
    """What a device name matches in the lab's catalog (shipped entries, the lab's entries and aliases)."""

    name: Annotated[str, Field(max_length=200)]
    kind: Literal["gpu", "cpu"] | None = Field(description="What the name was taken for; null if for neither.")
    catalog_id: Name | None
    code: Literal["alias", "pattern", "ambiguous", "generic", "unknown"] = Field(
        description="alias or pattern: how it matched; ambiguous, generic (a hypervisor's CPU name), unknown: why not."
    )
    note: Text


class Price(Strict):
    """What a part costs and how that is known; one rule makes it for the catalog, the recommender
    and the dashboard (app/catalog/price.py)."""

    usd: Annotated[float, Field(ge=0)]
    basis: Literal["quote", "lab", "release"] = Field(
        description="quote: a dated price from a dataset; lab: a price the lab set; release: the launch price, "
        "the only figure there is (it may be far from what the part costs now)."
    )
    date: str | None = Field(description="When it was quoted or set, or (release) when the part came out.")
    source: str | None = Field(description="Where the figure comes from (the entry's sources['price_usd']).")
    label: str = Field(description="How it was known, in words: 'quoted 2024-06', 'release price, 2021-04'.")
