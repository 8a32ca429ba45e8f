"""The lab's calibration of language-model steps: the modelled step's parts weighed apart, or one factor."""

from __future__ import annotations

import pytest

from app.catalog import get
from app.contracts import LLM_PRESETS, Precision, Task
from app.perfmodel import generation, mkl_split
from app.perfmodel.device import Device, device
from app.perfmodel.generation import COMPONENTS, LlmCalibration, fit_weights
from app.perfmodel.predict import machine_band

SHAPE = LLM_PRESETS["llama_135m"].shape


def math_device(part: str, precision: Precision) -> Device:
    """The catalog part ``part`` as the model sees a step of ``precision`` on it (``math_precision``)."""
    hardware = get(part)
    dev = device(hardware, generation.math_precision(hardware, precision))
    assert dev is not None
    return dev


def test_weights_the_measurements_were_made_with_are_recovered() -> None:
    truth = [1.5, 3.0, 60.0, 0.5]
    parts = [[0.01 * i, 0.02 + 0.003 * (i % 3), 0.0005 * i * i, 0.003 + 0.001 * (i % 2)] for i in range(1, 9)]
    measured = [sum(w * p for w, p in zip(truth, row, strict=True)) for row in parts]
    assert fit_weights(parts, measured) == pytest.approx(truth, rel=1e-6)


def test_a_fixed_component_is_held_and_the_others_fitted_around_it() -> None:
    truth = [1.5, 3.0, 60.0, 0.5]
    parts = [[0.01 * i, 0.02 + 0.003 * (i % 3), 0.0005 * i * i, 0.003 + 0.001 * (i % 2)] for i in range(1, 9)]
    measured = [sum(w * p for w, p in zip(truth, row, strict=True)) for row in parts]
    assert fit_weights(parts, measured, {3: 0.5}) == pytest.approx(truth, rel=1e-6)
    held = fit_weights(parts, measured, {3: 2.0})  # held at a wrong weight: the others make up what they can
    assert held[3] == 2.0 and min(held) >= 0 and held[:3] != pytest.approx(truth[:3], rel=1e-3)


def test_weights_are_never_negative() -> None:
    parts = [[1.0, 0.0, 0.0, 1.0], [2.0, 0.0, 0.0, 1.0], [3.0, 0.0, 0.0, 1.0], [4.0, 0.0, 0.0, 1.0]]
    measured = [4.0, 3.0, 2.0, 1.0]  # falls as compute grows: no non-negative sum makes that
    assert min(fit_weights(parts, measured)) >= 0


def test_a_decode_computes_at_the_prefills_rate() -> None:
    """The shipped calibration takes a decode's compute weight from the prefill's at its precision
    (``generation.COMPUTE``): a decode at a few sequences is a few percent compute and cannot say how fast
    the math runs, which the Zen 5 VM's bf16 decode, fitted free, put at 0 (session 60's Zen 4 VM then took
    1.8x the modelled step at batch 64)."""
    shipped = generation.shipped()
    groups = [shipped.weights, *shipped.vendor_weights.values()]
    compared = 0
    for weights in groups:
        for precision in (Precision.fp32, Precision.bf16):
            prefill, decode = (
                weights.get(f"cpu/{task.value}/{precision.value}") for task in (Task.prefill, Task.decode)
            )
            if prefill and decode:
                assert decode[generation.COMPUTE] == prefill[generation.COMPUTE] > 0
                compared += 1
    assert compared >= 4


def test_a_precision_weighed_apart_uses_its_weights_and_the_others_the_factor() -> None:
    cpu = get("epyc-9654")
    plain = generation.step(
        SHAPE, Task.decode, Precision.bf16, 4, 1024, cpu, threads=1, llm_calibration=LlmCalibration()
    )
    assert plain is not None and len(plain.parts) == len(COMPONENTS)
    assert sum(plain.parts) == pytest.approx(plain.seconds)  # a CPU adds host and device time
    assert plain.parts[2] > 0  # decode reads a KV cache
    tuned = LlmCalibration(factors={"cpu/decode": 2.0}, weights={"cpu/decode/bf16": [1.0, 1.0, 10.0, 1.0]})
    weighed = generation.step(SHAPE, Task.decode, Precision.bf16, 4, 1024, cpu, threads=1, llm_calibration=tuned)
    assert weighed is not None
    assert weighed.seconds == pytest.approx(sum(plain.parts) + 9 * plain.parts[2])
    scaled = generation.step(SHAPE, Task.decode, Precision.fp32, 4, 1024, cpu, llm_calibration=tuned)
    fp32 = generation.step(SHAPE, Task.decode, Precision.fp32, 4, 1024, cpu, llm_calibration=LlmCalibration())
    assert scaled is not None and fp32 is not None
    assert scaled.seconds == pytest.approx(2 * fp32.seconds) and scaled.factor == pytest.approx(2.0)


