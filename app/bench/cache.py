"""Where the bench keeps what it can remake (ONNX exports, workload profiles): ``HWADVISOR_CACHE_DIR``,
default ``$XDG_CACHE_HOME/hwadvisor``. The bench reads no server setting."""

from __future__ import annotations

import functools
import hashlib
import os
import re
from pathlib import Path

DEFINITIONS = ("models", "workloads", "variants", "keras_models.py")
"""What defines the zoo's models, under app/bench: the torch modules, the workloads' shapes and tiny
sizes, the variants' surgery, the Keras definitions."""


def cache_root() -> Path:
    configured = os.environ.get("HWADVISOR_CACHE_DIR")
    if configured:
        return Path(configured)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "hwadvisor"


@functools.cache
def definitions_digest() -> str:
    """A digest of the source of DEFINITIONS (read, not imported), for the name of every file the bench
    makes from a model (an ONNX export, an OpenVINO IR, a GGUF, a .tflite): a changed definition is
    exported again, where a file named by workload and versions alone would be run stale."""
    return digest_of(Path(__file__).parent)


def digest_of(bench: Path) -> str:
    """``definitions_digest`` of the DEFINITIONS under ``bench``: their paths under it and their bytes."""
    digest = hashlib.sha256()
    for name in DEFINITIONS:
        path = bench / name
        for source in sorted(path.rglob("*.py")) if path.is_dir() else [path]:
            digest.update(source.relative_to(bench).as_posix().encode())
            digest.update(source.read_bytes())
    return digest.hexdigest()[:10]


def forget_stale(path: Path) -> None:
    """Delete what ``path``, just made, replaces: the same file (workload, size, form, versions) made from
    other definitions, whose name has another digest or none (before the digest named them). The cache
    would otherwise keep every one of them (a 1B language model's GGUF in fp32 is 5 GB)."""
    digest = definitions_digest()
    before, found, after = path.name.partition(f"-{digest}")
    if not found:
        return
    stale = re.compile(re.escape(before) + r"(?:-[0-9a-f]{10})?" + re.escape(after) + r"\Z")
    for sibling in path.parent.iterdir():
        if sibling.name != path.name and stale.match(sibling.name):
            sibling.unlink(missing_ok=True)
