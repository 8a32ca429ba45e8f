"""The plug-in families: one registration shape, metadata without torch, helpful unknown names."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from app import plugins
from app.errors import NotFoundError
from app.registry import Need, PluginInfo, Registry, describe


def test_every_family_is_described_without_importing_torch() -> None:
    """The server, the CLI's help and the dashboard read the families; none of them may pay for torch."""
    code = (
        "import json, sys\n"
        "from app import plugins\n"
        "rows = plugins.describe_all()\n"
        "print(json.dumps({'families': {k: [r['name'] for r in v] for k, v in rows.items()},"
        " 'torch': 'torch' in sys.modules, 'onnxruntime': 'onnxruntime' in sys.modules}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    found = json.loads(done.stdout)
    assert found["torch"] is False and found["onnxruntime"] is False
    families = found["families"]
    assert set(families) == set(plugins.FAMILIES)
    assert {"resnet50", "resnet20", "bert_base", "lstm"} <= set(families["workload"])
    assert {"torch-eager", "torch-compile", "onnxruntime-cpu", "onnxruntime-cuda"} <= set(families["runtime"])
    assert {"gemm_2048", "copy_256mb", "h2d_pinned_256mb"} <= set(families["primitive"])
    assert {"cpu", "memory", "nvidia", "power", "software"} <= set(families["probe"])
    assert {"nvml", "rapl", "estimate"} <= set(families["energy_meter"])
    assert {"int8-static", "pruned-30", "pruned-50", "lowrank-25", "lowrank-50"} <= set(families["variant"])
    assert all(families.values()), "every family has plug-ins"


def test_a_row_carries_what_the_dashboard_and_cli_show() -> None:
    rows = {row["name"]: row for row in plugins.describe_all()["workload"]}
    resnet = rows["resnet50"]
    assert resnet["tasks"] == ["infer", "train"]
    assert resnet["details"]["parameters"] == 25_557_032
    assert resnet["available"] is True and resnet["reason"] is None
    runtime = {row["name"]: row for row in plugins.describe_all()["runtime"]}["onnxruntime-cpu"]
    assert runtime["tasks"] == ["infer"] and runtime["needs"] == ["onnxruntime", "onnx"]


class _Missing:
    info = PluginInfo(
        name="needs-a-ghost",
        description="x",
        needs=(Need("no_such_module_xyz", "no-such-dist", install="pip install ghost"),),
    )


def test_a_plugin_whose_package_is_missing_is_listed_with_the_reason() -> None:
    family: Registry[type[_Missing]] = Registry("thing")
    family.register(_Missing)
    (row,) = describe(family)
    assert row["available"] is False
    assert row["reason"] == "needs no-such-dist (pip install ghost)"


def test_an_unknown_name_lists_what_exists() -> None:
    with pytest.raises(NotFoundError) as caught:
        plugins.registry("workload").get("resnet5")
    assert "resnet50" in str(caught.value.hint)
    with pytest.raises(NotFoundError):
        plugins.registry("no-such-family")


def test_a_name_cannot_be_registered_twice() -> None:
    family: Registry[type[_Missing]] = Registry("thing")
    family.register(_Missing)
    other = type("Other", (), {"info": _Missing.info})
    with pytest.raises(ValueError, match="registered twice"):
        family.register(other)


def test_a_runtime_reports_its_library_version() -> None:
    import importlib.metadata

    runtime = plugins.registry("runtime").get("onnxruntime-cpu")
    assert runtime.version() == importlib.metadata.version("onnxruntime")


def test_threads_asking_a_family_at_once_each_see_all_of_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first caller imports the family; the others wait for all of it, not for what is in so far
    (the server's request threads ask at once after a start; a machine was once probed without its GPU)."""
    package = tmp_path / "racing_family"
    (package / "plugins").mkdir(parents=True)
    (package / "__init__.py").write_text(
        "from app.registry import Registry\nfamily = Registry('racing', 'racing_family.plugins')\n"
    )
    (package / "plugins" / "__init__.py").write_text("")
    for name in "abcde":
        (package / "plugins" / f"{name}.py").write_text(
            "import time\n"
            "from app.registry import PluginInfo\n"
            "from racing_family import family\n"
            "time.sleep(0.05)  # an import that takes a while, as torch-free plug-in modules still do\n"
            "@family.register\n"
            f"class Plugin:\n    info = PluginInfo(name={name!r}, description='')\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    from racing_family import family  # type: ignore[import-not-found]

    barrier = threading.Barrier(8)

    def ask(_: int) -> list[str]:
        barrier.wait()
        return list(family.names())

    with ThreadPoolExecutor(8) as pool:
        seen = list(pool.map(ask, range(8)))
    assert seen == [list("abcde")] * 8