def test_a_vendors_own_weights_stand_for_its_parts_alone() -> None:
    """An Intel CPU's bf16 attention reads its KV cache fast where the calibration machine's (AMD) is slow:
    weights fitted on the vendor's own machines replace the shared ones for that vendor's parts, a probe's
    CPUID vendor string included, and for nobody else's."""
    shared = [1.0, 1.0, 50.0, 1.0]
    tuned = LlmCalibration(
        weights={"cpu/decode/bf16": shared}, vendor_weights={"Intel": {"cpu/decode/bf16": [1.0, 1.0, 5.0, 1.0]}}
    )
    _assert_kv_weights(tuned, {"xeon-platinum-8580": 5.0, "epyc-9654": 50.0})
    parts = [0.1, 0.2, 0.3, 0.4]
    by_cpuid = tuned.seconds(
        "cpu", Task.decode, Precision.bf16, parts, 1.0, vendor=generation.catalog_vendor("GenuineIntel")
    )
    assert by_cpuid == pytest.approx(0.1 + 0.2 + 5 * 0.3 + 0.4)
    # a precision the vendor has no weights of its own for keeps the shared ones
    tuned_fp32 = tuned.model_copy(update={"weights": {"cpu/decode/fp32": shared}})
    assert tuned_fp32.seconds("cpu", Task.decode, Precision.fp32, parts, 1.0, vendor="Intel") == pytest.approx(
        0.1 + 0.2 + 50 * 0.3 + 0.4
    )


def test_a_vendors_tile_weights_stand_for_its_parts_whose_precision_runs_on_amx() -> None:
    """'<vendor>/tile' weights come first where the step's precision runs on tile units (a Sapphire Rapids
    part's bf16), the vendor's where it runs on the vector units (a Cooper Lake part's, AVX512_BF16) and in
    fp32, the shared ones for another vendor."""
    tuned = LlmCalibration(
        weights={"cpu/decode/bf16": [1.0, 1.0, 50.0, 1.0]},
        vendor_weights={
            "Intel": {"cpu/decode/bf16": [1.0, 1.0, 5.0, 1.0]},
            "Intel/tile": {"cpu/decode/bf16": [1.0, 1.0, 2.0, 1.0]},
        },
    )
    _assert_kv_weights(tuned, {"xeon-platinum-8480plus": 2.0, "xeon-platinum-8360h": 5.0, "epyc-9654": 50.0})
    assert generation.weights_groups("Intel", tiles=True) == ["Intel/tile", "Intel"]
    assert generation.weights_groups(None, tiles=True) == []


def _assert_kv_weights(tuned: LlmCalibration, kv_weight_of: dict[str, float]) -> None:
    """Each part's bf16 decode under ``tuned`` is its uncalibrated step with the KV cache's part weighed as
    ``kv_weight_of`` says (the other parts' weights being 1)."""
    for part_id, kv_weight in kv_weight_of.items():
        part = get(part_id)
        plain = generation.step(
            SHAPE, Task.decode, Precision.bf16, 4, 1024, part, threads=1, llm_calibration=LlmCalibration()
        )
        weighed = generation.step(SHAPE, Task.decode, Precision.bf16, 4, 1024, part, threads=1, llm_calibration=tuned)
        assert plain is not None and weighed is not None
        assert weighed.seconds == pytest.approx(sum(plain.parts) + (kv_weight - 1) * plain.parts[2]), part_id


