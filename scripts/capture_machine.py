"""Capture this machine as a probe fixture that the tests replay (tests/fixtures/machines/README.md).

    python scripts/capture_machine.py tests/fixtures/machines/NAME [--what "one line on the machine"]

Runs the real probes on the live host through RecordingSources, so the folder holds exactly what
they read (fs/, cmd/), and adds host.json (the facts a replay cannot read from files), probe.json
(NVML's readings of each GPU and what torch says of it, as testkit.nvml.ReplayNvml replays them),
nvidia-smi -q's text to check the replay against, and spec.json (what the live probe answered).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.probes import probe_machine
from app.probes.sources import RecordingSources
from testkit.nvml import capture_gpu


def torch_facts() -> dict[str, Any]:
    try:
        import torch
    except ImportError:
        return {}
    facts: dict[str, Any] = {"torch": torch.__version__, "cuda": torch.version.cuda}
    if torch.cuda.is_available():
        props = torch.cuda.get_device_properties(0)
        facts |= {
            "cudnn": torch.backends.cudnn.version(),
            "gpu_name": props.name,
            "gpu_sm": props.multi_processor_count,
            "gpu_mem_gb": round(props.total_memory / 1e9, 1),
            "gpu_cc": f"{props.major}.{props.minor}",
            "gpu_l2_mb": round(getattr(props, "L2_cache_size", 0) / 2**20, 1),
        }
    return facts


def nvml_gpus() -> list[dict[str, Any]]:
    try:
        import pynvml
    except ImportError:
        return []
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return []
    try:
        return [capture_gpu(pynvml, i) for i in range(pynvml.nvmlDeviceGetCount())]
    finally:
        pynvml.nvmlShutdown()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--what", default="", help="one line saying what the machine is")
    args = parser.parse_args()
    root: Path = args.folder
    root.mkdir(parents=True, exist_ok=True)
    sources = RecordingSources(root)
    spec = probe_machine(sources)
    host = {
        "machine": sources.machine(),
        "hostname": spec.hostname,
        "affinity": sources.affinity(),
        "memory": spec.memory.model_dump(mode="json"),
        "software": spec.software.model_dump(mode="json"),
    }
    (root / "host.json").write_text(json.dumps(host, indent=1) + "\n")
    gpus = nvml_gpus()
    env = {"python": platform.python_version(), **torch_facts(), "nvml": gpus[0] if gpus else None, "nvml_all": gpus}
    probe = {"captured": datetime.now(UTC).date().isoformat(), "what": args.what, "env": env}
    (root / "probe.json").write_text(json.dumps(probe, indent=1) + "\n")
    smi = shutil.which("nvidia-smi")
    if smi:
        env = {**os.environ, "LC_ALL": "C"}
        done = subprocess.run([smi, "-q"], capture_output=True, text=True, check=False, env=env)
        if done.returncode == 0:
            (root / "nvidia-smi-q.txt").write_text(done.stdout)
    (root / "spec.json").write_text(spec.model_dump_json(indent=1) + "\n")
    print(f"captured {spec.hostname}: {len(spec.devices)} devices, {len(gpus)} GPUs read by NVML, into {root}")


if __name__ == "__main__":
    main()
