"""The files the bench makes from a model are named by the zoo's definitions: a changed model is
exported again, never run from a stale file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import app.bench
from app.bench.cache import DEFINITIONS, definitions_digest, digest_of
from app.bench.onnx_export import model_path
from app.bench.workloads import get_workload

BENCH = Path(app.bench.__file__).parent


def copy_of_definitions(to: Path) -> Path:
    for name in DEFINITIONS:
        source = BENCH / name
        if source.is_dir():
            shutil.copytree(source, to / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy(source, to / name)
    return to


def test_a_copy_of_the_definitions_has_their_digest(tmp_path: Path) -> None:
    assert digest_of(copy_of_definitions(tmp_path)) == definitions_digest()


@pytest.mark.parametrize("change", ["edited", "removed", "added"])
def test_a_changed_definition_changes_the_digest(tmp_path: Path, change: str) -> None:
    copied = copy_of_definitions(tmp_path)
    module = copied / "models" / "cnn.py"
    if change == "edited":
        module.write_text(module.read_text().replace("(64, 192, 384, 256, 4096)", "(64, 192, 384, 256, 2048)"))
    elif change == "removed":
        module.unlink()
    else:
        (copied / "workloads" / "vgg16.py").write_text('"""A new workload."""\n')
    assert digest_of(copied) != definitions_digest()


def test_the_onnx_export_is_named_by_the_digest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HWADVISOR_CACHE_DIR", str(tmp_path))
    path = model_path(get_workload("fcn_s"), "tiny")
    assert definitions_digest() in path.name and path.is_file()
