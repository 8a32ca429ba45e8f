"""The hardware catalog: specs of hardware anyone may buy, shipped with the package.

Matching a probed device to an entry is exact on purpose: a driver-reported name must be one of
an entry's aliases (GPUs), or the CPU model name must match an entry's pattern. No match gives
``None`` and a reason; a near miss is never taken for a match.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.errors import NotFoundError


class CatalogHardware(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    id: str
    kind: Literal["gpu", "cpu"]
    vendor: str
    name: str
    aliases: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)
    isa: str | None = None
    peak_fp32_tflops: float | None = None
    peak_tf32_tflops: float | None = None
    peak_bf16_tflops: float | None = None
    peak_fp16_tflops: float | None = None
    peak_int8_tops: float | None = None
    memory_gb: float | None = None
    memory_bandwidth_gb_s: float | None = None
    tdp_w: float | None = None
    power_limit_min_w: float | None = None
    power_limit_max_w: float | None = None
    sm_count: float | None = None
    cores: float | None = None
    base_ghz: float | None = None
    max_ghz: float | None = None
    release_date: str | None = None
    release_price_usd: float | None = None
    price_usd: float | None = None
    sources: dict[str, str] = Field(default_factory=dict)


def _normalise(name: str) -> str:
    return re.sub(r"[\s_\-]+", " ", name).strip().lower()


@lru_cache(maxsize=1)
def load() -> tuple[CatalogHardware, ...]:
    text = resources.files("app.catalog").joinpath("data/hardware.json").read_text(encoding="utf-8")
    return tuple(CatalogHardware.model_validate(e) for e in json.loads(text)["entries"])


def get(catalog_id: str) -> CatalogHardware:
    for entry in load():
        if entry.id == catalog_id:
            return entry
    raise NotFoundError(f"no catalog entry {catalog_id!r}", hint="see app/catalog/data/hardware.json")


def match_gpu(reported_name: str) -> tuple[str | None, str]:
    """(catalog id, why) for the name a driver reports, e.g. 'NVIDIA H100 80GB HBM3' (the SXM5 part)."""
    wanted = _normalise(reported_name)
    hits = [e for e in load() if e.kind == "gpu" and wanted in {_normalise(a) for a in e.aliases}]
    if len(hits) == 1:
        return hits[0].id, f"driver name {reported_name!r} is {hits[0].name}"
    if len(hits) > 1:
        ids = ", ".join(e.id for e in hits)
        return None, f"driver name {reported_name!r} is ambiguous between {ids}"
    return None, f"no catalog entry has the driver name {reported_name!r}; add it in scripts/build_catalog.py"


GENERIC_CPU_NAMES = re.compile(
    r"^(Intel\(R\) Xeon\(R\) (CPU|Processor)|AMD EPYC( Processor)?|Common KVM processor|QEMU Virtual CPU.*)$",
    re.IGNORECASE,
)


def match_cpu(model_name: str) -> tuple[str | None, str]:
    """(catalog id, why) for a CPU model name as /proc/cpuinfo gives it."""
    if GENERIC_CPU_NAMES.match(model_name.strip()):
        return None, (
            f"the CPU reports a generic model name {model_name!r} (usual under a hypervisor), "
            "which does not identify the part"
        )
    hits = [e for e in load() if e.kind == "cpu" and any(re.search(p, model_name) for p in e.patterns)]
    if len(hits) == 1:
        return hits[0].id, f"model name {model_name!r} is {hits[0].name}"
    if len(hits) > 1:
        return None, f"model name {model_name!r} is ambiguous between {', '.join(e.id for e in hits)}"
    return None, f"no catalog entry matches the CPU {model_name!r}; add it in scripts/build_catalog.py"
