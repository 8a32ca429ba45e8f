"""The shipped profiles (app/perfmodel/data/profiles.json) cover the zoo and agree with it.

They are data made by scripts/build_profiles.py; these tests fail when the zoo changed and the file
was not rebuilt. Read without torch, as the server reads them."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from app.bench.workloads import get_workload, workloads
from app.contracts import LLM_PRESETS, Precision, Task
from app.perfmodel.profile import OpClass, Profile, profiled, shipped

ROOT = Path(__file__).resolve().parents[2]
REBUILD = "rebuild it: python scripts/build_profiles.py"
COUNTED = {OpClass.conv, OpClass.gemm, OpClass.recurrent}
"""What WorkloadInfo.flops_per_sample holds: torch's FLOP counter sees convolutions and GEMMs (not
attention's fused kernel on the CPU); recurrent workloads add their LSTM layers by hand."""


def expected() -> set[tuple[str, Task, Precision]]:
    found = set()
    for name in workloads.names():
        info = get_workload(name).info
        for task in map(Task, info.tasks):
            for precision in map(Precision, info.precisions):
                if profiled(task, precision):
                    found.add((name, task, precision))
    return found


def test_every_zoo_workload_task_and_precision_is_shipped() -> None:
    have = set(shipped())
    assert not expected() - have, f"profiles.json lacks {sorted(expected() - have)}; {REBUILD}"
    assert not have - expected(), (
        f"profiles.json has profiles of no zoo workload {sorted(have - expected())}; {REBUILD}"
    )


@pytest.mark.parametrize("key", sorted(expected()), ids=lambda k: "-".join(map(str, k)))
def test_a_profile_is_of_the_zoos_workload(key: tuple[str, Task, Precision]) -> None:
    """Its shape is the workload's; its matrix FLOPs at batch 1 are the declared forward FLOPs
    (training: a little under 3x, the first layer computing no input gradient); attention FLOPs
    are the SDPA formula's, 4 x sequence^2 x hidden per sample and layer, forward."""
    profile = shipped()[key]
    workload = get_workload(key[0])
    assert profile.shape == workload.sample_shape(), REBUILD
    matrix = sum(b.flops.at(1) for b in profile.buckets if b.op_class in COUNTED)
    ratio = matrix / workload.info.flops_per_sample
    attention = sum(b.flops.at(1) for b in profile.buckets if b.op_class is OpClass.attention)
    if key[0].startswith("bert") and key[1] is Task.infer:
        hidden, layers = (1024, 24) if "large" in key[0] else (768, 12)
        sequence = profile.shape["sequence"]
        assert attention == pytest.approx(4 * sequence**2 * hidden * layers, rel=1e-5)
    if key[1] in (Task.prefill, Task.decode):  # the head runs on the last position only
        shape = LLM_PRESETS[key[0]].shape
        tokens = profile.shape["sequence"] if key[1] is Task.prefill else 1
        head = shape.vocabulary * shape.hidden
        assert matrix == pytest.approx(2 * ((shape.matmul_parameters - head) * tokens + head), rel=1e-5), REBUILD
        assert profile.memory.kv_cache.per_sample > 0 and profile.memory.kv_cache.per_step == 0
    elif key[1] is Task.infer:
        assert ratio == pytest.approx(1.0, rel=0.02), REBUILD
    else:
        assert 2.4 < ratio < 3.02, REBUILD
    assert 1 <= len(profile.buckets) <= 40
    assert profile.kernels() >= len(profile.buckets)
    assert profile.memory.weights >= 0.999 * workload.info.parameters  # a byte per weight at least (int8)


def test_the_file_is_compact_and_written_reproducibly() -> None:
    path = resources.files("app.perfmodel").joinpath("data/profiles.json")
    text = path.read_text(encoding="utf-8")
    assert len(text) < 3_000_000
    assert text == json.dumps(json.loads(text), sort_keys=True, indent=1) + "\n"
    keys = [(p["workload"], p["task"], p["precision"]) for p in json.loads(text)["profiles"]]
    assert keys == sorted(keys)


def test_profiles_load_without_torch() -> None:
    code = "import sys\nfrom app.perfmodel.profile import shipped\nprint(len(shipped()), 'torch' in sys.modules)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    count, torch_loaded = done.stdout.split()
    assert int(count) == len(expected()) and torch_loaded == "False"


def test_a_profile_predicts_more_work_for_a_bigger_batch() -> None:
    profile: Profile = shipped()[("resnet50", Task.train, Precision.bf16)]
    assert profile.flops(64) > profile.flops(32) > 0
    assert profile.memory.at(64) > profile.memory.at(32) > profile.memory.weights


def test_a_profile_this_machine_cannot_record_faithfully_is_kept_as_shipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """build_profiles keeps the shipped profile, and says so, where the profiler refuses to count a step
    this machine's torch runs unlike a GPU (a CPU without bf16 instructions and an LSTM)."""
    monkeypatch.syspath_prepend(str(ROOT / "scripts"))
    monkeypatch.setenv("HWADVISOR_CACHE_DIR", str(tmp_path / "cache"))
    import build_profiles

    from app.bench import profiling

    recorded = profiling.profile

    def refuse_bf16(workload: Any, task: Task, precision: Precision) -> Profile:
        if precision is Precision.bf16:
            raise profiling.NotRecordableHere(profiling.STEPWISE_RNN)
        return recorded(workload, task, precision)

    monkeypatch.setattr(profiling, "profile", refuse_bf16)
    build_profiles.build(tmp_path / "profiles.json", ["fcn_s"])
    made = {(p["task"], p["precision"]): p for p in json.loads((tmp_path / "profiles.json").read_text())["profiles"]}
    assert Profile.model_validate(made["infer", "bf16"]) == shipped()["fcn_s", Task.infer, Precision.bf16]
    assert Profile.model_validate(made["infer", "fp32"]) == shipped()["fcn_s", Task.infer, Precision.fp32]
