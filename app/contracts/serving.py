"""Serving a language model: the question (model, prompt and output lengths, load, SLOs, budgets) and
the answer (per part and precision: devices, tensor parallelism, TTFT, TPOT, tokens/s, tokens per
joule, dollars per million tokens), or why a part cannot serve it (with the memory figures).

It is a plan (app/contracts/plan.py) for a language model: the same objectives, costs and cluster,
the same kind of rejections, with the figures LLM serving is judged by. Units are in the names.
"""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from app.contracts.catalog import Price
from app.contracts.common import Name, NonNegative, Positive, Precision, Strict
from app.contracts.llm import LlmShape
from app.contracts.plan import CatalogId, Cluster, CostBreakdown, Costs, PlanObjective
from app.contracts.recommend import Answer, EstimateKind, HardwareRef, Reason

SERVING_PRECISIONS = (Precision.bf16, Precision.fp16, Precision.fp32, Precision.int8, Precision.int4)
"""int8 and int4 are weight-only (weights in 8 or 4 bits, math and KV cache in 16 bits: llama.cpp's Q8_0
and Q4_0, AWQ/GPTQ-style on GPUs)."""


class ServingRequest(Strict):
    """Serve ``workload`` (a zoo preset: llama3_8b) or a custom ``shape`` to ``concurrency`` sequences
    in flight, or at ``request_rate_per_s``, each a prompt of ``prompt_tokens`` and an answer of
    ``output_tokens``, within the SLOs and budgets."""

    workload: Name | None = Field(default=None, description="A language-model preset of the zoo.")
    shape: LlmShape | None = Field(default=None, description="A custom shape, instead of a preset.")
    name: Name = Field(default="custom", description="What to call a custom shape.")
    prompt_tokens: int = Field(default=1024, ge=1, le=1_048_576)
    output_tokens: int = Field(default=256, ge=1, le=1_048_576)
    concurrency: int | None = Field(
        default=None, ge=1, le=1_000_000, description="Sequences in flight (users waiting on an answer)."
    )
    request_rate_per_s: Positive | None = Field(default=None, le=1e7, description="Requests arriving per second.")
    ttft_slo_ms: Positive | None = Field(default=None, le=3_600_000, description="Time to first token.")
    tpot_slo_ms: Positive | None = Field(default=None, le=3_600_000, description="Time per output token.")
    precisions: list[Precision] | None = Field(
        default=None,
        max_length=8,
        description=(
            "Unset: each part's first of bf16 and fp16 (weights stored so). "
            "int8 and int4: weight-only quantisation (the math and the KV cache in 16 bits)."
        ),
    )
    hardware: list[CatalogId] | None = Field(
        default=None, max_length=1000, description="Only these catalog parts; unset: every GPU of the catalog."
    )
    include_cpus: bool = Field(default=False, description="Consider the catalog's CPUs too.")
    max_batch: int = Field(default=256, ge=1, le=65_536, description="Most sequences one copy decodes together.")
    power_budget_w: Positive | None = Field(default=None, description="Per device.")
    system_power_budget_w: Positive | None = Field(default=None, description="All devices together.")
    max_price_usd: Positive | None = Field(default=None, description="Purchase of all devices and systems.")
    objective: PlanObjective = PlanObjective.cheapest
    costs: Costs = Field(default_factory=Costs)
    cluster: Cluster = Field(default_factory=Cluster)
    limit: int = Field(default=20, ge=1, le=500)

    @model_validator(mode="after")
    def _one_model_one_load(self) -> Self:
        if (self.workload is None) == (self.shape is None):
            raise ValueError("give exactly one of workload (a language-model preset) or shape")
        if self.concurrency is not None and self.request_rate_per_s is not None:
            raise ValueError("give at most one of concurrency or request_rate_per_s")
        for precision in self.precisions or ():
            if precision not in SERVING_PRECISIONS:
                raise ValueError(f"a language model is served in {', '.join(SERVING_PRECISIONS)}, not {precision}")
        return self

    @property
    def model_name(self) -> str:
        return self.workload if self.workload is not None else self.name


class ServingCandidate(Answer):
    rank: int = Field(ge=1)
    hardware: HardwareRef
    precision: Precision
    runtime: Name
    tensor_parallel: int = Field(ge=1, description="Devices one copy of the model is split over.")
    replicas: int = Field(ge=1, description="Independent copies serving requests.")
    devices: int = Field(ge=1, description="tensor_parallel x replicas.")
    systems: int = Field(ge=1)
    batch_per_replica: int = Field(ge=1, description="Sequences one copy decodes together.")
    link: str | None = Field(description="What the tensor-parallel all-reduces cross, in words.")
    kind: EstimateKind
    error_pct: NonNegative = Field(description="Half-width of the band of the step times, percent.")
    band_kind: str
    ttft_ms: Positive = Field(description="Prefill of one prompt on one copy (no queueing).")
    tpot_ms: Positive = Field(description="Time per output token a sequence sees, prefills of others included.")
    decode_step_ms: Positive = Field(description="One decode step of the batch alone.")
    output_tokens_per_s: Positive = Field(description="Generated tokens per second, all devices.")
    output_tokens_per_s_per_sequence: Positive = Field(description="1000 / tpot_ms.")
    requests_per_s: Positive = Field(description="Requests completed per second, all devices.")
    concurrency: int = Field(ge=1, description="Sequences in flight: replicas x batch_per_replica.")
    memory_needed_gb: NonNegative = Field(description="Per device: weights + KV cache + activations.")
    weights_gb: NonNegative = Field(description="Per device.")
    kv_cache_gb: NonNegative = Field(description="Per device, at the batch and the full prompt + output.")
    memory_gb: NonNegative | None = Field(description="What one device has.")
    power_w: NonNegative | None = Field(description="Per device, modelled from its utilisation while decoding.")
    system_power_w: NonNegative | None
    output_tokens_per_j: NonNegative | None
    usd_per_million_tokens: NonNegative | None = Field(
        description="Owned: (purchase + energy + hosting over the period) / the tokens generated in it."
    )
    cloud_usd_per_million_tokens: NonNegative | None = None
    price: Price | None = Field(description="Per device.")
    costs: CostBreakdown
    notes: list[Reason] = Field(default_factory=list)


class ServingRejection(Answer):
    hardware: HardwareRef
    precision: Precision
    tensor_parallel: int = Field(ge=1, description="The device count per copy the reasons are about.")
    reasons: list[Reason]


class ServingPlan(Answer):
    query: ServingRequest
    shape: LlmShape
    candidates: list[ServingCandidate]
    rejected: list[ServingRejection]
    assumptions: list[str]
    notes: list[str] = Field(default_factory=list)