def test_a_part_slower_than_the_bandwidth_is_the_cores_work_which_more_threads_share() -> None:
    """The lab's VMs, at one thread, read bf16 weights and KV cache several times slower than their
    bandwidth: work on the core (benchmarks/linear_rows.py: a bf16 product and bf16 attention gain
    1.4-2x from a second thread, a copy 1.24x). So a weight above 1 scales one core's share of the part's
    work on one core. While each core adds bandwidth, that is the weight times the part as modelled; once
    the cores share the socket's bandwidth, the cores' work keeps shrinking and the part with it, down to
    the part as modelled. A weight at or below 1 scales the part as modelled at any thread count."""
    cpu = get("epyc-9654")  # 96 cores: one streams a 24th of the socket's bandwidth (model.scaled)
    tuned = LlmCalibration(weights={"cpu/decode/bf16": [1.0, 4.0, 10.0, 0.5]})
    excess = []
    for threads in (1, 2, 8, 32, 96):
        plain = generation.step(
            SHAPE, Task.decode, Precision.bf16, 4, 1024, cpu, threads=threads, llm_calibration=LlmCalibration()
        )
        weighed = generation.step(
            SHAPE, Task.decode, Precision.bf16, 4, 1024, cpu, threads=threads, llm_calibration=tuned
        )
        assert plain is not None and weighed is not None
        compute, weights, kv, rest = plain.parts
        # each memory part between the part as modelled and its weight times it; the rest halved
        low, high = compute + weights + kv + 0.5 * rest, compute + 4 * weights + 10 * kv + 0.5 * rest
        assert low * (1 - 1e-9) <= weighed.seconds <= high * (1 + 1e-9), threads
        excess.append((weighed.seconds - low) / (high - low))
    assert excess[:3] == pytest.approx([1.0, 1.0, 1.0])  # 8 cores stream a third of the socket's bandwidth
    assert excess[2] > excess[3] > excess[4] and excess[4] < 0.5, excess


def test_the_gpu_reference_runs_calibrate_their_vendors_gpus_alone_and_no_band_is_narrower_than_machines() -> None:
    """The H200 reference run's settled llama3_1b prefill and decode set one factor per task for NVIDIA's GPUs
    in eager PyTorch (the model's eager step was about 1.75x too slow there); another vendor's GPU, or a
    compiled step, keeps the model alone."""
    shape = LLM_PRESETS["llama3_1b"].shape
    shipped = generation.shipped()
    assert shipped.vendors["gpu"] == ["NVIDIA"] and shipped.runtimes["gpu"] == ["torch-eager"]
    assert shipped.covers("cpu", "AMD", "torch-compile")
    h200 = get("h200-sxm-141gb")
    decode = generation.step(shape, Task.decode, Precision.bf16, 1, 512, h200)
    plain = generation.step(shape, Task.decode, Precision.bf16, 1, 512, h200, llm_calibration=LlmCalibration())
    assert decode is not None and plain is not None
    assert decode.band_kind == "gpu-llm" and decode.factor == pytest.approx(shipped.factors["gpu/decode"])
    # the measured step: 6.93 ms a token at batch 1 over 512 cached tokens
    assert decode.seconds * 1000 == pytest.approx(6.93, rel=0.02)
    assert decode.seconds < 0.7 * plain.seconds
    amd = generation.step(shape, Task.decode, Precision.bf16, 1, 512, get("mi300x"))
    assert amd is not None and amd.band_kind == "gpu-llm-uncalibrated" and amd.factor == pytest.approx(1.0)
    # a compiled step (the serving planner's) pays no eager dispatch: the eager factor does not speak for it
    compiled = generation.step(shape, Task.decode, Precision.bf16, 1, 512, h200, runtime="torch-compile")
    assert compiled is not None and compiled.band_kind == "gpu-llm-uncalibrated" and compiled.factor == 1.0
    # a host-bound step on a catalog part: never narrower than how far two machines of one part measure apart
    assert decode.band >= max(machine_band("gpu", "host"), shipped.bands["gpu/decode"])


def test_a_calibrated_decode_never_reads_its_weights_faster_than_the_memory_allows() -> None:
    """The GPU factor was measured where the host bounds the step (the H200's batch-1 decode of a 1B
    model); carried to an L4 decoding Llama-3-8B, which its 300 GB/s bound, it gave 37 ms a token where
    reading 16 GB takes 53 ms. The step is held at that floor and says so (``floored``); where the host
    bounds the step the factor stands."""
    shape = LLM_PRESETS["llama3_8b"].shape
    l4 = get("l4")
    decode = generation.step(shape, Task.decode, Precision.bf16, 1, 1024, l4)
    assert decode is not None and decode.floored
    read = decode.memory.weights + decode.memory.kv_cache - l4.l2_mb * 1e6
    assert decode.seconds == pytest.approx(read / (l4.memory_bandwidth_gb_s * 1e9))
    assert decode.seconds > 1.4 * generation.shipped().factors["gpu/decode"] * decode.breakdown.seconds
    # where the host bounds the step the factor stands, as the run measured it
    small = generation.step(LLM_PRESETS["llama3_1b"].shape, Task.decode, Precision.bf16, 1, 512, get("h200-sxm-141gb"))
    assert small is not None and not small.floored


