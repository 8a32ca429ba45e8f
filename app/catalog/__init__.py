"""The hardware catalog: specs of hardware anyone may buy, shipped with the package.

Matching a probed device to an entry is exact on purpose: a driver-reported name must be one of
an entry's aliases (GPUs), or the CPU model name must be an alias or match an entry's pattern. No
match gives ``None`` and a reason; a near miss is never taken for a match. The agent matches
against the shipped catalog; the server matches again with the lab's entries and aliases on top.

This package is pure: data, loading, layering (``lab``) and matching. Reading and writing the
lab's changes is app/db/catalog.py's.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from importlib import resources
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from app.contracts.catalog import FORM_FACTOR_TEXT, FormFactor, LinkBandwidth
from app.errors import NotFoundError


class CatalogHardware(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    """One part. Peaks are dense (no sparsity); tensor peaks accumulate in FP32 unless named ``acc16``.
    ``sources`` names, per field, the dataset row it was copied from or the rule it was derived by; for a
    null field it may say why no figure is given ('none: ...' the part lacks it, 'unknown: ...' no source)."""

    id: str
    kind: Literal["gpu", "cpu"]
    vendor: str
    name: str
    aliases: list[str] = Field(default_factory=list)
    patterns: list[str] = Field(default_factory=list)
    architecture: str | None = None
    """GPU architecture (volta, turing, ampere, ada, hopper, blackwell, cdna2...) or CPU microarchitecture."""
    segment: str | None = None
    """datacenter, workstation, consumer, embedded (GPUs); server, desktop, workstation (CPUs)."""
    isa: str | None = None
    peak_fp32_tflops: float | None = None
    """Plain FP32 vector math (CUDA cores, AVX FMAs)."""
    peak_tf32_tflops: float | None = None
    peak_bf16_tflops: float | None = None
    peak_fp16_tflops: float | None = None
    peak_fp16_acc16_tflops: float | None = None
    """FP16 tensor math accumulating in FP16 (GeForce runs it at twice its FP32-accumulate rate)."""
    peak_fp8_tflops: float | None = None
    peak_int8_tops: float | None = None
    memory_gb: float | None = None
    memory_bandwidth_gb_s: float | None = None
    l2_mb: float | None = None
    l3_mb: float | None = None
    tdp_w: float | None = None
    power_limit_min_w: float | None = None
    power_limit_max_w: float | None = None
    sm_count: float | None = None
    """Streaming multiprocessors (NVIDIA), compute units (AMD), Xe cores (Intel)."""
    boost_mhz: float | None = None
    pcie_gen: float | None = None
    pcie_lanes: float | None = None
    nvlink_gb_s: LinkBandwidth | None = None
    """Bidirectional GPU-to-GPU link bandwidth per GPU (NVLink, Infinity Fabric, Xe Link). Null where no
    source gives it; ``sources['nvlink_gb_s']`` then says why ('none: ...' for a part with no such link)."""
    form_factor: FormFactor | None = Field(default=None, description=FORM_FACTOR_TEXT)
    cores: float | None = None
    threads: float | None = None
    base_ghz: float | None = None
    all_core_ghz: float | None = None
    max_ghz: float | None = None
    memory_channels: float | None = None
    memory_mt_s: float | None = None
    release_date: str | None = None
    release_price_usd: float | None = None
    price_usd: float | None = None
    price_date: str | None = None
    """When ``price_usd`` was quoted (its source is ``sources['price_usd']``)."""
    sources: dict[str, str] = Field(default_factory=dict)


def _normalise(name: str) -> str:
    return re.sub(r"[\s_\-]+", " ", name).strip().lower()


@lru_cache(maxsize=1)
def _by_id() -> dict[str, CatalogHardware]:
    return {entry.id: entry for entry in load()}


@lru_cache(maxsize=1)
def load() -> tuple[CatalogHardware, ...]:
    text = resources.files("app.catalog").joinpath("data/hardware.json").read_text(encoding="utf-8")
    return tuple(CatalogHardware.model_validate(e) for e in json.loads(text)["entries"])


def get(catalog_id: str) -> CatalogHardware:
    entry = _by_id().get(catalog_id)
    if entry is not None:
        return entry
    raise NotFoundError(f"no catalog entry {catalog_id!r}", hint="see app/catalog/data/hardware.json")


MatchCode = Literal["alias", "pattern", "ambiguous", "generic", "unknown"]
"""Why a name matched (an exact alias, a CPU model-name pattern) or did not."""


class Match(NamedTuple):
    """What a name matched (``catalog_id``, None for no match), why as a code, and why in words."""

    catalog_id: str | None
    note: str
    code: MatchCode


GENERIC_CPU_NAMES = re.compile(
    r"^(Intel(\(R\))? Xeon(\(R\))? (CPU|Processor)( \([^)]*\))?|Intel Core Processor( \([^)]*\))?"
    r"|AMD EPYC(-\w+)?( Processor)?( \([^)]*\))?|Common KVM processor|QEMU Virtual CPU.*)$",
    re.IGNORECASE,
)
"""Hypervisor model names: bare brands and QEMU's named CPU models ('Intel Xeon Processor (Icelake)',
'AMD EPYC-Rome Processor'), which name a generation at most, never a part."""
ADD_HINT = "add it to app/catalog/curated/ (then scripts/build_catalog.py), or name it in a lab entry's aliases"


def is_generic_cpu_name(name: str) -> bool:
    """A model name a hypervisor reports for any part ('AMD EPYC'): it identifies nothing."""
    return GENERIC_CPU_NAMES.match(name.strip()) is not None


class Matcher:
    """Exact matching against one set of entries: the shipped catalog (the agent) or the shipped
    catalog layered with the lab's entries and aliases (the server, app/db/catalog.py)."""

    def __init__(self, entries: Iterable[CatalogHardware]) -> None:
        self.entries = tuple(entries)
        self._aliases: dict[tuple[str, str], list[CatalogHardware]] = {}
        for entry in self.entries:
            for alias in {_normalise(a) for a in entry.aliases}:
                self._aliases.setdefault((entry.kind, alias), []).append(entry)
        # compiled once: ~600 CPUs' patterns overflow re's own cache, which then recompiles every one
        self._patterns = [(e, [_compiled(p) for p in e.patterns]) for e in self.entries if e.kind == "cpu"]

    def gpu(self, reported_name: str) -> Match:
        """For the name a driver reports, e.g. 'NVIDIA H100 80GB HBM3' (the SXM5 part)."""
        hits = self._aliases.get(("gpu", _normalise(reported_name)), [])
        if len(hits) == 1:
            return Match(hits[0].id, f"driver name {reported_name!r} is {hits[0].name}", "alias")
        if hits:
            ids = ", ".join(sorted(e.id for e in hits))
            return Match(None, f"driver name {reported_name!r} is ambiguous between {ids}", "ambiguous")
        return Match(None, f"no catalog entry has the driver name {reported_name!r}; {ADD_HINT}", "unknown")

    def cpu(self, model_name: str) -> Match:
        """For a CPU model name as /proc/cpuinfo gives it: an exact alias, else a model-name pattern."""
        if is_generic_cpu_name(model_name):
            return Match(
                None,
                f"the CPU reports a generic model name {model_name!r} (usual under a hypervisor), "
                "which does not identify the part",
                "generic",
            )
        code: MatchCode = "alias"
        hits = self._aliases.get(("cpu", _normalise(model_name)), [])
        if not hits:
            code = "pattern"
            hits = [e for e, patterns in self._patterns if any(p.search(model_name) for p in patterns)]
        if len(hits) == 1:
            return Match(hits[0].id, f"model name {model_name!r} is {hits[0].name}", code)
        if hits:
            ids = ", ".join(sorted(e.id for e in hits))
            return Match(None, f"model name {model_name!r} is ambiguous between {ids}", "ambiguous")
        return Match(None, f"no catalog entry matches the CPU {model_name!r}; {ADD_HINT}", "unknown")

    def device(self, kind: Literal["gpu", "cpu"], name: str) -> Match:
        return self.cpu(name) if kind == "cpu" else self.gpu(name)

    def any(self, name: str) -> tuple[Literal["gpu", "cpu"] | None, Match]:
        """A name of either kind (a GPU's driver name first): the kind it matched as, and the match."""
        gpu = self.gpu(name)
        if gpu.code != "unknown":
            return "gpu", gpu
        cpu = self.cpu(name)
        if cpu.code != "unknown":
            return "cpu", cpu
        note = f"no catalog entry has the name {name!r} as a GPU driver name or a CPU model name; {ADD_HINT}"
        return None, Match(None, note, "unknown")


