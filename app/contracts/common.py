"""The vocabulary every wire model shares: strict base, names, precisions, tasks, statuses, paging."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, ClassVar, Generic, Literal, Self, TypeVar

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field, model_validator

SCHEMA_VERSION: Literal[1] = 1
T = TypeVar("T")

Name = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9_.\-]*$")]
WorkloadName = Annotated[
    str, Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9_]*(/(infer|train|prefill|decode))?$")
]
DeviceId = Annotated[str, Field(min_length=1, max_length=16, pattern=r"^(cpu|cuda:[0-9]{1,2})$")]
VariantName = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[a-z0-9][a-z0-9\-]*$")]
"""A model variant (an optimised form of a workload: ``int8-static``, ``pruned-50``, ``lowrank-25``)."""
ORIGINAL = "none"
"""How a suite's grid and a results filter name the original model, whose results carry no variant."""
TEXT_MAX = 2000
Text = Annotated[str, Field(max_length=TEXT_MAX)]
INT32_MAX = 2**31 - 1  # what an INTEGER column holds on PostgreSQL
_CONTROL = re.compile(r"[\x01-\x1f\x7f-\x9f]")  # NUL: refused everywhere, by the Strict base
_LINE_BREAKS = re.compile(r"[\t\n\r]+")


def _plain_line(value: str) -> str:
    """A label is one line of plain text: tabs and line breaks become a space, and any other control
    character (an escape sequence, a backspace) is refused. A machine's hostname reaches an admin's
    terminal (``hwadvisor machines list``), where ESC [ 2 K would erase a line and print a forged one."""
    value = _LINE_BREAKS.sub(" ", value)
    if found := _CONTROL.search(value):
        raise ValueError(f"a label is plain text: control character {found.group()!r} is not allowed")
    return value


PLAIN_LINE = AfterValidator(_plain_line)
"""A text's rule where it is one line that reaches a terminal: a hostname, a label, a token's note."""
Label = Annotated[str, Field(min_length=1, max_length=200), PLAIN_LINE]
NonNegative = Annotated[float, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]


NUL = "\x00"


def nul_in(value: object, path: str = "") -> str | None:
    """Where a NUL character is in a value's text (a string, or the keys and items of its mappings
    and lists, nested models excepted: each checks its own), or None. PostgreSQL cannot store one
    in a text column, and no name, note or label needs one."""
    if isinstance(value, str):
        return (path or "the text") if NUL in value else None
    if isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str) and NUL in key:
                return f"a key of {path}" if path else "a key"
            found = nul_in(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
    elif isinstance(value, list | tuple | set | frozenset):
        for index, item in enumerate(value):
            found = nul_in(item, f"{path}.{index}" if path else str(index))
            if found:
                return found
    return None


class Strict(BaseModel):
    """Base of every wire model: unknown fields are errors, NaN and infinity are refused, and so is a
    NUL character in any text, at any depth (a 500 on PostgreSQL before, which cannot store one)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=False)
    refuses_nul: ClassVar[bool] = True

    @model_validator(mode="after")
    def _no_nul(self) -> Self:
        if self.refuses_nul:
            for name, value in self.__dict__.items():
                where = nul_in(value, name)
                if where:
                    raise ValueError(f"{where}: text may not contain a NUL character (\\x00)")
        return self


def _utc_in_range(value: datetime) -> datetime:
    try:
        value.astimezone(UTC)
    except OverflowError:
        raise ValueError("the time in UTC falls outside the years 1-9999") from None
    return value


Timestamp = Annotated[AwareDatetime, AfterValidator(_utc_in_range)]
"""A point in time from outside: with its UTC offset (a naive time is ambiguous, and cannot be
compared with an aware one), and within years 1-9999 once in UTC (the databases store UTC)."""


class Precision(StrEnum):
    fp32 = "fp32"
    tf32 = "tf32"
    bf16 = "bf16"
    fp16 = "fp16"
    int8 = "int8"
    int4 = "int4"
    """Weight-only 4-bit: a language model's linear weights stored in 4 bits with a scale per block,
    dequantised to 16 bits for the math (llama.cpp's Q4_0; AWQ and GPTQ on GPUs). No model runs its
    math in 4 bits here: the other workloads, the GEMM primitive and the catalog's peaks have no int4."""


MATH_PRECISIONS = tuple(p for p in Precision if p is not Precision.int4)
"""The precisions math runs in (a catalog peak, a GEMM, a model built in the type): all but int4."""


class Task(StrEnum):
    infer = "infer"
    train = "train"
    prefill = "prefill"
    """A language model reads a prompt of P tokens into its KV cache and gives the first token (TTFT)."""
    decode = "decode"
    """A language model generates one token per sequence from a KV cache of L tokens (time per output token)."""


class OpClass(StrEnum):
    """An operator class of a profile (app/perfmodel/profile.py); on the wire in a custom workload's buckets."""

    conv = "conv"
    gemm = "gemm"
    attention = "attention"
    recurrent = "recurrent"
    norm = "norm"
    elementwise = "elementwise"
    reduction = "reduction"
    movement = "movement"
    """Copies, concatenations, gathers (embeddings), layout changes."""
    optimizer = "optimizer"
    """The optimiser's update of the weights (training only)."""


class ResultStatus(StrEnum):
    ok = "ok"
    oom = "oom"
    unsupported = "unsupported"
    error = "error"


class PowerSource(StrEnum):
    nvml = "nvml"
    rapl = "rapl"
    estimate = "estimate"
    none = "none"


class DeviceKind(StrEnum):
    """Where a step runs: the host's CPUs, or a GPU the agent drives through CUDA. ``gpu`` (what the catalog's
    ``kind`` says, and what people ask for: "which GPU") is read as ``cuda``; answers always say ``cuda``."""

    cpu = "cpu"
    cuda = "cuda"

    @classmethod
    def _missing_(cls, value: object) -> DeviceKind | None:
        return cls.cuda if isinstance(value, str) and value.lower() == "gpu" else None


def device_kind_of(device: str) -> DeviceKind:
    return DeviceKind.cpu if device == "cpu" else DeviceKind.cuda


AllowedPrecisions = Annotated[list[Precision] | None, Field(max_length=16)]
"""The precisions an answer may use (a recommendation's and a plan's constraint); none: any."""
AllowedRuntimes = Annotated[list[Name] | None, Field(max_length=64)]
"""The runtimes an answer may use; none: any."""
AllowedDeviceKinds = Annotated[
    list[DeviceKind] | None,
    Field(
        max_length=2,
        description="Only these kinds of device: 'cuda' (GPUs; 'gpu' is read as 'cuda') or 'cpu'; none: both "
        "(ask 'which GPU' with ['cuda']).",
    ),
]
"""The kinds of device an answer may use; none: both."""


# --------------------------------------------------------------------------- machine spec


class Page(Strict, Generic[T]):
    items: list[T]
    total: int
    limit: int
    offset: int
