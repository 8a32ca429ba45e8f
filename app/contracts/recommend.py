"""What a user asks the recommender and what it answers: workload specs, estimates, candidates."""

from __future__ import annotations

import uuid
from enum import StrEnum
from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from app.contracts.catalog import Price
from app.contracts.common import (
    AllowedDeviceKinds,
    AllowedPrecisions,
    AllowedRuntimes,
    DeviceId,
    DeviceKind,
    Name,
    NonNegative,
    OpClass,
    Positive,
    Precision,
    Strict,
    Task,
    VariantName,
    WorkloadName,
)
from app.contracts.results import split_legacy_workload, workload_label


class ReasonCode(StrEnum):
    """Why a candidate was rejected, or how an estimate was made. Each code has one phrasing,
    written in app/recommender/reasons.py from the reason's figures; nothing reads the words back."""

    # rejections
    power_unknown = "power_unknown"
    over_power_budget = "over_power_budget"
    over_system_power_budget = "over_system_power_budget"
    latency_unknown = "latency_unknown"
    over_latency_slo = "over_latency_slo"
    under_min_throughput = "under_min_throughput"
    price_unknown = "price_unknown"
    over_price = "over_price"
    out_of_memory = "out_of_memory"
    too_many_devices = "too_many_devices"
    misses_deadline = "misses_deadline"
    kv_out_of_memory = "kv_out_of_memory"
    over_ttft_slo = "over_ttft_slo"
    over_tpot_slo = "over_tpot_slo"
    # explanations
    measured_lab = "measured_lab"
    measured_lab_median = "measured_lab_median"
    measured_public = "measured_public"
    interpolated = "interpolated"
    predicted = "predicted"
    roofline = "roofline"
    modelled = "modelled"
    power_modelled = "power_modelled"
    power_capped = "power_capped"
    power_tdp = "power_tdp"
    power_transferred = "power_transferred"
    power_twin = "power_twin"
    power_missing = "power_missing"
    data_parallel = "data_parallel"
    sharded = "sharded"
    lab_link = "lab_link"
    lab_scaling_measured = "lab_scaling_measured"
    tensor_parallel = "tensor_parallel"
    llm_modelled = "llm_modelled"
    variant = "variant"
    runtime_stack = "runtime_stack"
    graph_uncalibrated = "graph_uncalibrated"


Figure = int | float | str | None


class Answer(Strict):
    """A model the server only writes, from what it validated on the way in (every answer's text
    came through a request or an upload that refused NUL): not walked again for NUL characters,
    which was a tenth of a recommendation's time."""

    refuses_nul: ClassVar[bool] = False


class Reason(Answer):
    """A code and the figures it is about; ``text`` is the two rendered in words, for people."""

    code: ReasonCode
    figures: dict[str, Figure] = Field(default_factory=dict)
    text: str


Flops = Annotated[float, Field(ge=0, le=1e18, description="FLOP (1e18: an exaFLOP).")]
Bytes = Annotated[float, Field(ge=0, le=1e15, description="Bytes (1e15: a petabyte).")]
AGREEMENT = 0.01
"""How far a custom workload's totals may differ from the sum of its buckets (rounding)."""


class CustomBucket(Strict):
    """Operators of one class and a similar arithmetic intensity, summed, as a profile's bucket
    (app/perfmodel/profile.py): each quantity is ``per_sample * batch + per_step``."""

    op_class: OpClass
    flops_per_sample: Flops
    flops_per_step: Flops = 0.0
    bytes_per_sample: Bytes
    bytes_per_step: Bytes = Field(default=0.0, description="Bytes read once per step whatever the batch (weights).")
    kernels: float = Field(ge=0, le=10**7, description="Kernels one step launches.")
    operators: int = Field(default=1, ge=1, le=10**7)


