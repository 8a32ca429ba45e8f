"""Reasons in words: the one place the recommender writes English about a rejection or an estimate.

A reason is a ``ReasonCode`` and its figures (name -> number or string). Ranking and the estimators
make ``Why`` tuples; only what an answer lists is rendered, here, into the wire ``Reason`` (code,
figures, text) and an estimate's one-line ``explanation``. Nothing reads the words back: code
that needs to know why (is this rejection about power alone?) looks at the codes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from app.contracts import PowerBasis, Reason, ReasonCode


def fewer_threads(cores: int) -> str:
    """What a step says where its weight products were modelled on fewer cores than the step's: a language
    model's (app/perfmodel/generation.py ``product_threads``), a zoo workload's linear layers at a small
    batch (app/perfmodel/model.py ``few_row_shares``)."""
    return (
        f"its fp32 weight products on {'one core' if cores == 1 else f'{cores} cores'}, as many as MKL splits "
        "a product of so few rows over on an AMD CPU (one row: one core); bf16 uses every core"
    )


Figures = Mapping[str, Any]


class Why(NamedTuple):
    """A reason before it is rendered (cheap: tens of thousands are made per answer, few are shown)."""

    code: ReasonCode
    figures: Figures


def why(code: ReasonCode, **figures: Any) -> Why:
    return Why(code, figures)


# A rejection's power figure says where it came from, unless it was measured.
_POWER_BASIS = {
    PowerBasis.tdp.value: "its TDP; nothing measured it",
    PowerBasis.transferred.value: "its TDP times the share the references drew",
    PowerBasis.capped.value: "its power cap",
    PowerBasis.modelled.value: "modelled from its utilisation",
}


def _basis(f: Figures) -> str:
    words = _POWER_BASIS.get(f.get("power_basis") or "")
    return f" ({words})" if words else ""


def _price_label(f: Figures) -> str:
    return f" ({f['price_label']})" if f.get("price_label") else ""


def _rate(samples_per_s: float) -> str:
    """A throughput with enough digits that two close figures do not read the same (4.98 and 5)."""
    return f"{samples_per_s:,.1f}" if samples_per_s >= 100 else f"{samples_per_s:.3g}"


def _at(f: Figures) -> str:
    return f"at batch {f['batch_size']}"


def _measured_lab(f: Figures) -> str:
    threads = f" at {f['threads']} threads" if f.get("threads") else ""
    said = f"measured on {f['hardware']}{threads}: {f['iterations']} timed iterations, 95% CI ±{f['error_pct']:.1f}%"
    return said + _machines(f)


def _machines(f: Figures) -> str:
    """Where a figure stands for another machine of its part, how far that machine may measure it."""
    if "machine_pct" not in f:
        return ""
    bound = "the host bounds this step" if f["regime"] == "host" else "the GPU bounds this step"
    return f"; another machine with this part measures within ±{f['machine_pct']:.0f}% ({bound})"


def _measured_public(f: Figures) -> str:
    if str(f["source"]).startswith("reference:"):
        said = f"measured by hwadvisor's own reference run ({f['source']}) at batch {f['batch_size']}"
        if f.get("systems", 1) > 1:
            said += f", the median of {f['systems']} runs on machines with this part"
        return said + _machines(f)
    systems = f.get("systems", 1)
    spread = f", median of {systems} systems (spread ±{f['error_pct']:.1f}%)" if systems > 1 else ""
    return f"published by {f['source']} at batch {f['batch_size']}{spread}"


def _predicted(f: Figures) -> str:
    how = "split learned from" if f["split_from"] == "fit" else "ridge-point split (too few to learn it) from"
    source = "the lab" if f["source"] == "lab" else f["source"]
    return (
        f"predicted by roofline scaling ({f['split']}) with the {how} {f['parts']} part(s) {source} measured: "
        f"{f['part_names']}; leave-one-out error ±{f['error_pct']:.0f}%"
    )


def _roofline(f: Figures) -> str:
    operators = f"{f['operators']} operators" + ("" if f["operators_given"] else " (the zoo's median; give operators)")
    runtime = f" for {f['runtime']}" if f.get("runtime") else ""
    return (
        f"modelled from specs only{runtime}: {f['flops_per_sample']:.3g} FLOP and {f['bytes_per_sample']:.3g} B "
        f"per sample at {f['precision']}, {operators}: step {f['step_ms']:,.2f} ms (compute {f['compute_ms']:,.2f}, "
        f"memory {f['memory_ms']:,.2f}, host {f['host_ms']:,.2f} ms); band ±{f['error_pct']:.0f}%"
    )


def _modelled(f: Figures) -> str:
    bound = {"host": "host-bound (per-operator dispatch)", "compute": "compute-bound", "memory": "memory-bound"}
    streamed = f.get("streamed_ms") or 0.0
    at_sms = (
        f", {streamed:,.2f} of it at the SMs' eager stream rate, not the DRAM's"
        if streamed >= 0.5 * f["memory_ms"] > 0
        else ""
    )
    probed = f" as this device's probe bounds them ({f['probed']})" if f.get("probed") else ""
    return (
        f"modelled from the {f['workload']} operator profile on the catalog's specs{probed}: "
        f"{bound.get(f['bound'], f['bound'])}, step {f['step_ms']:,.2f} ms (compute {f['compute_ms']:,.2f} ms, "
        f"memory {f['memory_ms']:,.2f} ms{at_sms}, host {f['host_ms']:,.2f} ms), calibrated by {f['calibrated_by']}"
        f"{' at batches far from this one' if f.get('beyond') else ''}; "
        f"band ±{f['error_pct']:.0f}% (90% of out-of-sample errors)"
    )


def _variant(f: Figures) -> str:
    what = f"{f['workload']} {f['variant']} ({f['description']}) on {f['runtime']} {f['precision']}"
    if f.get("ratio") is None:
        relative = (
            f"no fp32 torch-eager figure of the original {f['workload']} on {f['hardware']} at batch "
            f"{f['batch_size']} to compare it with"
        )
    else:
        basis = "measured" if f.get("baseline_kind") == "measured" else "estimated"
        relative = (
            f"{f['ratio']:.1f}x the fp32 torch-eager throughput of the original {f['workload']} on {f['hardware']} "
            f"at batch {f['batch_size']} ({basis})"
        )
    return f"{what}: {relative}; {f['caveat']}"


WORDS: dict[ReasonCode, Callable[[Figures], str]] = {
    # rejections
    ReasonCode.power_unknown: lambda f: (
        f"{f['hardware']} has no measured power and no TDP in the catalog, so the power budget cannot be checked "
        f"(set tdp_w: PUT /api/v1/catalog/{f.get('catalog_id') or '<id>'})"
    ),
    ReasonCode.over_power_budget: lambda f: (
        f"{f['hardware']} draws {f['power_w']:,.0f} W {_at(f)}{_basis(f)}, budget {f['budget_w']:,.0f} W"
    ),
    ReasonCode.over_system_power_budget: lambda f: (
        f"{f['devices']} x {f['hardware']} draw {f['system_power_w']:,.0f} W {_at(f)}{_basis(f)}, "
        f"system budget {f['budget_w']:,.0f} W"
    ),
    ReasonCode.latency_unknown: lambda f: f"no p99 latency known for {f['hardware']} {_at(f)}",
    ReasonCode.over_latency_slo: lambda f: (
        f"p99 latency {f['latency_p99_ms']:,.1f} ms {_at(f)} is over the {f['slo_ms']:g} ms SLO"
    ),
    ReasonCode.under_min_throughput: lambda f: (
        f"{f['devices']} x {f['hardware']} give {f['system_throughput_samples_per_s']:,.1f}/s {_at(f)}, "
        f"under the {f['min_throughput_samples_per_s']:,.0f}/s asked"
    ),
    ReasonCode.price_unknown: lambda f: (
        f"no price for {f['hardware']} "
        + (
            f"(set price_usd: PUT /api/v1/catalog/{f['catalog_id']})"
            if f.get("catalog_id")
            else "(it matches no catalog entry to price: hwadvisor machines set-catalog pins it to one)"
        )
    ),
    ReasonCode.over_price: lambda f: (
        f"{f['devices']} x ${f['price_usd']:,.0f}{_price_label(f)}"
        + (f" + {f['systems']} systems x ${f['systems_usd'] / f['systems']:,.0f}" if f.get("systems_usd") else "")
        + f" = ${f['total_usd']:,.0f} is over the ${f['max_price_usd']:,.0f} limit"
    ),
    ReasonCode.too_many_devices: lambda f: (
        f"{f['devices']} x {f['hardware']} (the most allowed) give {_rate(f['system_throughput_samples_per_s'])}/s "
        f"{_at(f)}, under the {_rate(f['needed_samples_per_s'])}/s the target needs"
    ),
    ReasonCode.misses_deadline: lambda f: (
        f"{f['devices']} x {f['hardware']} (the most allowed) train in {f['hours']:,.1f} h {_at(f)}, past the "
        f"{f['deadline_hours']:g} h deadline"
    ),
    ReasonCode.out_of_memory: lambda f: (
        f"needs {f['needed_gb']:,.1f} GB at batch {f['batch_size']} (weights and activations, a language model's "
        "KV cache, and in training gradients and optimiser state), "
        f"{f['hardware']} has {f['memory_gb']:,.0f} GB"
    ),
    ReasonCode.kv_out_of_memory: lambda f: (
        f"needs {f['needed_gb']:,.1f} GB per device on {f['devices']} x {f['hardware']} (the most a copy may "
        f"span): weights {f['weights_gb']:,.1f} GB + KV cache {f['kv_cache_gb']:,.1f} GB for {f['batch_size']} "
        f"sequence(s) of {f['context']:,} tokens + activations {f['activations_gb']:,.1f} GB; it has "
        f"{f['memory_gb']:,.0f} GB"
    ),
    ReasonCode.over_ttft_slo: lambda f: (
        f"time to first token {f['ttft_ms']:,.1f} ms on {f['devices']} x {f['hardware']} is over the "
        f"{f['slo_ms']:g} ms SLO"
    ),
    ReasonCode.over_tpot_slo: lambda f: (
        f"time per output token {f['tpot_ms']:,.1f} ms on {f['devices']} x {f['hardware']} {_at(f)} is over the "
        f"{f['slo_ms']:g} ms SLO"
    ),
    # explanations
    ReasonCode.measured_lab: _measured_lab,
    ReasonCode.measured_lab_median: lambda f: _measured_lab(
        {**f, "hardware": f"{f['devices']} lab devices of this part (median)"}
    ),
    ReasonCode.measured_public: _measured_public,
    ReasonCode.interpolated: lambda f: (
        f"interpolated on {f['hardware']} between {f['axis']} {f['low_x']:g} and {f['high_x']:g} "
        f"(measured {f['low_throughput']:,.1f} and {f['high_throughput']:,.1f}/s)" + _machines(f)
    ),
    ReasonCode.predicted: _predicted,
    ReasonCode.roofline: _roofline,
    ReasonCode.modelled: _modelled,
    ReasonCode.power_modelled: lambda f: (
        f"power {f['power_w']:,.0f} W modelled from utilisation (compute {f['compute_util']:.0%}, "
        f"memory {f['memory_util']:.0%})"
    ),
    ReasonCode.power_capped: lambda f: (
        f"power-capped at {f['cap_w']:.0f} W (allowed {f['min_w']:.0f}-{f['max_w']:.0f} W) from "
        f"{f['uncapped_w']:.0f} W: throughput x{f['factor']:.2f} by the cap rule learned from MLPerf MaxQ/MaxP "
        "pairs; uncapped it is"
    ),
    ReasonCode.power_tdp: lambda f: "power is the board TDP (not measured)",
    ReasonCode.power_transferred: lambda f: "power is its TDP times the share of TDP the references drew",
    ReasonCode.power_twin: lambda f: (
        f"power {f['power_w']:,.0f} W as this part read running {f['twin']} at this batch (median of "
        f"{f['readings']} reading(s): the same tensor units doing the same work"
        + (", and the figure is calibrated by it)" if f["calibrates"] else ")")
    ),
    ReasonCode.power_missing: lambda f: "power unknown: not measured, and no catalog entry with a TDP",
    ReasonCode.data_parallel: lambda f: (
        f"{f['devices']} x {f['hardware']} data-parallel {_at(f)} each over {f['link']}: "
        f"{f['gradient_mb']:,.0f} MB all-reduced a step, {f['efficiency']:.0%} of {f['devices']} x one device "
        "by the scaling model"
    ),
    ReasonCode.lab_link: lambda f: (
        f"the all-reduce over {f['link']} takes x{f['factor']:.2g} the scaling model's time, as the lab's "
        f"{f['runs']} data-parallel run(s) over it measured"
    ),
    ReasonCode.lab_scaling_measured: lambda f: (
        f"{f['devices']} devices {_at(f)}: the lab measured this config's scaling efficiency, {f['efficiency']:.0%} "
        f"(median of {f['runs']} run(s))"
    ),
    ReasonCode.tensor_parallel: lambda f: (
        f"{f['whole_gb']:,.1f} GB does not fit one {f['hardware']}: each copy split {f['shards']} ways "
        f"(tensor parallel: heads, MLP and vocabulary), {f['per_device_gb']:,.1f} GB a device, two all-reduces "
        f"a layer over {f['link']} ({f['allreduce_ms']:,.2f} ms a decode step)"
    ),
    ReasonCode.llm_modelled: lambda f: (
        f"modelled from the model's operators at this shape on the catalog's specs: decode step "
        f"{f['decode_ms']:,.2f} ms ({f['decode_bound']}-bound), prefill {f['prefill_ms']:,.1f} ms "
        f"({f['prefill_bound']}-bound), x{f['factor']:.2f} by the lab's calibration of its kind"
        + (
            " and no less: the weights and KV cache a decode step reads take that long at the memory's bandwidth"
            if f.get("decode_floored")
            else ""
        )
        + (f"; {fewer_threads(f['decode_product_threads'])}" if f.get("decode_product_threads") else "")
        + f"; band ±{f['error_pct']:.0f}% ({f['band_kind']})"
    ),
    ReasonCode.variant: _variant,
    ReasonCode.runtime_stack: lambda f: (
        f"{f['runtime']} {f['precision']} on {f['hardware']}: its own fp32 torch-eager measurement "
        f"({_rate(f['base_throughput'])}/s at batch {f['batch_size']}) x{f['factor']:.2f}, the stack factor measured "
        f"beside fp32 torch-eager on {f['devices']} other lab device(s) ({f['pairs']} pairs); "
        f"band ±{f['error_pct']:.0f}%"
    ),
    ReasonCode.graph_uncalibrated: lambda f: (
        f"{f['runtime']} is a graph runtime on a GPU that no lab device measured, and no measurement checks the "
        f"model's fusion for it: MLPerf's TensorRT int8 ran {f['low']:.1f}-{f['high']:.1f}x faster than the model's "
        "graph runtime on the GPUs both cover, and other graph runtimes fuse less than TensorRT "
        "(docs/ACCURACY.md); measure it on one GPU to calibrate it"
    ),
    ReasonCode.sharded: lambda f: (
        f"needs {f['whole_gb']:,.1f} GB on one device {_at(f)}: "
        + ("weights, gradients and optimiser state" if f["parallelism"] == "sharded_data_parallel" else "layers")
        + f" split over {f['shards']} devices, {f['per_device_gb']:,.1f} GB each"
    ),
}


NAMED = 10
"""How many names a list in words gives before saying how many more there are."""


def first_names(names: Sequence[str], shown: int = NAMED, sep: str = ", ") -> str:
    """The first ``shown`` of ``names`` joined by ``sep``, and how many more: a whole catalog's unpriced
    parts would otherwise be one line of a hundred names."""
    head = sep.join(names[:shown])
    return head + (f" and {len(names) - shown} more" if len(names) > shown else "")


def text(reason: Why) -> str:
    return WORDS[reason.code](reason.figures)


def to_reason(reason: Why) -> Reason:
    return Reason(code=reason.code, figures=dict(reason.figures), text=text(reason))


def explanation(reasons: Sequence[Why]) -> str:
    """An estimate's reasons as one line: '; ' between them, and what a cap was taken from follows its words."""
    line, previous = "", None
    for reason in reasons:
        words = text(reason)
        line += words if previous is None else (" " if previous is ReasonCode.power_capped else "; ") + words
        previous = reason.code
    return line


def power_why(basis: PowerBasis | None) -> list[Why]:
    """Where an estimate's power figure came from, when it was not measured (nothing to say when it was)."""
    if basis is PowerBasis.measured or basis is PowerBasis.capped:
        return []
    if basis is PowerBasis.tdp:
        return [Why(ReasonCode.power_tdp, {})]
    if basis is PowerBasis.transferred:
        return [Why(ReasonCode.power_transferred, {})]
    return [Why(ReasonCode.power_missing, {})]
