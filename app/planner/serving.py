"""Serving a language model: per catalog part and precision, the fewest devices that hold the model
and its KV cache and carry the load within the SLOs, with TTFT, TPOT, tokens/s, tokens per joule and
dollars per million tokens.

A copy of the model spans ``tensor_parallel`` devices (the fewest, within one system, whose memory
holds its share of the weights, the KV cache of one full-length sequence and the prefill's
activations); it decodes ``batch`` sequences together. One copy serves requests at

    r = 1 / (prefill(P) + O x decode_step(batch, P + O/2) / batch)

(each request is one prefill of its prompt and O decode steps shared by the batch), a sequence sees
a token every ``decode_step / (1 - r x prefill)`` (other requests' prefills interrupt the decoding),
and its first token after ``prefill(P)``. Step times are app/perfmodel/generation.py's. The load sets
the copies: ``concurrency`` sequences in flight need ceil(concurrency / batch) copies; a request
rate needs ceil(rate / r). Of each part and precision, the batch best under the objective is listed.
Costs are the planner's (app/planner/costs.py), spread over the tokens generated in the period.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from app.catalog import CatalogHardware
from app.catalog.price import price_of
from app.contracts import (
    LLM_PRESETS,
    DeviceKind,
    EstimateKind,
    HardwareRef,
    LlmShape,
    PlanObjective,
    Precision,
    Price,
    ReasonCode,
    ServingCandidate,
    ServingPlan,
    ServingRejection,
    ServingRequest,
    Task,
)
from app.db import catalog as lab_catalog
from app.errors import InvalidInput
from app.perfmodel import generation, llm
from app.perfmodel.device import device
from app.perfmodel.scaling import ring_link
from app.planner import costs as pricing
from app.planner.scale import systems
from app.recommender import reasons as words
from app.recommender.power import modelled_draw
from app.recommender.reasons import Why, why

GB = 1e9
USABLE_MEMORY = 0.9
"""Share of a device's memory a serving process may fill: the runtime, its allocator's slack and the
communication buffers take the rest."""
RUNTIME = "torch-compile"
"""Steps are modelled as a compiled runtime runs them (no Python per operator: CUDA graphs on a GPU),
as serving engines do; the lab measures eager and compiled both."""
DEFAULT_PRECISIONS = (Precision.bf16, Precision.fp16)
"""Unasked, a part is planned in the first of these it has: weights in 16 bits, as served."""
MAX_REJECTED = 200


def shape_of(request: ServingRequest) -> LlmShape:
    if request.shape is not None:
        return request.shape
    preset = LLM_PRESETS.get(request.workload or "")
    if preset is None:
        raise InvalidInput(
            f"{request.workload!r} is not a language-model preset",
            hint=f"use one of {', '.join(LLM_PRESETS)} or give a shape (layers, hidden, heads, kv_heads, ...)",
        )
    return preset.shape


@dataclass(slots=True)
class Option:
    """One part x precision x tensor parallelism x batch, sized for the load."""

    hardware: CatalogHardware
    precision: Precision
    shards: int
    batch: int
    replicas: int
    systems: int
    ttft_s: float
    tpot_s: float
    decode: generation.Step
    prefill: generation.Step
    requests_per_s: float
    output_tokens_per_s: float
    memory: generation.Memory
    power_w: float | None
    bill: pricing.Bill
    price: Price | None
    link: str | None
    notes: list[Why] = field(default_factory=list)

    @property
    def devices(self) -> int:
        return self.shards * self.replicas

    @property
    def system_power_w(self) -> float | None:
        return None if self.power_w is None else self.power_w * self.devices

    @property
    def tokens_per_j(self) -> float | None:
        power = self.system_power_w
        return None if not power else self.output_tokens_per_s / power

    @property
    def usd_per_million_tokens(self) -> float | None:
        total = self.bill.total_usd
        tokens = self.output_tokens_per_s * self.bill.running_hours * 3600
        return None if total is None or tokens <= 0 else total / tokens * 1e6

    @property
    def cloud_usd_per_million_tokens(self) -> float | None:
        rate = self.bill.cloud_usd_per_hour
        return None if rate is None else rate / (self.output_tokens_per_s * 3600) * 1e6


@dataclass(slots=True)
class Refused:
    hardware: CatalogHardware
    precision: Precision
    shards: int
    reasons: list[Why]


def plan(session: Session, request: ServingRequest) -> ServingPlan:
    catalog = lab_catalog.entries(session)
    return plan_over(catalog, request)


def plan_over(catalog: dict[str, CatalogHardware], request: ServingRequest) -> ServingPlan:
    """The plan over these catalog entries (the lab's, layered on the shipped ones)."""
    shape = shape_of(request)
    notes: list[str] = []
    parts = _parts(catalog, request, notes)
    best: list[Option] = []
    refused: list[Refused] = []
    for part in parts:
        for precision in _precisions(part, request):
            found = _best(part, precision, shape, request)
            if isinstance(found, Option):
                best.append(found)
            else:
                refused.append(found)
    key = _key(request.objective)
    ranked = sorted(best, key=key)
    if len(ranked) > request.limit:
        notes.append(f"{len(ranked)} feasible options; the best {request.limit} are listed (raise limit for more)")
    if len(refused) > MAX_REJECTED:
        notes.append(f"{len(refused)} options rejected; the first {MAX_REJECTED} are listed")
    return ServingPlan(
        query=request,
        shape=shape,
        candidates=[_candidate(rank, o) for rank, o in enumerate(ranked[: request.limit], start=1)],
        rejected=[_rejection(r) for r in refused[:MAX_REJECTED]],
        assumptions=assumptions(request, shape),
        notes=notes,
    )


def _parts(catalog: dict[str, CatalogHardware], request: ServingRequest, notes: list[str]) -> list[CatalogHardware]:
    if request.hardware is not None:
        missing = [h for h in request.hardware if h not in catalog]
        if missing:
            raise InvalidInput(
                f"no catalog entry {', '.join(repr(m) for m in missing)}",
                hint=lab_catalog.id_hint(catalog, *missing),
            )
        return [catalog[h] for h in request.hardware]
    kinds = ("gpu", "cpu") if request.include_cpus else ("gpu",)
    parts = [p for p in catalog.values() if p.kind in kinds]
    usable = [p for p in parts if _precisions(p, request)]
    if len(usable) < len(parts):
        notes.append(f"{len(parts) - len(usable)} parts have no peak or bandwidth for the precisions asked: left out")
    return usable


def _precisions(part: CatalogHardware, request: ServingRequest) -> list[Precision]:
    """The asked precisions the part has figures for (weight-only int8 and int4: for the 16 bits their
    math runs in); unasked, its first of bf16 and fp16 (a V100 has no bf16)."""
    if request.precisions is not None:
        return [q for q in request.precisions if device(part, generation.math_precision(part, q)) is not None]
    return [q for q in DEFAULT_PRECISIONS if device(part, q) is not None][:1]


def _capacity(part: CatalogHardware) -> float | None:
    """Bytes a serving process may use on one device; None for a CPU (the host's memory is the machine's)."""
    if part.kind != "gpu" or not part.memory_gb:
        return None
    return part.memory_gb * GB * USABLE_MEMORY


def _shards(shape: LlmShape, request: ServingRequest) -> Iterator[int]:
    """Tensor-parallel degrees to try: powers of two within one system and the device limit."""
    most = min(request.cluster.devices_per_system, request.cluster.max_devices)
    t = 1
    while t <= most:
        if generation.shard(shape, t) is not None:
            yield t
        t *= 2


def _batches(request: ServingRequest) -> list[int]:
    most = request.max_batch if request.concurrency is None else min(request.max_batch, request.concurrency)
    found = [2**i for i in range(most.bit_length()) if 2**i <= most]
    if most not in found:
        found.append(most)
    return found


def _needed(
    shape: LlmShape, precision: Precision, batch: int, request: ServingRequest, shards: int
) -> generation.Memory:
    """One device of a copy: its weights, the KV cache of ``batch`` full-length sequences, and the larger of
    the decode step's and one prompt's prefill activations."""
    context = request.prompt_tokens + request.output_tokens
    # the last token's decode step holds the cache of every token before it and its own
    decode = generation.memory(shape, Task.decode, precision, batch, context - 1, shards)
    part = generation.shard(shape, shards) or shape
    prefill = llm.activations_bytes(part, Task.prefill, 1, request.prompt_tokens, precision)
    return generation.Memory(decode.weights, decode.kv_cache, max(decode.activations, prefill))


def _best(part: CatalogHardware, precision: Precision, shape: LlmShape, request: ServingRequest) -> Option | Refused:
    capacity = _capacity(part)
    shards = None
    tried = 1
    for t in _shards(shape, request):
        tried = t
        if capacity is None or _needed(shape, precision, 1, request, t).total <= capacity:
            shards = t
            break
    if shards is None:
        memory = _needed(shape, precision, 1, request, tried)
        return Refused(part, precision, tried, [_no_room(part, memory, tried, 1, request)])
    # one prompt's prefill, whatever the batch: worked out once per part, precision and split
    prefill = generation.step(
        shape, Task.prefill, precision, 1, request.prompt_tokens, part, shards=shards, runtime=RUNTIME
    )
    assert prefill is not None
    fitting: list[tuple[int, generation.Memory]] = []
    no_room: list[Why] = []  # why no larger batch could help either
    for batch in _batches(request):
        memory = _needed(shape, precision, batch, request, shards)
        if capacity is not None and memory.total > capacity:
            no_room = [_no_room(part, memory, shards, batch, request)]
            break
        fitting.append((batch, memory))
    if request.ttft_slo_ms is not None and prefill.seconds * 1000 > request.ttft_slo_ms:
        fitting = fitting[-1:]  # no batch shortens the prefill: the largest says why, as each would
    asked = [_spread(batch, request) for batch, _ in fitting]
    context = request.prompt_tokens + request.output_tokens // 2
    decodes = generation.steps_at(shape, Task.decode, precision, asked, context, part, shards=shards, runtime=RUNTIME)
    options: list[Option] = []
    last: list[Why] = []
    for (_, memory), batch, decode in zip(fitting, asked, decodes, strict=True):
        assert decode is not None
        found = _sized(part, precision, shape, request, shards, batch, memory, prefill, decode)
        if isinstance(found, Option):
            options.append(found)
        else:
            last = found
    if not options:
        return Refused(part, precision, shards, [*last, *no_room])
    return min(options, key=_key(request.objective))


def _no_room(part: CatalogHardware, memory: generation.Memory, shards: int, batch: int, request: ServingRequest) -> Why:
    return why(
        ReasonCode.kv_out_of_memory,
        hardware=part.name,
        devices=shards,
        batch_size=batch,
        context=request.prompt_tokens + request.output_tokens,
        needed_gb=memory.total / GB,
        weights_gb=memory.weights / GB,
        kv_cache_gb=memory.kv_cache / GB,
        activations_gb=memory.activations / GB,
        memory_gb=part.memory_gb,
    )


def _spread(batch: int, request: ServingRequest) -> int:
    """The batch each copy decodes: ``batch``, or with a given concurrency, its sequences spread evenly
    over the copies that many at most ``batch`` each need."""
    if request.concurrency is None:
        return batch
    return math.ceil(request.concurrency / math.ceil(request.concurrency / batch))


def _sized(
    part: CatalogHardware,
    precision: Precision,
    shape: LlmShape,
    request: ServingRequest,
    shards: int,
    batch: int,
    memory: generation.Memory,
    prefill: generation.Step,
    decode: generation.Step,
) -> Option | list[Why]:
    """The option at this batch (``_spread``'s) with the copies the load needs, or why it cannot serve."""
    output = request.output_tokens
    if request.concurrency is not None:
        replicas = math.ceil(request.concurrency / batch)
    per_request = prefill.seconds + output * decode.seconds / batch
    rate = 1.0 / per_request
    busy = rate * prefill.seconds
    tpot = decode.seconds / (1.0 - busy)
    if request.concurrency is None:
        replicas = 1 if request.request_rate_per_s is None else math.ceil(request.request_rate_per_s / rate)
    devices = replicas * shards
    at = {"hardware": part.name, "devices": devices, "batch_size": batch}
    if request.ttft_slo_ms is not None and prefill.seconds * 1000 > request.ttft_slo_ms:
        return [why(ReasonCode.over_ttft_slo, **at, ttft_ms=prefill.seconds * 1000, slo_ms=request.ttft_slo_ms)]
    if request.tpot_slo_ms is not None and tpot * 1000 > request.tpot_slo_ms:
        return [why(ReasonCode.over_tpot_slo, **at, tpot_ms=tpot * 1000, slo_ms=request.tpot_slo_ms)]
    if devices > request.cluster.max_devices:
        throughput = request.cluster.max_devices // shards * rate * output
        needed = (request.request_rate_per_s or rate * replicas) * output
        return [
            why(
                ReasonCode.too_many_devices,
                **at,
                system_throughput_samples_per_s=throughput,
                needed_samples_per_s=needed,
            )
        ]
    power = _power(part, decode)
    if request.power_budget_w is not None and (power is None or power > request.power_budget_w):
        if power is None:
            return [why(ReasonCode.power_unknown, hardware=part.name, catalog_id=part.id)]
        return [
            why(
                ReasonCode.over_power_budget,
                **at,
                power_w=power,
                power_basis="modelled",
                budget_w=request.power_budget_w,
            )
        ]
    n_systems = systems(devices, part, request.cluster)
    system_power = None if power is None else power * devices
    if request.system_power_budget_w is not None and (
        system_power is None or system_power > request.system_power_budget_w
    ):
        return [
            why(
                ReasonCode.over_system_power_budget,
                **at,
                system_power_w=system_power or 0.0,
                power_basis="modelled",
                budget_w=request.system_power_budget_w,
            )
        ]
    price = price_of(part)
    if request.max_price_usd is not None:
        if price is None:
            return [why(ReasonCode.price_unknown, hardware=part.name, catalog_id=part.id)]
        total = devices * price.usd + n_systems * request.costs.system_usd
        if total > request.max_price_usd:
            return [
                why(
                    ReasonCode.over_price,
                    devices=devices,
                    price_usd=price.usd,
                    price_label=price.label,
                    systems=n_systems,
                    systems_usd=n_systems * request.costs.system_usd,
                    total_usd=total,
                    max_price_usd=request.max_price_usd,
                )
            ]
    owned = pricing.bill(
        request.costs,
        devices=devices,
        systems=n_systems,
        price_usd=price.usd if price is not None else None,
        system_power_w=system_power,
        cloud_usd_per_device_hour=request.costs.cloud_usd_per_device_hour.get(part.id),
    )
    link = ring_link(part, shards) if shards > 1 else None
    option = Option(
        hardware=part,
        precision=precision,
        shards=shards,
        batch=batch,
        replicas=replicas,
        systems=n_systems,
        ttft_s=prefill.seconds,
        tpot_s=tpot,
        decode=decode,
        prefill=prefill,
        requests_per_s=rate * replicas,
        output_tokens_per_s=rate * replicas * output,
        memory=memory,
        power_w=power,
        bill=owned,
        price=price,
        link=link.why if link is not None else None,
    )
    option.notes = _notes(option, shape, request)
    return option


def _power(part: CatalogHardware, decode: generation.Step) -> float | None:
    """A device's draw while decoding (the step the time goes to), from its utilisation at the rate the
    step is stated at: a decode the language-model calibration says runs twice the bare model's speed
    moves its bytes twice as fast, as the recommender's figures do (``modelled_draw``). None where the
    catalog gives the part no power figure."""
    drawn, _, _ = modelled_draw(part, decode.breakdown, speedup=decode.breakdown.seconds / decode.seconds)
    return drawn


def _notes(o: Option, shape: LlmShape, request: ServingRequest) -> list[Why]:
    found = [
        why(
            ReasonCode.llm_modelled,
            decode_ms=o.decode.seconds * 1000,
            decode_bound=o.decode.breakdown.bound,
            prefill_ms=o.prefill.seconds * 1000,
            prefill_bound=o.prefill.breakdown.bound,
            factor=o.decode.factor,
            decode_floored=o.decode.floored,
            decode_product_threads=o.decode.product_threads,
            error_pct=math.expm1(o.decode.band) * 100,
            band_kind=o.decode.band_kind,
        )
    ]
    if o.shards > 1:
        whole = _needed(shape, o.precision, o.batch, request, 1)
        found.append(
            why(
                ReasonCode.tensor_parallel,
                hardware=o.hardware.name,
                shards=o.shards,
                whole_gb=whole.total / GB,
                per_device_gb=o.memory.total / GB,
                link=o.link or "the network",
                allreduce_ms=o.decode.allreduce_s * 1000,
            )
        )
    return found


def _key(objective: PlanObjective) -> Callable[[Option], tuple[float, ...]]:
    inf = math.inf

    def cost(o: Option) -> float:
        per_token = o.usd_per_million_tokens
        return per_token if per_token is not None else inf

    first: dict[PlanObjective, Callable[[Option], float]] = {
        PlanObjective.cheapest: cost,
        PlanObjective.fastest: lambda o: -o.output_tokens_per_s,
        PlanObjective.least_energy: lambda o: -(o.tokens_per_j or 0.0),
    }
    by = first[objective]
    return lambda o: (by(o), o.devices, -o.output_tokens_per_s)


def _ref(part: CatalogHardware) -> HardwareRef:
    return HardwareRef(
        name=part.name, kind=DeviceKind.cpu if part.kind == "cpu" else DeviceKind.cuda, owned=False, catalog_id=part.id
    )


def _candidate(rank: int, o: Option) -> ServingCandidate:
    return ServingCandidate(
        rank=rank,
        hardware=_ref(o.hardware),
        precision=o.precision,
        runtime=RUNTIME,
        tensor_parallel=o.shards,
        replicas=o.replicas,
        devices=o.devices,
        systems=o.systems,
        batch_per_replica=o.batch,
        link=o.link,
        kind=EstimateKind.predicted,
        error_pct=math.expm1(max(o.decode.band, o.prefill.band)) * 100,
        band_kind=o.decode.band_kind,
        ttft_ms=o.ttft_s * 1000,
        tpot_ms=o.tpot_s * 1000,
        decode_step_ms=o.decode.seconds * 1000,
        output_tokens_per_s=o.output_tokens_per_s,
        output_tokens_per_s_per_sequence=1.0 / o.tpot_s,
        requests_per_s=o.requests_per_s,
        concurrency=o.batch * o.replicas,
        memory_needed_gb=o.memory.total / GB,
        weights_gb=o.memory.weights / GB,
        kv_cache_gb=o.memory.kv_cache / GB,
        memory_gb=o.hardware.memory_gb if o.hardware.kind == "gpu" else None,
        power_w=o.power_w,
        system_power_w=o.system_power_w,
        output_tokens_per_j=o.tokens_per_j,
        usd_per_million_tokens=o.usd_per_million_tokens,
        cloud_usd_per_million_tokens=o.cloud_usd_per_million_tokens,
        price=o.price,
        costs=o.bill.to_contract(),
        notes=[words.to_reason(n) for n in o.notes],
    )


def _rejection(r: Refused) -> ServingRejection:
    return ServingRejection(
        hardware=_ref(r.hardware),
        precision=r.precision,
        tensor_parallel=r.shards,
        reasons=[words.to_reason(w) for w in r.reasons],
    )


def assumptions(request: ServingRequest, shape: LlmShape) -> list[str]:
    c, cluster = request.costs, request.cluster
    load = (
        f"{request.concurrency} sequences in flight"
        if request.concurrency is not None
        else f"{request.request_rate_per_s:g} requests/s"
        if request.request_rate_per_s is not None
        else "one sequence at a time"
    )
    quantised = [
        "int8 and int4 are weight-only quantisation: weights stored as llama.cpp's Q8_0 and Q4_0 "
        f"({llm.WEIGHT_BYTES[Precision.int8]:.2f} and {llm.WEIGHT_BYTES[Precision.int4]:.2f} bytes each), "
        "dequantised to the part's bf16 (else fp16) math, KV cache in 16 bits; the dequantisation's own work is "
        "not counted; speed and memory only: check the model's quality at that quantisation on your data"
    ]
    asked = set(request.precisions or ())
    return [
        f"{load}, each a {request.prompt_tokens:,}-token prompt and a {request.output_tokens:,}-token answer; "
        f"a copy holds the KV cache of its batch at {request.prompt_tokens + request.output_tokens:,} tokens",
        f"memory: weights at the precision ({shape.parameters / 1e9:,.2f} B parameters), KV cache "
        f"({shape.kv_bytes_per_token(2) / 1024:,.0f} KiB per token in 16 bits), activations; "
        f"{USABLE_MEMORY:.0%} of a device's memory usable",
        "tensor parallelism within one system, Megatron-style (heads, MLP and vocabulary split; two all-reduces "
        "of the hidden state per layer over the system's link); copies beyond that serve independent requests",
        "step times: the model's operators at this shape on the catalog's specs (app/perfmodel/generation.py), "
        f"as a compiled runtime runs them ({RUNTIME}: no per-operator Python), calibrated by the lab's own "
        "prefill and decode runs on the kind of device where it measured some (docs/ACCURACY.md); the band says which",
        "a copy alternates one prefill per request with decode steps of its batch (no chunked prefill, no "
        "speculative decoding, no prefix cache); TTFT is one prefill without queueing",
        f"ownership period {c.period_years:g} years, running {c.utilisation:.0%} of it; electricity "
        f"${c.electricity_usd_per_kwh:g}/kWh on the devices' own draw while decoding; hosting "
        f"${c.hosting_usd_per_kw_year:g}/kW-year; ${c.system_usd:,.0f} per system; $/million tokens spreads "
        "them over the tokens generated in the running hours",
        f"{cluster.devices_per_system} GPUs per system; at most {cluster.max_devices} devices",
    ] + (quantised if asked & set(generation.WEIGHT_ONLY) else [])
