"""The files the bench makes from a model are named by the zoo's definitions: a changed model is
exported again, never run from a stale file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import app.bench
from app.bench.cache import DEFINITIONS, definitions_digest, digest_of, forget_stale
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


def test_a_file_made_anew_deletes_what_it_replaces_and_nothing_else(tmp_path: Path) -> None:
    digest = definitions_digest()
    made = tmp_path / f"resnet50-opset17-torch2.13.0-{digest}-tiny.onnx"
    stale = ["resnet50-opset17-torch2.13.0-0123456789-tiny.onnx", "resnet50-opset17-torch2.13.0-tiny.onnx"]
    kept = [
        f"resnet50-opset17-torch2.13.0-{digest}-tiny-int8.onnx",  # another form
        "resnet50-opset17-torch2.13.0-0123456789-tiny-int8.onnx",  # another form's own stale file: its own turn
        f"resnet50-opset17-torch2.12.0-{digest}-tiny.onnx",  # another torch
        f"resnet50-pruned-50-opset17-torch2.13.0-{digest}-tiny.onnx",  # another variant
        "resnet50-opset17-torch2.13.0-0123456789.onnx",  # another size
    ]
    for name in [made.name, *stale, *kept]:
        (tmp_path / name).write_bytes(b"")
    forget_stale(made)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([made.name, *kept])


def test_an_export_is_named_by_the_digest_and_one_made_again_leaves_one_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HWADVISOR_CACHE_DIR", str(tmp_path))
    workload = get_workload("resnet20")  # a small export: what is tested is its name
    path = model_path(workload, "tiny")
    assert definitions_digest() in path.name and path.is_file()
    older = path.with_name(path.name.replace(definitions_digest(), "0123456789"))
    path.rename(older)  # as an earlier version of the definitions left it
    assert model_path(workload, "tiny") == path and path.is_file()
    assert [p.name for p in path.parent.iterdir()] == [path.name]
