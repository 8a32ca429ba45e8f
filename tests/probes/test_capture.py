"""Capturing this machine as a fixture (RecordingSources) and replaying it gives the same description."""

from __future__ import annotations

import json
from pathlib import Path

from app.probes import probe_machine
from app.probes.sources import FixtureSources, RecordingSources
from testkit.nvml import ReplayNvml, capture_gpu


def test_a_captured_machine_replays_as_the_live_probe_saw_it(tmp_path: Path) -> None:
    live = probe_machine(RecordingSources(tmp_path), nvml=ReplayNvml([]), cuda_sm_counts={})
    assert (tmp_path / "fs" / "proc" / "cpuinfo").is_file()
    host = {"machine": "x86_64", "hostname": live.hostname, "memory": live.memory.model_dump(), "software": {}}
    (tmp_path / "host.json").write_text(json.dumps(host))
    replayed = probe_machine(FixtureSources(tmp_path), nvml=ReplayNvml([]), cuda_sm_counts={})
    assert replayed.cpu == live.cpu and replayed.fingerprint == live.fingerprint
    assert replayed.devices[0] == live.devices[0]


def test_capture_gpu_writes_what_the_replay_answers() -> None:
    original = ReplayNvml.from_probe_json(Path(__file__).parents[1] / "fixtures/machines/h200/probe.json")
    captured = capture_gpu(original, 0)
    replayed = ReplayNvml([captured])
    for name in ("nvmlDeviceGetName", "nvmlDeviceGetUUID", "nvmlDeviceGetPowerManagementLimit", "nvmlDeviceGetEccMode"):
        assert getattr(replayed, name)(0) == getattr(original, name)(0)
    assert captured == original.gpus[0] | {"driver": captured["driver"], "cuda_driver": captured["cuda_driver"]}
