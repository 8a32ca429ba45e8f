"""The JSON body of every API error."""

from __future__ import annotations

import re

from app.contracts.common import (
    Strict,
)

_PROBLEM_WORD = re.compile(r"[^a-z0-9]+")


class Problem(Strict):
    """The JSON body of every API error (RFC 9457 in spirit). It may quote what was refused, NUL
    characters included (JSON escapes them), so it is exempt from Strict's NUL rule."""

    refuses_nul = False

    type: str
    title: str
    status: int
    detail: str
    errors: list[dict[str, object]] | None = None
    request_id: str | None = None


def problem_type(title: str) -> str:
    return "urn:hwadvisor:" + _PROBLEM_WORD.sub("-", title.lower()).strip("-")