@lru_cache(maxsize=1)
def shipped_matcher() -> Matcher:
    return Matcher(load())


@lru_cache(maxsize=4096)
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


LONGEST_NAME = 128
"""The longest text ``meant`` reads as a name: driver and CPU model names are a few dozen characters."""


def meant(entries: Mapping[str, CatalogHardware], asked: str) -> list[CatalogHardware]:
    """The entries someone who asked for the catalog id ``asked``, which no entry has, most likely meant:
    the one ``asked`` names (an entry's name, a GPU driver name, a CPU model name), else up to three ids
    spelled closest to it. Empty when nothing is close, and for text longer than any name (``LONGEST_NAME``):
    no search of every entry's patterns for it."""
    if len(asked) > LONGEST_NAME:
        return []
    named = [e for e in entries.values() if _normalise(e.name) == _normalise(asked)]
    if len(named) == 1:
        return named
    _, found = Matcher(entries.values()).any(asked)
    if found.catalog_id is not None and found.catalog_id in entries:
        return [entries[found.catalog_id]]
    close = difflib.get_close_matches(asked.strip().lower(), list(entries), n=3, cutoff=0.75)
    return [entries[c] for c in close]


def match_gpu(reported_name: str) -> tuple[str | None, str]:
    """(catalog id, why) against the shipped catalog: what the agent can know."""
    found = shipped_matcher().gpu(reported_name)
    return found.catalog_id, found.note


def match_cpu(model_name: str) -> tuple[str | None, str]:
    """(catalog id, why) for a CPU model name, against the shipped catalog."""
    found = shipped_matcher().cpu(model_name)
    return found.catalog_id, found.note
