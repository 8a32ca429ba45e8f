"""How fast one CPU core streams memory on its own: the **core stream**, per microarchitecture.

A CPU's few threads get a share of the socket's bandwidth (app/perfmodel/model.py, ``scaled``): four
times their share of the cores, since a few cores already draw most of what the channels give. What
bounds one core, though, is how many cache-line misses it keeps in flight, not the channels: on every
Intel Xeon VM here one thread copies at 11-13 GB/s, where the share rule gave two threads of a 56-core
Sapphire Rapids part (307 GB/s) 44 GB/s, and the language model's 64-token prefill on the catalog's
parts came out 2.0-2.6x what those VMs measured. AMD's cores stream faster, and faster each generation
(Zen 3 15 GB/s, Zen 4 25, Zen 5 36). So ``threads`` cores stream at most ``threads`` times the core
stream of their architecture, whatever the share rule gives.

Measured, not derived or fitted: the ``copy_256mb`` figure at one thread (bytes read and written) of
every kept run of benchmarks/llm_cpu.toml, benchmarks/llm_cpu_threads.toml and
benchmarks/llm_prefill_threads.toml (benchmarks/data), each run's CPU named by its CPUID as
benchmarks/lab_cpu.py names a lab VM's generation; per architecture the median over the VMs that may be it
of each VM's median over its runs (a VM weighs once). ``benchmarks/core_stream.py --write`` makes
app/perfmodel/data/core_stream.json. An architecture no run measured keeps the share rule alone (no bound):
say so rather than guess.
"""

from __future__ import annotations

import math
from functools import lru_cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

PATH = Path(str(resources.files("app.perfmodel").joinpath("data/core_stream.json")))


class CoreStream(BaseModel):
    """One core's copy bandwidth per CPU microarchitecture, as benchmarks/core_stream.py measured it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    about: str = Field(description="What measured it and how it is used.")
    gb_s: dict[str, float] = Field(description="Catalog architecture -> one core's copy bandwidth, GB/s.")
    runs: dict[str, list[str]] = Field(
        description="Catalog architecture -> the kept runs its figure is made of (per VM, then over VMs)."
    )

    def bandwidth(self, architecture: str | None) -> float:
        """Bytes per second one core of ``architecture`` streams on its own; inf where no run measured it."""
        found = self.gb_s.get(architecture or "")
        return found * 1e9 if found else math.inf


@lru_cache(maxsize=1)
def shipped() -> CoreStream:
    return CoreStream.model_validate_json(PATH.read_text(encoding="utf-8"))