class CustomWorkload(Strict):
    """A workload outside the zoo, described by its cost per sample, and, when it was profiled
    (an ONNX file: POST /api/v1/workloads/onnx-profile), by its operator classes."""

    name: Name
    flops_per_sample: Annotated[float, Field(gt=0, le=1e18, description="FLOP per sample (1e18: an exaFLOP).")]
    bytes_per_sample: Annotated[float, Field(gt=0, le=1e15, description="Bytes moved per sample (1e15: a petabyte).")]
    parameters: int = Field(ge=0, le=10**15)
    operators: int | None = Field(
        default=None,
        ge=1,
        le=10**7,
        description="Operators (kernels) one step runs; eager PyTorch pays a host cost for each, which is what "
        "batch-1 latency is made of. Unknown: the median of the zoo's models at the same task.",
    )
    buckets: list[CustomBucket] | None = Field(
        default=None,
        min_length=1,
        max_length=256,
        description="Its profile per operator class; given, the model runs these instead of one GEMM-like bucket. "
        "flops_per_sample and bytes_per_sample must then be their totals at batch 1.",
    )
    profiled_at: Precision = Field(
        default=Precision.fp32,
        description="The precision the buckets' bytes and activation_bytes_per_sample were counted at; the model "
        "rescales them to the precision it predicts.",
    )
    activation_bytes_per_sample: Bytes | None = Field(
        default=None, description="Peak live activations per sample, for the memory fit; unknown: bytes_per_sample."
    )

    @model_validator(mode="after")
    def _totals_match_buckets(self) -> CustomWorkload:
        if self.buckets is None:
            return self
        flops = sum(b.flops_per_sample + b.flops_per_step for b in self.buckets)
        moved = sum(b.bytes_per_sample + b.bytes_per_step for b in self.buckets)
        for field, total, given in (("flops", flops, self.flops_per_sample), ("bytes", moved, self.bytes_per_sample)):
            if abs(total - given) > AGREEMENT * max(total, given):
                raise ValueError(
                    f"{field}_per_sample is {given:g} but the buckets sum to {total:g} at batch 1; "
                    f"give their sum (or leave the buckets out)"
                )
        return self


class OnnxProfileRead(Strict):
    """An ONNX file profiled: the custom workload to pass on, and how the file was read."""

    custom: CustomWorkload
    precision: Precision = Field(description="What the bytes were counted at (custom.profiled_at).")
    exported_as: str = Field(description="The element types the file stores its weights in.")
    nodes: int = Field(ge=0)
    weights_bytes: NonNegative
    unknown_operators: dict[str, int] = Field(
        default_factory=dict,
        description="Op types not understood (counted as data movement with their bytes only), with node counts.",
    )
    made_with: str
    fusion: str


class Constraints(Strict):
    power_budget_w: Positive | None = Field(default=None, description="Per device.")
    system_power_budget_w: Positive | None = None
    device_count: int = Field(default=1, ge=1, le=1024)
    latency_p99_slo_ms: Positive | None = None
    min_throughput_samples_per_s: Positive | None = None
    max_price_usd: Positive | None = None
    precisions: AllowedPrecisions = None
    runtimes: AllowedRuntimes = None
    device_kinds: AllowedDeviceKinds = None
    variants: list[VariantName] | None = Field(
        default=None,
        max_length=64,
        description="With allow_variants, only these variants are offered (none: every one measured).",
    )


class Scope(StrEnum):
    owned = "owned"
    catalog = "catalog"


class WorkloadSpec(Strict):
    """What a user asks the recommender: a workload, its task and batch, an objective and limits."""

    workload: Name | None = None
    custom: CustomWorkload | None = None
    task: Task = Task.infer
    batch_size: int | None = Field(default=None, ge=1, le=100_000_000, description="Unset: the recommender picks.")
    objective: Name = Field(
        default="throughput", description="An objective's name (GET /api/v1/registry lists them; unknown: 422)."
    )
    constraints: Constraints = Field(default_factory=Constraints)
    scope: Scope = Field(
        default=Scope.catalog,
        description="catalog (the default): the lab's machines and every catalog part nobody here owns yet, "
        "predicted where nothing measured it; owned: the lab's machines alone.",
    )
    electricity_usd_per_kwh: NonNegative = Field(default=0.15, le=10, description="For cost per million samples.")
    amortisation_years: float = Field(default=3.0, ge=0.1, le=20, description="Hardware price spread over this life.")
    limit: int = Field(default=50, ge=1, le=1000, description="At most this many ranked candidates.")
    allow_variants: bool = Field(
        default=False,
        description="Offer model variants measured in the lab (int8-static, pruned-50, lowrank-25) beside the "
        "original model. A variant's figures are speed only: its accuracy is not known, so it is never the "
        "original's equal; each such candidate says so and what it is relative to the original.",
    )

    @property
    def name(self) -> str:
        """The workload's bare name, zoo or custom: 'bert_base'."""
        return self.workload if self.workload is not None else self.custom.name  # type: ignore[union-attr]

    @property
    def label(self) -> str:
        """For people: 'bert_base/infer'."""
        return workload_label(self.name, self.task)

    @model_validator(mode="after")
    def _one_workload(self) -> WorkloadSpec:
        if (self.workload is None) == (self.custom is None):
            raise ValueError("give exactly one of workload (a zoo name) or custom")
        return self


class EstimateKind(StrEnum):
    measured = "measured"
    interpolated = "interpolated"
    predicted = "predicted"


class PowerBasis(StrEnum):
    measured = "measured"
    transferred = "transferred"
    tdp = "tdp"
    capped = "capped"
    modelled = "modelled"


