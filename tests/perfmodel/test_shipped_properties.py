"""Properties of the shipped model on the shipped catalog and profiles (hypothesis): what any user's
prediction must obey, with the calibrated parameters and every real device figure (clocks, board power,
cache) in play, not a toy device."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.catalog import CatalogHardware, load
from app.contracts import OpClass, Precision
from app.perfmodel.device import device, peak
from app.perfmodel.model import RELAYOUT_BYTES, Case, relayout
from app.perfmodel.params import shipped as calibration
from app.perfmodel.predict import predict
from app.perfmodel.profile import TENSOR_CLASSES
from app.perfmodel.profile import shipped as profiles

CATALOG = sorted(load(), key=lambda h: h.id)
KEYS = sorted(profiles(), key=lambda k: (k[0], k[1].value, k[2].value))
PEAKS = ("peak_fp32_tflops", "peak_tf32_tflops", "peak_bf16_tflops", "peak_fp16_tflops", "peak_int8_tops")
EXAMPLES = settings(max_examples=40, deadline=None)

cases = st.tuples(st.sampled_from(CATALOG), st.sampled_from(KEYS), st.sampled_from([1, 8, 64, 256]))


def runtime_of(precision: Precision) -> str:
    return "onnxruntime-cpu" if precision is Precision.int8 else "torch-eager"


def scaled(part: CatalogHardware, what: str, factor: float) -> CatalogHardware:
    if what == "peak":
        return part.model_copy(update={f: getattr(part, f) * factor for f in PEAKS if getattr(part, f)})
    return part.model_copy(update={"memory_bandwidth_gb_s": (part.memory_bandwidth_gb_s or 0) * factor})


@EXAMPLES
@given(cases, st.sampled_from(["peak", "bandwidth"]), st.floats(1.01, 8.0))
def test_a_part_with_more_peak_or_bandwidth_is_never_slower(
    case: tuple[CatalogHardware, tuple, int], what: str, factor: float
) -> None:
    part, (workload, task, precision), batch = case
    runtime = runtime_of(precision)
    base = predict(workload, task, precision, batch, part, runtime=runtime)
    faster = predict(workload, task, precision, batch, scaled(part, what, factor), runtime=runtime)
    assert (base is None) == (faster is None)  # a figure the catalog lacks stays lacking
    if base is not None and faster is not None:
        assert faster.throughput >= base.throughput * (1 - 1e-9)


@EXAMPLES
@given(cases)
def test_no_prediction_is_above_the_roofline(case: tuple[CatalogHardware, tuple, int]) -> None:
    """Never faster than the matrix FLOPs at the precision's peak, nor than every byte the runtime moves
    at the bandwidth the cache can add at most: whatever the parameters, no unit runs above its peak.
    A graph runtime moves fewer bytes than eager's profile (fused chains), never more; eager moves more
    only by the transposes of its half-precision convolutions on a GPU."""
    part, (workload, task, precision), batch = case
    runtime = runtime_of(precision)
    found = predict(workload, task, precision, batch, part, runtime=runtime)
    dev = device(part, precision)
    if found is None or dev is None:
        return
    profile = profiles()[(workload, task, precision)]
    conv = sum(b.bytes.at(batch) for b in profile.buckets if b.op_class is OpClass.conv)
    transposed = RELAYOUT_BYTES * conv * relayout(Case(profile, dev, batch, runtime))
    assert found.breakdown.bytes <= (profile.bytes(batch) + transposed) * (1 + 1e-9)
    matrix_flops = sum(b.flops.at(batch) for b in profile.buckets if b.op_class in TENSOR_CLASSES)
    cache_gain = calibration().of(dev.kind)["cache_gain"]
    fastest = max(matrix_flops / dev.matrix, found.breakdown.bytes / (dev.bandwidth * (1 + cache_gain)))
    assert found.breakdown.seconds >= fastest * (1 - 1e-9)
    assert found.throughput <= batch / fastest * (1 + 1e-9)
    assert found.breakdown.utilisation_compute <= 1 and found.breakdown.utilisation_memory <= 1


@EXAMPLES
@given(cases)
def test_every_pair_is_answered_or_says_why(case: tuple[CatalogHardware, tuple, int]) -> None:
    from app.perfmodel.predict import why_not

    part, (workload, task, precision), batch = case
    found = predict(workload, task, precision, batch, part, runtime=runtime_of(precision))
    reason = why_not(workload, task, precision, part)
    assert (found is None) == (reason is not None)
    if reason is not None:
        assert f"no {precision.value} peak" in reason or "no fp32 peak" in reason or "bandwidth" in reason
        assert not peak(part, precision) or not part.peak_fp32_tflops or not part.memory_bandwidth_gb_s
    elif part.kind == "gpu" and part.memory_gb:
        assert found is not None and found.fits == (found.memory_bytes <= part.memory_gb * 1e9)
