"""The eager kernel factors from lab CPUs that ran eager PyTorch and ONNX Runtime on the same configs."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from app.catalog import load
from app.contracts import Precision, Task
from app.perfmodel.params import shipped as calibration
from app.perfmodel.runtime_pairs import (
    GRID,
    Machine,
    Pair,
    factors,
    group,
    leave_one_machine_out,
    modelled_ratios,
    needed,
    shipped,
    unreached,
    with_factors,
)


def pair(ratio: float, workload: str = "resnet50", precision: Precision = Precision.fp32) -> Pair:
    return Pair(
        workload=workload,
        task=Task.infer,
        precision=precision,
        batch=1,
        threads=2,
        eager=10.0 * ratio,
        graph_runtime="onnxruntime-cpu" if precision is Precision.fp32 else "openvino",
        graph=10.0,
    )


def machine(name: str, ratio: float, *more: Pair) -> Machine:
    return Machine(
        name=name,
        cpu="a toy",
        architectures=["Zen 2"],
        names=r"EPYC 7\d\d2",
        measured="made up here",
        pairs=[pair(ratio), *more],
    )


def test_the_factor_needed_gives_the_measured_ratio_back() -> None:
    params, catalog = calibration().of("cpu"), load()
    toy = machine("toy", 1.0)
    parts = toy.parts(catalog)
    assert parts and all(p.architecture == "Zen 2" for p in parts)
    (at_half,) = modelled_ratios(toy.pairs[0], parts, params, [0.5])
    measured = machine("toy", at_half).pairs[0]
    assert needed(measured, parts, params) == pytest.approx(0.5, rel=1e-3)
    # a slower eager kernel, a lower ratio; the graph runtime is untouched
    low, high = modelled_ratios(measured, parts, params, [0.3, 0.9])
    assert low < at_half < high


def test_the_factor_is_the_median_and_each_machine_is_predicted_from_the_others() -> None:
    params, catalog = calibration().of("cpu"), load()
    one = pair(1.0)
    parts = machine("x", 1.0).parts(catalog)
    r = {f: modelled_ratios(one, parts, params, [f])[0] for f in (0.4, 0.6, 0.8)}
    machines = [machine("a", r[0.4]), machine("b", r[0.6]), machine("c", r[0.8])]
    assert factors(machines, catalog, params) == {"conv": pytest.approx(0.6, rel=1e-3)}
    rows = {name: held for name, _pair, held, _bare in leave_one_machine_out(machines, catalog, params)}
    # "a" is predicted from b and c (median of 0.6 and 0.8 in logs: their geometric mean)
    assert rows["a"] == pytest.approx(modelled_ratios(one, parts, params, [(0.6 * 0.8) ** 0.5])[0], rel=1e-3)


def test_convolutions_and_gemms_each_get_the_factor_their_own_pairs_need() -> None:
    params, catalog = calibration().of("cpu"), load()
    parts = machine("x", 1.0).parts(catalog)
    assert [group(pair(1.0, w), parts) for w in ("resnet50", "bert_base", "lstm")] == ["conv", "gemm", "gemm"]
    conv = modelled_ratios(pair(1.0), parts, params, [0.5])[0]
    gemm = modelled_ratios(pair(1.0, "bert_base"), parts, params, [0.9])[0]
    found = factors([machine("a", conv, pair(gemm, "bert_base"))], catalog, params)
    assert found == {"conv": pytest.approx(0.5, rel=1e-3), "gemm": pytest.approx(0.9, rel=1e-3)}
    # each factor moves its own class alone: BERT's ratio does not see the convolutions' factor
    slow_conv = with_factors(params, {"conv": 0.2})
    assert modelled_ratios(pair(1.0, "bert_base"), parts, slow_conv, [0.9])[0] == pytest.approx(gemm)


def emerald(*pairs: Pair) -> Machine:
    """A VM of the Emerald Rapids parts, all of which have AMX."""
    return Machine(
        name="emr", cpu="a toy", architectures=["Emerald Rapids"], names="Xeon", measured="made up", pairs=list(pairs)
    )


def test_a_pair_on_amx_tiles_sets_its_class_tile_factor_and_nothing_else() -> None:
    params, catalog = calibration().of("cpu"), load()
    parts = emerald(pair(1.0)).parts(catalog)
    assert parts and all(p.architecture == "Emerald Rapids" for p in parts)
    bf16, fp32 = pair(1.0, precision=Precision.bf16), pair(1.0)
    assert (group(bf16, parts), group(pair(1.0, "bert_base", Precision.bf16), parts)) == ("conv-tile", "gemm-tile")
    assert group(fp32, parts) == "conv"
    on_tiles = modelled_ratios(bf16, parts, params, [0.1])[0]
    on_vectors = modelled_ratios(fp32, parts, params, [0.5])[0]
    found = factors([emerald(pair(on_tiles, precision=Precision.bf16), pair(on_vectors))], catalog, params)
    assert found == {"conv-tile": pytest.approx(0.1, rel=1e-3), "conv": pytest.approx(0.5, rel=1e-3)}
    # each moves its own unit alone: fp32 does not see the tile factor, bf16 not the vector one
    tiles_slow, vectors_slow = with_factors(params, {"conv-tile": 0.05}), with_factors(params, {"conv": 0.2})
    assert modelled_ratios(fp32, parts, tiles_slow, [0.5]) == modelled_ratios(fp32, parts, params, [0.5])
    assert modelled_ratios(bf16, parts, vectors_slow, [0.1]) == modelled_ratios(bf16, parts, params, [0.1])
    # a bf16 pair on a part without AMX (Cooper Lake: AVX512_BF16) is the vector units' again
    cooper = [h for h in catalog if h.id == "xeon-gold-6330h"]
    assert group(bf16, cooper) == "conv"


def test_a_pair_no_factor_explains_sets_none() -> None:
    """The LSTM at bf16 on AMX (eager / OpenVINO 0.03-0.04): its step is a copy kernel's, not its GEMMs'."""
    params, catalog = calibration().of("cpu"), load()
    parts = emerald(pair(1.0)).parts(catalog)
    bert = pair(1.0, "bert_base", Precision.bf16)
    floor, ceiling = modelled_ratios(bert, parts, params, [float(GRID[0]), float(GRID[-1])])
    at_third = modelled_ratios(bert, parts, params, [0.3])[0]
    far_below = pair(floor / 4, "bert_base", Precision.bf16)
    assert needed(far_below, parts, params) is None
    assert unreached(far_below, parts, params) == (pytest.approx(floor), pytest.approx(ceiling))
    assert unreached(pair(at_third, "bert_base", Precision.bf16), parts, params) is None
    # it does not pull its class's factor: the other pair alone sets it
    found = factors([emerald(pair(at_third, "bert_base", Precision.bf16), far_below)], catalog, params)
    assert found == {"gemm-tile": pytest.approx(0.3, rel=1e-3)}


def test_the_shipped_pairs_read_and_set_the_shipped_factors() -> None:
    machines = shipped().machines
    assert len(machines) >= 3 and all(m.parts(load()) for m in machines)
    assert 0.3 < calibration().eager_kernel["cpu"] < 1.0
    assert 0.3 < calibration().eager_conv["cpu"] < calibration().eager_kernel["cpu"]  # the reorders cost more
    cpu = calibration().of("cpu")
    assert (cpu.eager_kernel, cpu.eager_conv) == (calibration().eager_kernel["cpu"], calibration().eager_conv["cpu"])
    # on AMX's tiles eager PyTorch reaches far less: an Emerald Rapids VM's bf16 pairs
    assert calibration().eager_conv_tile["cpu"] < 0.5 * cpu.eager_conv
    assert calibration().eager_kernel_tile["cpu"] < 0.5 * cpu.eager_kernel
    assert (cpu.eager_kernel_tile, cpu.eager_conv_tile) == (
        calibration().eager_kernel_tile["cpu"],
        calibration().eager_conv_tile["cpu"],
    )
    gpu = calibration().of("gpu")
    assert gpu.eager_kernel == gpu.eager_conv == 1.0  # GPUs: the same cuDNN and cuBLAS either way
    assert gpu.eager_conv_tile is gpu.eager_kernel_tile is None


def test_a_pair_with_no_throughput_is_refused() -> None:
    with pytest.raises(ValidationError):
        Pair(
            workload="resnet50",
            task=Task.infer,
            precision=Precision.fp32,
            batch=1,
            threads=2,
            eager=0.0,
            graph_runtime="onnxruntime-cpu",
            graph=1.0,
        )


def test_pooled_holds_each_machine_out_with_one_factor_for_both_classes() -> None:
    params, catalog = calibration().of("cpu"), load()
    parts = machine("x", 1.0).parts(catalog)
    conv = {f: modelled_ratios(pair(1.0), parts, params, [f])[0] for f in (0.5, 0.6)}
    gemm = modelled_ratios(pair(1.0, "bert_base"), parts, params, [0.9])[0]
    machines = [machine("a", conv[0.5]), machine("b", conv[0.6], pair(gemm, "bert_base"))]
    split = {name: held for name, _pair, held, _bare in leave_one_machine_out(machines, catalog, params)}
    pooled = {name: held for name, _pair, held, _bare in leave_one_machine_out(machines, catalog, params, pooled=True)}
    # apart, "a" takes b's convolution factor alone; pooled, the median of b's 0.6 and 0.9
    assert split["a"] == pytest.approx(conv[0.6], rel=1e-3)
    pooled_factor = (0.6 * 0.9) ** 0.5
    assert pooled["a"] == pytest.approx(modelled_ratios(pair(1.0), parts, params, [pooled_factor])[0], rel=1e-3)