class HardwareRef(Answer):
    """A device the lab owns (machine_id + device) or catalog hardware nobody here owns yet (catalog_id only)."""

    name: str
    kind: DeviceKind
    owned: bool
    catalog_id: str | None = None
    machine_id: uuid.UUID | None = None
    machine_name: str | None = None
    device: DeviceId | None = None


MAX_REFERENCES = 10
"""References listed by name per estimate: a lab of hundreds of devices calibrates an estimate with
all of them, and naming each in every candidate made answers megabytes long."""


class Estimate(Answer):
    """A throughput with its kind and error band; power with where it came from."""

    kind: EstimateKind
    source: str = Field(description="'lab' (this lab's measurements), 'public:...' or 'model' (specs alone).")
    throughput_samples_per_s: Positive
    throughput_low: NonNegative
    throughput_high: NonNegative
    error_pct: NonNegative = Field(
        description="The band, percent of the throughput: throughput_low = throughput / (1 + e), "
        "throughput_high = throughput x (1 + e) (symmetric in ratio, as the bands are calibrated)."
    )
    latency_p99_ms: NonNegative | None = None
    power_w: NonNegative | None = None
    power_basis: PowerBasis | None = None
    power_cap_w: Positive | None = None
    memory_gb: NonNegative | None = Field(
        default=None,
        description="What the config needs on one device, GB: weights and activations at the batch, and for "
        "training gradients and optimiser state; None where nothing modelled it.",
    )
    references: list[str] = Field(
        default_factory=list,
        description="Hardware a prediction was transferred from or calibrated on: the first "
        "``MAX_REFERENCES`` by name; ``references_total`` says how many there are.",
    )
    references_total: int = Field(default=0, ge=0, description="How many references there are in all.")
    explanation: str = Field(description="``why`` in words.")
    why: list[Reason] = Field(default_factory=list, description="How the estimate was made, as codes and figures.")


class CandidateConfig(Answer):
    hardware: HardwareRef
    runtime: Name
    precision: Precision
    batch_size: int = Field(ge=1)
    threads: int | None = None
    variant: str | None = Field(default=None, description="The model variant; none is the original model.")
    caveat: str | None = Field(
        default=None, description="What a variant's figures do not say: 'speed only; check accuracy on your data'."
    )


class Candidate(CandidateConfig):
    rank: int = Field(ge=1)
    estimate: Estimate
    throughput_per_w: NonNegative | None = None
    energy_per_sample_j: NonNegative | None = None
    price_usd: NonNegative | None = Field(default=None, description="Per device: ``price.usd``.")
    price: Price | None = Field(
        default=None, description="How the price is known: a dated quote, the lab's price, or a release price."
    )
    cost_per_million_samples_usd: NonNegative | None = None
    system_throughput_samples_per_s: NonNegative
    system_power_w: NonNegative | None = None
    pareto: bool = Field(description="On the front of throughput vs power: nothing else is faster for less power.")
    notes: list[Reason] = Field(
        default_factory=list,
        description="What to know beyond the estimate, as codes: price_unknown when there is no price (its cost "
        "figures are then null, and a cost objective ranks it after every priced candidate).",
    )


class Rejection(CandidateConfig):
    estimate: Estimate
    reasons: list[Reason]


class Recommendation(Answer):
    query: WorkloadSpec
    candidates: list[Candidate]
    rejected: list[Rejection]
    notes: list[str] = Field(default_factory=list)


class PredictionRequest(Strict):
    """One hardware and one config: catalog_id, or machine_id with device, for a workload."""

    catalog_id: Name | None = None
    machine_id: uuid.UUID | None = None
    device: DeviceId | None = None
    workload: WorkloadName | None = None
    custom: CustomWorkload | None = None
    task: Task = Task.infer
    runtime: Name
    precision: Precision
    batch_size: int = Field(ge=1, le=1_000_000)
    threads: int | None = Field(default=None, ge=1, le=4096)
    variant: VariantName | None = Field(
        default=None, description="A model variant the lab measured (speed only); none: the original model."
    )

    @model_validator(mode="before")
    @classmethod
    def _legacy_workload(cls, data: Any) -> Any:
        return split_legacy_workload(data)

    @model_validator(mode="after")
    def _one_hardware_and_workload(self) -> PredictionRequest:
        if (self.catalog_id is None) == (self.machine_id is None):
            raise ValueError("give exactly one of catalog_id or machine_id (with device)")
        if (self.workload is None) == (self.custom is None):
            raise ValueError("give exactly one of workload (a zoo name) or custom")
        return self

    @property
    def name(self) -> str:
        """The workload's bare name, zoo or custom."""
        return self.workload if self.workload is not None else self.custom.name  # type: ignore[union-attr]
