"""How many times a CPU's product of few rows reads its weights (app/perfmodel/weight_passes.py), and a
language model's step with them (app/perfmodel/generation.py ``weight_reads``)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.catalog import get
from app.catalog.probed import as_probed
from app.contracts import LLM_PRESETS, Precision, Task
from app.perfmodel import generation, model, weight_passes
from app.perfmodel.device import device
from app.perfmodel.params import shipped as calibration
from app.perfmodel.profile import shipped as shipped_profiles
from app.perfmodel.weight_passes import MKL_AMD, MKL_AVX512_INTEL, PathPasses, path_of
from benchmarks.linear_rows import MATRIX_ROWS, path_passes

SHAPE = LLM_PRESETS["llama3_1b"].shape
XEON = "xeon-platinum-8480plus"


def test_the_blas_path_is_mkls_code_for_the_cpu_and_fp32_alone() -> None:
    xeon, epyc = get(XEON), get("epyc-9654")
    assert path_of(xeon, Precision.fp32) == MKL_AVX512_INTEL
    assert path_of(epyc, Precision.fp32) == MKL_AMD  # MKL's code for other vendors, whatever the units
    assert path_of(xeon, Precision.bf16) is None  # oneDNN
    assert path_of(get("h100-sxm5-80gb"), Precision.fp32) is None
    sierra_forest = get("xeon-6780e")
    assert (sierra_forest.isa or "").startswith("AVX2")
    assert path_of(sierra_forest, Precision.fp32) is None  # MKL's AVX2 code on an Intel CPU: unmeasured
    # a machine whose probe lists no avx512f (a hypervisor that hides it) takes MKL's AVX2 code
    masked = as_probed(xeon, ["sse4_2", "avx", "avx2", "fma", "amx_tile", "amx_bf16"])
    assert path_of(masked, Precision.fp32) is None
    assert path_of(as_probed(xeon, ["avx2", "avx512f", "amx_tile", "amx_bf16"]), Precision.fp32) == MKL_AVX512_INTEL


def test_the_shipped_passes_are_what_the_lab_vms_showed() -> None:
    """Session 59's Intel VM (benchmarks/linear_rows.py --passes): 1-3 rows one pass, 4-6 two, 7-9 three,
    13-15 five; from 16 rows the matrix kernel, about two passes (its weights packed once per call).
    Session 60's Zen 4 VM (MKL's AMD code): each of 1-3 rows a pass, from 4 rows the matrix kernel."""
    passes = [weight_passes.passes(MKL_AVX512_INTEL, rows) for rows in range(1, 16)]
    assert passes == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5]
    for rows in (16, 64, 4096):
        assert 1.5 < weight_passes.passes(MKL_AVX512_INTEL, rows) < 3
    assert weight_passes.passes(None, 4) == weight_passes.passes("no-such-path", 4) == 1.0
    # a zoo step takes the few-row kernel's passes alone: the matrix kernel's packing is in its eager factor
    assert weight_passes.few_row_passes(MKL_AVX512_INTEL, 4) == 2.0
    assert weight_passes.few_row_passes(MKL_AVX512_INTEL, 16) == weight_passes.few_row_passes(None, 4) == 1.0
    amd = [weight_passes.passes(MKL_AMD, rows) for rows in range(1, 4)]
    assert amd == [1, 2, 3]
    for rows in (4, 64, 4096):
        assert 1.3 < weight_passes.passes(MKL_AMD, rows) < 2.5
    assert weight_passes.few_row_passes(MKL_AMD, 3) == 3.0
    assert weight_passes.few_row_passes(MKL_AMD, 4) == 1.0


def test_one_row_reads_the_weights_once() -> None:
    PathPasses(few_rows=[1, 1, 2], matrix=2.0, source="test")
    for few_rows in ([2, 2], [1, 0.5], []):
        with pytest.raises(ValidationError):
            PathPasses(few_rows=few_rows, matrix=2.0, source="test")


def test_the_benchmark_reads_the_passes_up_to_the_matrix_kernels_first_row_count() -> None:
    one = 2.5e-3
    few = [one * p for p in (1.0, 1.02, 1.07, 2.05, 2.1, 2.1, 3.1, 3.1, 3.0, 4.0, 4.0, 4.1, 5.1, 5.1, 5.2, 3.5)]
    matrix = [2.0 * one + 1.8e-4 * rows for rows in MATRIX_ROWS]
    found = path_passes(few, matrix)
    assert found is not None
    assert found[0] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5]
    assert found[1] == pytest.approx(2.0)
    rising = [one * (1 + 0.3 * i) for i in range(16)]  # no count runs faster than the one before
    assert path_passes(rising, matrix) is None


WEIGHTS = generation.COMPONENTS.index("weights")


def decode(part: str, precision: Precision, batch: int, runtime: str = "torch-eager") -> generation.Step:
    """The 1B model's decode step on one thread of catalog part ``part``, 128 tokens cached."""
    found = generation.step(SHAPE, Task.decode, precision, batch, 128, get(part), runtime=runtime, threads=1)
    assert found is not None
    return found


