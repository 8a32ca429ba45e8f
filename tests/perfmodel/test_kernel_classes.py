"""benchmarks/kernel_classes.py reads a GPU's profiled kernels against the model: a class's rate is its
profile bytes over its kernels' time per SM per clock, and only memory-bound kernels count as such."""

from __future__ import annotations

import pytest

from app.catalog import get
from app.contracts import Precision, Task
from app.perfmodel.device import device
from app.perfmodel.predict import profile_of
from benchmarks.kernel_classes import split


def test_a_class_rate_is_its_profile_bytes_over_its_kernels_time_per_sm_per_clock() -> None:
    row = {
        "workload": "resnet50",
        "precision": "fp32",
        "batch": 256,
        "kernel_us": 10_000.0,
        "groups": [
            ["void cudnn::bn_fw_inf_1C11_kernel_NCHW", 53, 4_000.0],
            ["void at::native::vectorized_elementwise_kernel)", 65, 2_000.0],
            ["sm80_xmma_fprop_implicit_gemm_f32f32_f32f32_f32_nchwkcrs_nchw", 40, 4_000.0],
        ],
    }
    found = split(row, "h200-sxm-141gb")
    assert found is not None
    profile = profile_of("resnet50", Task.infer, Precision.fp32)
    dev = device(get("h200-sxm-141gb"), Precision.fp32)
    assert profile is not None and dev is not None
    norm = sum(b.bytes.per_sample * 256 + b.bytes.per_step for b in profile.buckets if b.op_class.value == "norm")
    assert found.rates["norm"] == pytest.approx(norm / 4e-3 / (dev.units * dev.clock_hz))
    assert set(found.rates) == {"norm", "elementwise"}
    assert found.memory_bound_ms == pytest.approx(6.0) and found.kernels_ms == pytest.approx(10.0)
    assert found.model_memory_ms > 0 and found.model_compute_ms > 0
    # a CPU has no SMs or boost clock to read a rate per
    assert split(row, "xeon-platinum-8480plus") is None
