"""A catalog CPU as a lab machine's probe saw it: the part's peaks, bounded by the instructions the
probe found.

A virtual machine may hide what its host has. This project's Emerald Rapids VM showed AVX-512 BF16 and
FP16 but no AMX, and ran eager bf16 at 0.57-0.84x its fp32, where the catalog's Emerald Rapids parts
have AMX bf16 peaks at 16x their fp32 ones. A device pinned to such a part and modelled with AMX would
measure a fifth of its modelled bf16, and that ratio, the lab's correction for (runtime, bf16, cpu),
would reach every catalog CPU. So a lab CPU is modelled with the peaks its own instructions can reach:

- no AMX-BF16: bf16 at AVX512_BF16's rate, twice the FP32 FMAs' (VDPBF16PS: two BF16 products per FP32
  lane), or none without it (PyTorch then refuses bf16, app/bench/precision.py);
- no AMX-FP16: fp16 at AVX512_FP16's, twice FP32 (32 FP16 lanes in 512 bits), or none;
- no AMX-INT8: int8 at VNNI's, four times FP32 (VPDPBUSD: four products per 32-bit lane), else twice
  (VPMADDUBSW and VPMADDWD: oneDNN's int8 before VNNI);
- no AVX-512 on a part whose FP32 peak counts 512-bit FMAs: the FP32 rate of two 256-bit FMAs.

Each bound only lowers a peak the catalog gives (never adds one), and only on x86, where the probe
lists these features (app/probes/cpu.py). A probe that listed nothing (an old agent's spec) bounds
nothing. The part keeps its id with ``PROBED_SUFFIX`` and the reason, so that what the model says of
the part as sold never mixes with what it says of this device.
"""

from __future__ import annotations

from collections.abc import Collection

from app.catalog import CatalogHardware

PROBED_SUFFIX = "@probed"
AVX2_FLOP_PER_CYCLE = 32.0
"""FP32 FLOPs per cycle per core of two 256-bit FMA pipes."""
BOUNDED = "bounded by this machine's probe: "
PARTS = "; the part's: "
"""How ``sources`` says a peak is the probe's bound: '<BOUNDED>bf16_tflops: no amx_bf16; ...<PARTS>derived: ...'."""
X86_MARKERS = {"sse4_2", "avx", "avx2", "fma"}
"""Features only an x86 probe lists: an ARM probe's list has none of them."""


_BOUNDS: tuple[tuple[str, str, tuple[tuple[frozenset[str], float, str], ...]], ...] = (
    ("peak_bf16_tflops", "amx_bf16", ((frozenset({"avx512_bf16"}), 2.0, "avx512_bf16"),)),
    ("peak_fp16_tflops", "amx_fp16", ((frozenset({"avx512_fp16"}), 2.0, "avx512_fp16"),)),
    (
        "peak_int8_tops",
        "amx_int8",
        ((frozenset({"avx512_vnni", "avx_vnni"}), 4.0, "VNNI"), (frozenset(), 2.0, "no VNNI")),
    ),
)
"""Per peak: the AMX feature that reaches the catalog's figure, and without it, the first of the rates
(times the FP32 peak) whose features the probe lists (none needed: always), named for the reason."""


def vector_isa(features: Collection[str]) -> str | None:
    """A machine's vector instruction set as the catalog's ``isa`` begins, from its probe's ISA features:
    'AVX-512', 'AVX2', or None (what MKL's code on it depends on, app/perfmodel/weight_passes.py)."""
    return "AVX-512" if "avx512f" in features else "AVX2" if "avx2" in features else None


def as_probed(entry: CatalogHardware, features: Collection[str] | None) -> CatalogHardware:
    """``entry`` with the peaks ``features`` (the probe's ISA features) can reach, and without avx512f its
    instruction set as AVX2's (the code its BLAS then runs, app/perfmodel/weight_passes.py); ``entry``
    itself where they bound nothing, where the probe listed nothing, or for a GPU or a non-x86 CPU."""
    if entry.kind != "cpu" or not features or not X86_MARKERS & set(features):
        return entry
    have = set(features)
    changed: dict[str, float | str | None] = {}
    why: dict[str, str] = {}
    fp32 = entry.peak_fp32_tflops
    per_cycle = flop_per_cycle(entry)
    if fp32 and per_cycle and per_cycle > AVX2_FLOP_PER_CYCLE * 1.001 and "avx512f" not in have:
        fp32 = fp32 * AVX2_FLOP_PER_CYCLE / per_cycle
        changed["peak_fp32_tflops"] = fp32
        why["peak_fp32_tflops"] = "no avx512f: two 256-bit FMAs a cycle"
    for field, amx, rates in _BOUNDS:
        given = getattr(entry, field)
        if not given or not fp32 or amx in have:
            continue
        rate = next(((times, name) for needs, times, name in rates if not needs or needs & have), None)
        if rate is None:
            changed[field] = None
            why[field] = f"no {amx} and no {' or '.join(sorted(n for r in rates for n in r[0]))}: no such math"
        elif fp32 * rate[0] < given * 0.999:
            changed[field] = fp32 * rate[0]
            why[field] = f"no {amx}; {rate[1]}: {rate[0]:g}x fp32"
    if "avx512f" not in have and (entry.isa or "").startswith("AVX-512"):
        changed["isa"] = "AVX2 (the probe lists no avx512f)"  # what its BLAS runs (app/perfmodel/weight_passes.py)
        why["isa"] = "no avx512f: AVX2 code"
    if not changed:
        return entry
    sources = dict(entry.sources)
    for field, reason in why.items():
        sources[field] = f"{BOUNDED}{field.removeprefix('peak_')}: {reason}{PARTS}{sources.get(field, 'the catalog')}"
    return entry.model_copy(update={**changed, "id": entry.id + PROBED_SUFFIX, "sources": sources})


def bounded(entry: CatalogHardware, fields: Collection[str | None] | None = None) -> list[str]:
    """What a probe bounded on ``entry`` (made by ``as_probed``), of ``fields`` (every peak where None), in
    words; empty for a part as sold."""
    return [
        text.removeprefix(BOUNDED).split(PARTS)[0]
        for field, text in entry.sources.items()
        if text.startswith(BOUNDED) and (fields is None or field in fields)
    ]


def flop_per_cycle(entry: CatalogHardware) -> float | None:
    """The part's FP32 FLOPs per cycle per core at its base clock (its peak's own terms)."""
    if not (entry.peak_fp32_tflops and entry.cores and entry.base_ghz):
        return None
    return entry.peak_fp32_tflops * 1e3 / (entry.cores * entry.base_ghz)
