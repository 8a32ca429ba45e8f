"""The performance model's behaviour on a small known dataset: properties that must hold for any
device, and a calibration that recovers the parameters it was given."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.catalog import get, load
from app.contracts import Precision, Task
from app.perfmodel import bands, calibrate
from app.perfmodel.calibrate import PRIORS, Observation, fit, predict, traffic_group
from app.perfmodel.device import Device, blas_share, device
from app.perfmodel.model import (
    PARAMETERS,
    RELAYOUT_BYTES,
    RELAYOUT_KERNELS,
    Case,
    Params,
    fused,
    scaled,
    stacked,
    step,
)
from app.perfmodel.observations import from_public, median_per_part
from app.perfmodel.params import shipped as shipped_calibration
from app.perfmodel.profile import Bucket, Linear, Memory, OpClass, Profile
from benchmarks.accuracy import GPU_SOURCES, _profile, _public

PARAMS = Params("gpu", {p: PRIORS["gpu"][p][0] for p in PARAMETERS})


def profile(name: str = "toy", conv: float = 4e9, moved: float = 3e7, weights: float = 1e8) -> Profile:
    """A small CNN-like step: convolutions, a normalisation pass and an elementwise pass."""
    return Profile(
        workload=name,
        task=Task.infer,
        precision=Precision.bf16,
        shape={"image": 224},
        buckets=[
            Bucket(
                op_class=OpClass.conv,
                flops=Linear(per_sample=conv),
                bytes=Linear(per_sample=moved, per_step=weights),
                kernels=50,
                operators=50,
            ),
            Bucket(
                op_class=OpClass.norm,
                flops=Linear(per_sample=2e7),
                bytes=Linear(per_sample=8e7),
                kernels=50,
                operators=50,
            ),
            Bucket(
                op_class=OpClass.elementwise,
                flops=Linear(per_sample=1e7),
                bytes=Linear(per_sample=6e7),
                kernels=70,
                operators=70,
            ),
        ],
        memory=Memory(weights=weights, activations=Linear(per_sample=5e7)),
        batches=(1, 8),
        made_with="hand-made for the tests",
    )


def gpu(
    matrix: float = 300e12, vector: float = 40e12, bandwidth: float = 2e12, cache: float = 50e6, units: float = 100
) -> Device:
    return Device("toy-gpu", "Toy GPU", "gpu", matrix, vector, bandwidth, cache, units, 400.0, 100.0, 400.0)


peaks = st.floats(1e12, 2e15)
widths = st.floats(1e11, 1e13)
batches = st.sampled_from([1, 2, 8, 32, 256])


@settings(max_examples=60, deadline=None)
@given(matrix=peaks, vector=st.floats(1e12, 1e14), bandwidth=widths, batch=batches, factor=st.floats(1.0, 10.0))
def test_more_peak_or_bandwidth_is_never_slower(
    matrix: float, vector: float, bandwidth: float, batch: int, factor: float
) -> None:
    base = step(profile(), gpu(matrix, vector, bandwidth), batch, PARAMS, runtime="torch-eager").seconds
    for faster in (
        gpu(matrix * factor, vector, bandwidth),
        gpu(matrix, vector * factor, bandwidth),
        gpu(matrix, vector, bandwidth * factor),
    ):
        assert step(profile(), faster, batch, PARAMS, runtime="torch-eager").seconds <= base * (1 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(matrix=peaks, vector=st.floats(1e12, 1e14), bandwidth=widths, batch=batches)
def test_never_above_the_roofline(matrix: float, vector: float, bandwidth: float, batch: int) -> None:
    p, dev = profile(), gpu(matrix, vector, bandwidth)
    found = step(p, dev, batch, PARAMS, runtime="torch-eager")
    compute = sum(b.flops.at(batch) / (matrix if b.op_class is OpClass.conv else vector) for b in p.buckets)
    memory = p.bytes(batch) / (bandwidth * (1 + PARAMS["cache_gain"]))
    assert found.seconds >= max(compute, memory)
    assert batch / found.seconds <= batch / max(compute, memory)


def test_batch_one_is_host_bound_and_large_batches_are_not() -> None:
    one = step(profile(), gpu(), 1, PARAMS, runtime="torch-eager")
    many = step(profile(), gpu(), 256, PARAMS, runtime="torch-eager")
    assert one.bound == "host" and many.bound in ("compute", "memory")
    assert 256 / many.seconds > 10 * (1 / one.seconds)  # throughput grows with the batch
    graph = step(profile(), gpu(), 1, PARAMS, runtime="onnxruntime-cuda")
    assert graph.seconds < one.seconds  # no Python per operator


def test_the_host_pays_a_dispatch_per_operator_and_a_launch_per_further_kernel() -> None:
    """One fused LSTM call launching 65 kernels is one Python dispatch, not 65."""
    fused = Profile(
        workload="rnn",
        task=Task.infer,
        precision=Precision.fp32,
        shape={"sequence": 32},
        buckets=[
            Bucket(
                op_class=OpClass.recurrent,
                flops=Linear(per_sample=1e6),
                bytes=Linear(per_sample=1e5, per_step=1e6),
                kernels=65,
                operators=1,
            )
        ],
        memory=Memory(weights=1e6, activations=Linear(per_sample=1e5)),
        batches=(1, 8),
        made_with="hand-made for the tests",
    )
    host = step(fused, gpu(), 1, PARAMS, runtime="torch-eager").host_s
    assert host == pytest.approx(PARAMS["dispatch_eager_s"] + 64 * PARAMS["launch_s"] + PARAMS["step_s"])
    split = fused.model_copy(update={"buckets": [fused.buckets[0].model_copy(update={"operators": 65})]})
    assert step(split, gpu(), 1, PARAMS, runtime="torch-eager").host_s > 4 * host


def test_a_cpu_with_fewer_threads_is_slower() -> None:
    cpu = Device("toy-cpu", "Toy CPU", "cpu", 4e12, 4e12, 3e11, 3e8, 64, 300.0, None, None)
    params = Params("cpu", {p: PRIORS["cpu"][p][0] for p in PARAMETERS})
    all_cores = step(profile(), cpu, 8, params, runtime="torch-eager")
    two = step(profile(), cpu, 8, params, runtime="torch-eager", threads=2)
    assert two.seconds > 4 * all_cores.seconds


def test_a_graph_runtime_launches_no_more_plain_kernels_than_matrix_kernels() -> None:
    toy = profile().model_copy(update={"precision": Precision.fp32})  # no layout transposes (below)
    # 50 convolutions, 50 normalisations, 70 elementwise operators
    cols, figures = stacked([Case(toy, gpu(), 1, "torch-eager"), Case(toy, gpu(), 1, "torch-compile")])
    launched, called, kept = fused(cols, figures["dispatch"])
    eager, graph = cols.case == 0, cols.case == 1
    assert launched[eager].sum() == called[eager].sum() == 170  # eager: every operator its own kernel
    assert (kept[eager] == 1).all() and (kept[cols.tensor] == 1).all()
    assert launched[graph & cols.tensor].sum() == 50
    assert launched[graph & ~cols.tensor].sum() == pytest.approx(50)  # the plain ones fused to one per conv
    assert called[graph].sum() == pytest.approx(100)
    assert kept[graph & ~cols.tensor] == pytest.approx(50 / 120)
    one = step(toy, gpu(), 1, PARAMS, runtime="torch-eager")
    compiled = step(toy, gpu(), 1, PARAMS, runtime="torch-compile")
    assert compiled.device_s < one.device_s and compiled.host_s < one.host_s
    assert compiled.bytes < one.bytes == pytest.approx(toy.bytes(1))  # a fused chain writes once
    assert compiled.flops == pytest.approx(one.flops)  # and does the same math


def test_eager_pytorchs_half_precision_convolutions_on_a_gpu_are_transposed_to_nhwc_and_back() -> None:
    toy = profile()  # bf16: 50 convolutions moving 3e7 bytes a sample and 1e8 of weights
    conv = toy.buckets[0].bytes.at(8)
    eager = step(toy, gpu(), 8, PARAMS, runtime="torch-eager")
    fp32 = toy.model_copy(update={"precision": Precision.fp32})
    assert eager.bytes == pytest.approx(toy.bytes(8) + RELAYOUT_BYTES * conv)  # every operand read and written again
    assert step(fp32, gpu(), 8, PARAMS, runtime="torch-eager").bytes == pytest.approx(fp32.bytes(8))
    for runtime in ("pytorch-ngc", "onnxruntime-cuda"):  # NGC runs channels-last; a graph lays out once
        assert step(toy, gpu(), 8, PARAMS, runtime=runtime).bytes <= toy.bytes(8)
    cpu = Device("toy-cpu", "Toy CPU", "cpu", 4e12, 4e12, 3e11, 3e8, 64, 300.0, None, None)
    params = Params("cpu", {p: PRIORS["cpu"][p][0] for p in PARAMETERS})
    assert step(toy, cpu, 8, params, runtime="torch-eager").bytes == pytest.approx(toy.bytes(8))
    # the transposes are kernels cuDNN launches: no Python dispatch, a launch each
    plain = step(toy, gpu(), 1, PARAMS, runtime="pytorch-ngc")
    one = step(toy, gpu(), 1, PARAMS, runtime="torch-eager")
    assert one.host_s - plain.host_s == pytest.approx(RELAYOUT_KERNELS * 50 * PARAMS["launch_s"])


def test_the_eager_kernel_factor_slows_eager_pytorchs_matrix_kernels_alone() -> None:
    cpu = Device("toy-cpu", "Toy CPU", "cpu", 4e12, 4e12, 3e11, 3e8, 64, 300.0, None, None)
    plain = Params("cpu", {p: PRIORS["cpu"][p][0] for p in PARAMETERS})
    # the toy's matrix work is convolutions: the GEMMs' factor does not touch it
    assert step(profile(), cpu, 8, Params("cpu", plain.values, eager_kernel=0.5), runtime="torch-eager") == step(
        profile(), cpu, 8, plain, runtime="torch-eager"
    )
    slow = Params("cpu", plain.values, eager_conv=0.5)
    for runtime in ("onnxruntime-cpu", "openvino"):  # graph runtimes: what set the class efficiencies
        assert step(profile(), cpu, 8, slow, runtime=runtime) == step(profile(), cpu, 8, plain, runtime=runtime)
    before = step(profile(), cpu, 8, plain, runtime="torch-eager")
    after = step(profile(), cpu, 8, slow, runtime="torch-eager")
    assert after.compute_s > 1.5 * before.compute_s  # the convolutions run at half the efficiency
    assert after.memory_s == before.memory_s and after.host_s == before.host_s
    assert after.seconds > before.seconds


def test_the_autograd_factor_raises_eager_trainings_host_cost_per_operator_alone() -> None:
    plain = PARAMS
    factored = Params("gpu", PARAMS.values, autograd=2.0)
    training = profile().model_copy(update={"task": Task.train})
    for prof, runtime in ((profile(), "torch-eager"), (training, "pytorch-ngc"), (training, "onnxruntime-cuda")):
        assert step(prof, gpu(), 1, factored, runtime=runtime) == step(prof, gpu(), 1, plain, runtime=runtime)
    before = step(training, gpu(), 1, plain, runtime="torch-eager")
    after = step(training, gpu(), 1, factored, runtime="torch-eager")
    operators = sum(b.operators for b in training.buckets)
    assert after.host_s - before.host_s == pytest.approx(operators * PARAMS["dispatch_eager_s"])
    assert after.device_s == before.device_s and after.seconds > before.seconds


def test_a_few_busy_cores_run_at_turbo_up_to_the_parts_highest_clock() -> None:
    cpu = Device("toy-cpu", "Toy CPU", "cpu", 4e12, 4e12, 3e11, 3e8, 64, 300.0, None, None, turbo=1.9)
    one, two, half, all_cores = (scaled(cpu, t)[0] for t in (1, 2, 32, 64))
    assert one == pytest.approx(4e12 / 64 * 1.9)  # 64^(1/3) = 4 would exceed the turbo clock
    assert two == pytest.approx(2 * one)
    assert half == pytest.approx(4e12 / 2 * 2 ** (1 / 3))  # the power of 64 cores shared by 32
    assert one < two < half < all_cores == 4e12
    fixed = Device("toy-cpu", "Toy CPU", "cpu", 4e12, 4e12, 3e11, 3e8, 64, 300.0, None, None)
    assert scaled(fixed, 2)[0] == pytest.approx(2 * 4e12 / 64)  # no turbo clock known: the base clock


def test_calibration_recovers_the_parameters_that_made_the_data() -> None:
    truth = Params("gpu", {**PARAMS.values, "conv": 0.35, "memory": 0.6, "dispatch_eager_s": 4e-5})
    rng = np.random.default_rng(7)
    observations = []
    for i in range(24):
        dev = gpu(
            matrix=float(rng.uniform(50e12, 1000e12)),
            vector=float(rng.uniform(10e12, 80e12)),
            bandwidth=float(rng.uniform(0.3e12, 4e12)),
            units=float(rng.integers(40, 150)),
        )
        dev = Device(
            f"gpu-{i}",
            f"GPU {i}",
            "gpu",
            dev.matrix,
            dev.vector,
            dev.bandwidth,
            dev.cache,
            dev.units,
            300.0,
            None,
            None,
        )
        for batch in (1, 8, 64, 256):
            seconds = step(profile(), dev, batch, truth, runtime="torch-eager").seconds
            observations.append(Observation(profile(), batch, dev, batch / seconds, "torch-eager", None, label=dev.id))
    fitted = fit(observations, "gpu")
    errors = np.abs(np.log(predict(fitted, observations) / np.array([o.throughput for o in observations])))
    assert float(errors.max()) < 0.02
    assert fitted.params["conv"] == pytest.approx(0.35, rel=0.1)
    assert fitted.params["dispatch_eager_s"] == pytest.approx(4e-5, rel=0.1)


def test_a_stack_factor_is_learned_per_group() -> None:
    observations = []
    for i, matrix in enumerate((100e12, 300e12, 900e12)):
        dev = Device(f"g{i}", f"G{i}", "gpu", matrix, 30e12, 2e12, 40e6, 100, 300.0, None, None)
        seconds = step(profile(), dev, 256, PARAMS, runtime="torch-eager").seconds
        observations.append(Observation(profile(), 256, dev, 256 / seconds, "torch-eager", None, label=dev.id))
        observations.append(
            Observation(profile(), 256, dev, 0.5 * 256 / seconds, "pytorch-ngc", "public:x/toy/infer", label=dev.id)
        )
    fitted = fit(observations, "gpu")
    assert fitted.stacks["public:x/toy/infer"] == pytest.approx(2.0, rel=0.05)


def test_a_traffic_factor_scales_memory_and_elementwise_work_but_not_the_matrix_units() -> None:
    dev = gpu()
    eager = step(profile(), dev, 256, PARAMS, runtime="torch-eager")
    heavier = step(profile(), dev, 256, PARAMS, runtime="torch-eager", traffic=2.0)
    assert heavier.bytes == pytest.approx(2 * eager.bytes)
    assert heavier.memory_s == pytest.approx(2 * eager.memory_s, rel=0.05)  # the cache share moves a little
    assert eager.seconds < heavier.seconds < 2 * eager.seconds  # the convolutions' FLOPs did not double
    matrix_bound = profile(conv=4e11, moved=1e3, weights=1e3)
    a = step(matrix_bound, dev, 256, PARAMS, runtime="torch-eager")
    b = step(matrix_bound, dev, 256, PARAMS, runtime="torch-eager", traffic=2.0)
    assert b.seconds < 1.2 * a.seconds


def test_a_sources_yearly_reruns_share_one_traffic_factor() -> None:
    assert traffic_group("public:lambda-2022/resnet50/train/fp16") == "public:lambda/resnet50/train/fp16"
    assert traffic_group("public:openvino-2024.1/resnet50/infer/int8") == "public:openvino/resnet50/infer/int8"
    rng = np.random.default_rng(3)
    observations = []
    for i in range(12):
        matrix, bandwidth = float(rng.uniform(50e12, 1000e12)), float(rng.uniform(0.3e12, 4e12))
        dev = Device(f"g{i}", f"G{i}", "gpu", matrix, 30e12, bandwidth, 40e6, 100, 300.0, None, None)
        for batch in (8, 64, 256):  # the lab's eager runs pin the device parameters
            eager = step(profile(), dev, batch, PARAMS, runtime="torch-eager").seconds
            observations.append(Observation(profile(), batch, dev, batch / eager, "torch-eager", None, label=dev.id))
        published = step(profile(), dev, 256, PARAMS, runtime="ngc", traffic=3.0).seconds
        for year in ("2022", "2024"):
            group = f"public:x-{year}/toy/infer/bf16"
            observations.append(Observation(profile(), 256, dev, 256 / published, "ngc", group, label=dev.id))
    fitted = fit(observations, "gpu")
    assert list(fitted.traffic) == ["public:x/toy/infer/bf16"]
    assert fitted.traffic["public:x/toy/infer/bf16"] == pytest.approx(3.0, rel=0.1)
    assert fitted.stacks["public:x-2022/toy/infer/bf16"] == pytest.approx(1.0, rel=0.1)


def test_a_traffic_groups_rows_evaluated_alone_give_the_whole_designs_numbers() -> None:
    """What lets the fit's Jacobian re-evaluate a traffic factor's rows alone (``calibrate._rows``): on
    the published GPU rows, each group's rows come out bit for bit as the whole design's do."""
    catalog = {e.id: e for e in load()}
    published = median_per_part(from_public(_public(GPU_SOURCES), catalog, _profile))
    design = calibrate._design(published)
    like = shipped_calibration().of("gpu")
    theta = np.log(
        [like[p] for p in PARAMETERS]
        + [1.3] * len(design.groups)
        + [0.8 + 0.1 * t for t in range(len(design.traffics))]
    )
    whole = calibrate._predict(like, theta, design)
    of = design.traffic_of[design.group]
    assert len(design.traffics) > 5
    for t in range(len(design.traffics)):
        rows = np.flatnonzero(of == t)
        assert 0 < len(rows) < len(whole)
        assert np.array_equal(calibrate._predict(like, theta, calibrate._rows(design, rows)), whole[rows])


@settings(max_examples=30, deadline=None)
@given(st.integers(20, 400), st.integers(0, 10_000))
def test_a_conformal_band_holds_about_ninety_percent_of_new_errors(n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    past, future = np.abs(rng.normal(size=n)), np.abs(rng.normal(size=4000))
    band = bands.quantile(past.tolist())
    assert band is not None
    coverage = float(np.mean(future <= band))
    # marginal coverage is >= 90% on average over draws; a single draw of n past errors varies around it
    assert coverage > 0.9 - 3 / math.sqrt(n)


def test_too_few_errors_give_no_band() -> None:
    assert bands.quantile([0.1] * 5) is None and bands.quantile([]) is None


def test_the_eager_stream_rate_bounds_eager_pytorchs_memory_time_on_a_gpu_alone() -> None:
    clocked = Device("toy-gpu", "Toy GPU", "gpu", 300e12, 40e12, 4e12, 50e6, 100, 400.0, 100.0, 400.0, clock_hz=2e9)
    limited = Params("gpu", PARAMS.values, stream=8.0)  # 8 B x 100 SMs x 2 GHz = 1.6 TB/s, under the 4 TB/s DRAM
    cpu = Device("toy-cpu", "Toy CPU", "cpu", 4e12, 4e12, 3e11, 3e8, 64, 300.0, None, None)
    cpu_params = Params("cpu", {p: PRIORS["cpu"][p][0] for p in PARAMETERS})
    assert step(profile(), cpu, 8, Params("cpu", cpu_params.values, stream=8.0), runtime="torch-eager") == step(
        profile(), cpu, 8, cpu_params, runtime="torch-eager"
    )
    for runtime in ("onnxruntime-cuda", "pytorch-ngc"):  # a graph runtime, a published stack: no limit
        unchanged = step(profile(), clocked, 64, PARAMS, runtime=runtime)
        assert step(profile(), clocked, 64, limited, runtime=runtime) == unchanged
    before = step(profile(), clocked, 64, PARAMS, runtime="torch-eager")
    after = step(profile(), clocked, 64, limited, runtime="torch-eager")
    sustained = min(1.0, PARAMS["sm_hz_per_w"] * 400.0 / 100 / 2e9)
    assert after.memory_s >= after.bytes / (8.0 * 100 * 2e9 * sustained) * (1 - 1e-9)
    assert after.memory_s > before.memory_s and after.compute_s == before.compute_s
    assert before.streamed_s == 0.0 < after.streamed_s <= after.memory_s
    assert after.host_s == before.host_s and after.bytes == before.bytes
    # a rate above what the DRAM feeds changes nothing
    generous = Params("gpu", PARAMS.values, stream=1e4)
    assert step(profile(), clocked, 64, generous, runtime="torch-eager") == before


def test_pytorchs_blas_share_slows_its_linear_layers_and_matmuls_alone() -> None:
    """MKL runs its AVX2 kernels on an AMD CPU: half a Zen 5 core's AVX-512 rate for PyTorch's fp32 linear
    layers and matmuls, eager or compiled; its convolutions and recurrent layers (oneDNN), ONNX Runtime and
    OpenVINO keep the whole peak."""
    zen5, zen4, xeon = get("epyc-9555"), get("epyc-9654"), get("xeon-platinum-8480plus")
    assert blas_share(zen5, Precision.fp32) == pytest.approx(0.5, rel=2e-3)  # 64 FP32 FLOPs a cycle, MKL's 32
    assert blas_share(zen5, Precision.bf16) == 1.0  # oneDNN's AVX512_BF16
    assert blas_share(zen4, Precision.fp32) == 1.0  # 256-bit units: AVX2's rate is the peak
    assert blas_share(xeon, Precision.fp32) == 1.0  # MKL's AVX-512 kernels on Intel
    assert blas_share(get("h100-sxm5-80gb"), Precision.fp32) == 1.0
    dev = device(zen5, Precision.fp32)
    assert dev is not None and dev.blas_share == pytest.approx(0.5, rel=2e-3)
    whole = replace(dev, blas_share=1.0)
    plain = Params("cpu", {p: PRIORS["cpu"][p][0] for p in PARAMETERS})
    matmul = Profile(
        workload="toy-mlp",
        task=Task.infer,
        precision=Precision.fp32,
        shape={"sequence": 128},
        buckets=[
            Bucket(
                op_class=OpClass.gemm,
                flops=Linear(per_sample=4e10),
                bytes=Linear(per_sample=1e6),
                kernels=4,
                operators=4,
            ),
            Bucket(
                op_class=OpClass.recurrent,
                flops=Linear(per_sample=4e10),
                bytes=Linear(per_sample=1e6),
                kernels=4,
                operators=4,
            ),
        ],
        memory=Memory(weights=1e8, activations=Linear(per_sample=1e6)),
        batches=(1, 8),
        made_with="hand-made for the tests",
    )
    for runtime in ("torch-eager", "torch_compile"):
        halved, full = step(matmul, dev, 8, plain, runtime=runtime), step(matmul, whole, 8, plain, runtime=runtime)
        # the GEMM bucket's compute doubles, the recurrent one's does not
        gemm = step(matmul.model_copy(update={"buckets": matmul.buckets[:1]}), whole, 8, plain, runtime=runtime)
        assert halved.compute_s - full.compute_s == pytest.approx(gemm.compute_s * (1 / dev.blas_share - 1)), runtime
    for runtime in ("onnxruntime-cpu", "openvino"):
        assert step(matmul, dev, 8, plain, runtime=runtime) == step(matmul, whole, 8, plain, runtime=runtime)
    convolutions = profile().model_copy(update={"precision": Precision.fp32})
    assert step(convolutions, dev, 8, plain, runtime="torch-eager") == step(
        convolutions, whole, 8, plain, runtime="torch-eager"
    )