@pytest.mark.parametrize("preset", sorted(LLM_PRESETS))
@pytest.mark.parametrize("part", ["l4", "t4", "a10", "rtx-4090", "h100-sxm5-80gb", "epyc-9654"])
@pytest.mark.parametrize("task", [Task.prefill, Task.decode])
def test_no_calibrated_step_passes_the_roofline(preset: str, part: str, task: Task) -> None:
    hardware = get(part)
    shape = LLM_PRESETS[preset].shape
    precision = Precision.bf16 if hardware.peak_bf16_tflops else Precision.fp16  # a T4 has no bf16
    peak = (hardware.peak_bf16_tflops or hardware.peak_fp16_tflops or 0) * 1e12
    for batch in (1, 16):
        found = generation.step(shape, task, precision, batch, 512, hardware)
        assert found is not None
        bandwidth = (hardware.memory_bandwidth_gb_s or 0) * 1e9
        cache = (hardware.l2_mb if hardware.kind == "gpu" else hardware.l3_mb) or 0.0
        read = max(0.0, found.memory.weights + found.memory.kv_cache - cache * 1e6)
        assert found.seconds >= max(found.breakdown.flops / peak, read / bandwidth) * (1 - 1e-9)


def test_an_amd_cpus_fp32_products_run_on_the_threads_mkl_splits_them_over() -> None:
    """PyTorch hands an fp32 linear layer to MKL. On an AMD CPU one row is SGEMV, on one thread however
    many are allowed (pytorch/pytorch#96643); more rows are SGEMM, which gives a few rows to few of the
    threads of its grid (app/perfmodel/mkl_split.py): on two threads a decode of up to four sequences
    multiplies on one, as the lab's AMD VMs showed, and a 96-core EPYC's on 12 of its cores. The step's
    compute and weight reads are then the step's on that many cores, eager or compiled (inductor calls
    the same product); attention reads the KV cache on every thread. bf16 (oneDNN), an Intel CPU, ONNX
    Runtime (its own kernels) and a prefill's many rows use every thread they are given."""
    epyc, xeon = get("epyc-9654"), get("xeon-platinum-8480plus")
    assert epyc.cores == 96

    def parts(
        part: str, precision: Precision, batch: int, threads: int | None, runtime: str = "torch-eager"
    ) -> list[float]:
        found = generation.step(SHAPE, Task.decode, precision, batch, 512, get(part), runtime=runtime, threads=threads)
        assert found is not None
        return found.parts

    def used(
        part: str, task: Task, precision: Precision, batch: int, threads: int, runtime: str = "torch-eager"
    ) -> int:
        return generation.product_threads(math_device(part, precision), task, batch, 512, runtime, threads)

    one = parts(epyc.id, Precision.fp32, 1, 1)
    for threads in (2, 16, None):
        many = parts(epyc.id, Precision.fp32, 1, threads)
        assert many[:2] == pytest.approx(one[:2]), threads  # compute and the weights' reads: one core's
        assert many[2] <= one[2]  # attention reads the KV cache on every thread
    for batch in (2, 3, 4):  # two threads: one group of one
        on_two, on_one = parts(epyc.id, Precision.fp32, batch, 2), parts(epyc.id, Precision.fp32, batch, 1)
        assert on_two[:2] == pytest.approx(on_one[:2]), batch
    assert parts(epyc.id, Precision.fp32, 5, 2)[1] < 0.9 * parts(epyc.id, Precision.fp32, 5, 1)[1]
    for batch, cores in ((4, 12), (5, 24), (16, 48)):  # all 96: the grid's 12 columns times the groups
        assert used(epyc.id, Task.decode, Precision.fp32, batch, 96) == cores
        with pytest.MonkeyPatch.context() as every_thread:  # as if MKL used every thread it is given
            every_thread.setattr(generation, "product_threads", lambda *step: step[-1])
            on_cores = parts(epyc.id, Precision.fp32, batch, cores)
        assert parts(epyc.id, Precision.fp32, batch, None)[:2] == pytest.approx(on_cores[:2]), batch
    assert used(epyc.id, Task.decode, Precision.fp32, 64, 96) == 96
    assert parts(epyc.id, Precision.fp32, 1, 16, "torch-compile")[:2] == pytest.approx(
        parts(epyc.id, Precision.fp32, 1, 1, "torch-compile")[:2]
    )
    for precision, runtime in ((Precision.bf16, "torch-eager"), (Precision.fp32, "onnxruntime-cpu")):
        assert used(epyc.id, Task.decode, precision, 1, 16, runtime) == 16
        alone, spread = parts(epyc.id, precision, 1, 1, runtime), parts(epyc.id, precision, 1, 16, runtime)
        assert spread[1] < 0.5 * alone[1], (precision, runtime)
    assert used(xeon.id, Task.decode, Precision.fp32, 1, 16) == 16
    assert used(epyc.id, Task.prefill, Precision.fp32, 1, 96) == 96  # 512 prompt tokens: 512 rows
    assert parts(xeon.id, Precision.fp32, 1, 16)[1] < 0.5 * parts(xeon.id, Precision.fp32, 1, 1)[1]
    # the step on many threads is the one-thread step but for the KV cache's reads: never faster than them
    wide = generation.step(SHAPE, Task.decode, Precision.fp32, 1, 512, epyc)
    narrow = generation.step(SHAPE, Task.decode, Precision.fp32, 1, 512, epyc, threads=1)
    assert wide is not None and narrow is not None
    assert narrow.seconds * (1 + 1e-9) >= wide.seconds >= 0.9 * narrow.seconds
    assert wide.product_threads == 1 and narrow.product_threads is None  # on one thread already: nothing to say
    # the calibration's factor is on the step so modelled: the one core is not the lab's calibration
    assert wide.factor == pytest.approx(narrow.factor, rel=0.05)  # the KV cache part alone differs


