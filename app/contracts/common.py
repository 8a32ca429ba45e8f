"""The vocabulary every wire model shares: strict base, names, precisions, tasks, statuses, paging."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION: Literal[1] = 1
T = TypeVar("T")

Name = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9_.\-]*$")]
WorkloadName = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[a-z0-9][a-z0-9_]*(/(infer|train))?$")]
DeviceId = Annotated[str, Field(min_length=1, max_length=16, pattern=r"^(cpu|cuda:\d{1,2})$")]
Text = Annotated[str, Field(max_length=2000)]
INT32_MAX = 2**31 - 1  # what an INTEGER column holds on PostgreSQL
Label = Annotated[str, Field(min_length=1, max_length=200)]
NonNegative = Annotated[float, Field(ge=0)]
Positive = Annotated[float, Field(gt=0)]


class Strict(BaseModel):
    """Base of every wire model: unknown fields are errors, NaN and infinity are refused."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, frozen=False)


class Precision(StrEnum):
    fp32 = "fp32"
    tf32 = "tf32"
    bf16 = "bf16"
    fp16 = "fp16"
    int8 = "int8"


class Task(StrEnum):
    infer = "infer"
    train = "train"


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
    cpu = "cpu"
    cuda = "cuda"


def device_kind_of(device: str) -> DeviceKind:
    return DeviceKind.cpu if device == "cpu" else DeviceKind.cuda


# --------------------------------------------------------------------------- machine spec


class Page(Strict, Generic[T]):
    items: list[T]
    total: int
    limit: int
    offset: int