def test_a_decode_on_an_intel_cpu_reads_its_fp32_weights_as_often_as_its_rows_take_passes() -> None:
    """Batch 4 reads the weights twice, batch 1-3 once; a bf16 step (oneDNN) and ONNX Runtime's (its own
    kernels) read them once."""

    def weights_part(part: str, precision: Precision, batch: int, runtime: str = "torch-eager") -> float:
        return decode(part, precision, batch, runtime).parts[WEIGHTS]

    assert weights_part(XEON, Precision.fp32, 3) == pytest.approx(weights_part(XEON, Precision.fp32, 1), rel=0.01)
    assert weights_part(XEON, Precision.fp32, 4) == pytest.approx(2 * weights_part(XEON, Precision.fp32, 3), rel=0.01)
    for part, precision, runtime in (
        (XEON, Precision.bf16, "torch-eager"),
        (XEON, Precision.fp32, "onnxruntime-cpu"),
        ("epyc-9654", Precision.bf16, "torch-eager"),
    ):
        once, four = weights_part(part, precision, 1, runtime), weights_part(part, precision, 4, runtime)
        assert four == pytest.approx(once, rel=0.01), (part, precision, runtime)
    one, many = (decode(XEON, Precision.fp32, batch) for batch in (3, 4))
    assert many.seconds > 1.5 * one.seconds  # the step, calibrated, pays the second pass


def test_a_decode_on_an_amd_cpu_reads_its_fp32_weights_once_per_row_until_the_matrix_kernel() -> None:
    """MKL's AMD code streams the weights once per row at 1-3 rows and packs them once per call from 4 on:
    session 60's Zen 4 VM decoded the 1B model at batch 3 in 1.27x its batch-4 time (1,010 and 794 ms)."""
    steps = {batch: decode("epyc-9654", Precision.fp32, batch) for batch in (1, 2, 3, 4)}
    weights = {batch: found.parts[WEIGHTS] for batch, found in steps.items()}
    assert weights[2] == pytest.approx(2 * weights[1], rel=0.01)
    assert weights[3] == pytest.approx(3 * weights[1], rel=0.01)
    assert weights[1] < weights[4] < weights[2]  # the matrix kernel's packing, less than two rows' passes
    assert steps[4].seconds < steps[3].seconds


def test_a_zoo_mlp_reads_its_weights_as_often_as_the_cpus_few_row_kernel_passes() -> None:
    """FCN-S's linear layers take one row per sample: on an Intel CPU its batch 4 reads the weights twice
    and runs at about batch 2's samples/s (session 59's Intel VM: 1.89-2.09x batch 1's at batch 2-4, where
    reading them once gave 3.3x); on an AMD CPU each of its first three samples reads them anew (Zen 4
    VMs: batch 2 at 0.82-1.01x batch 1's samples/s), and from the fourth the matrix kernel's packing is in
    the eager kernel factor."""
    profile = shipped_profiles()[("fcn_s", Task.infer, Precision.fp32)]

    def per_second(part: str, batch: int) -> float:
        dev = device(get(part), Precision.fp32)
        assert dev is not None
        return (
            batch / model.step(profile, dev, batch, calibration().of("cpu"), runtime="torch-eager", threads=1).seconds
        )

    intel = {batch: per_second(XEON, batch) for batch in (1, 3, 4, 6)}
    assert intel[4] / intel[3] == pytest.approx(2 / 3, rel=0.1)  # a second pass for a fourth row
    assert intel[6] / intel[3] == pytest.approx(1.0, rel=0.15)  # 4-6 rows: two passes
    assert intel[3] / intel[1] > 2.5
    amd = {batch: per_second("epyc-9654", batch) for batch in (1, 3, 4)}
    assert amd[3] / amd[1] == pytest.approx(1.0, rel=0.1)  # three samples, three passes
    assert amd[4] / amd[3] > 1.5  # the matrix kernel: the weights once per call