def test_an_amd_cpus_fp32_weight_work_is_shared_by_the_threads_that_split_the_columns_alone() -> None:
    """MKL's grid splits an fp32 product's rows over groups of threads and its columns within a group, and
    each group takes the whole weight matrix: a calibrated weight part above its reads (the fp32 prefill's)
    is shared by the grid's column threads, not by all the product's. Two threads are one column each: on
    session 56's Zen 5 VM they halved a prefill's time per token and left its weight part where one thread
    had it. The per-token work still halves; bf16 (oneDNN) and an Intel CPU share the weights' work too."""
    epyc, xeon = get("epyc-9654"), get("xeon-platinum-8480plus")
    tuned = LlmCalibration(weights={"cpu/prefill/fp32": [0.0, 4.0, 0.0, 0.0], "cpu/prefill/bf16": [0.0, 4.0, 0.0, 0.0]})

    def weight_part(part: str, precision: Precision, threads: int) -> float:
        found = generation.step(
            SHAPE, Task.prefill, precision, 1, 64, get(part), threads=threads, llm_calibration=tuned
        )
        assert found is not None
        return found.seconds

    def sharers(part: str, precision: Precision, threads: int, runtime: str = "torch-eager") -> int:
        return generation.weight_threads(math_device(part, precision), Task.prefill, 1, 64, runtime, threads)

    assert sharers(epyc.id, Precision.fp32, 2) == 1
    assert sharers(epyc.id, Precision.fp32, 96) == mkl_split.shipped().grid(96)[0] == 12
    assert sharers(epyc.id, Precision.bf16, 2) == sharers(xeon.id, Precision.fp32, 2) == 2
    assert sharers(epyc.id, Precision.fp32, 2, "onnxruntime-cpu") == 2
    dev = math_device(epyc.id, Precision.fp32)
    assert generation.weight_threads(dev, Task.decode, 1, 512, "torch-eager", 2) == 1  # one row: SGEMV's one thread
    # two threads on one column: the weights' work is one thread's, as on one thread
    assert weight_part(epyc.id, Precision.fp32, 2) == pytest.approx(weight_part(epyc.id, Precision.fp32, 1), rel=0.02)
    for part, precision in ((epyc.id, Precision.bf16), (xeon.id, Precision.fp32)):
        assert weight_part(part, precision, 2) < 0.6 * weight_part(part, precision, 1), (part, precision)
    # 96 threads: shared by the 12 column threads, not all 96
    with pytest.MonkeyPatch.context() as every_thread:
        every_thread.setattr(generation, "weight_threads", lambda *step: step[-1])
        all_share = weight_part(epyc.id, Precision.fp32, 96)
    assert weight_part(epyc.id, Precision.fp32, 96) > 2 * all_share
