"""The catalog as the lab sees it: the shipped entries with the lab's own entries and overrides on top.

A user's change never edits the shipped file: it is a row in ``catalog_entries`` (``overrides``
for a shipped entry, ``specs`` for hardware the shipped catalog lacks), and every figure the lab
gave names where it came from in ``sources``. A price the lab sets carries its own ``price_date``
(app/db/catalog.py stores the day it was set when none is given), never the date of the price it
replaces. The lab's aliases are added to a shipped entry's, never put in their place, so a lab
cannot unmatch the parts the shipped catalog knows.

Pure: app/db/catalog.py reads the rows and hands them here as ``LabChange``.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from app.catalog import CatalogHardware
from app.errors import InvalidInput

USER_SOURCE = "set by a user through the API"
NOT_FIGURES = ("id", "sources", "note", "aliases")
NAMES = ("kind", "vendor", "name")
"""What identifies a lab's own entry: not a figure with a source."""


class LabChange(BaseModel):
    """One lab row: read from the ORM row with ``from_attributes``."""

    model_config = ConfigDict(from_attributes=True, frozen=True)

    id: str
    specs: dict[str, Any]
    overrides: dict[str, Any]
    updated_at: datetime


def layer(shipped: Iterable[CatalogHardware], changes: Iterable[LabChange]) -> dict[str, CatalogHardware]:
    """Every entry by id, the lab's changes applied."""
    merged = {entry.id: entry for entry in shipped}
    for change in changes:
        base = merged.get(change.id)
        fields = dict(change.specs) if base is None else base.model_dump()
        fields.update(change.overrides)
        sources = dict(fields.get("sources") or {})
        day = f"{change.updated_at:%Y-%m-%d}"
        stamp = f"{USER_SOURCE} ({day})"
        figures = change.overrides if base is not None else change.specs
        for field in figures:
            if field not in NOT_FIGURES and field not in NAMES:
                sources[field] = stamp
        if "price_usd" in figures and "price_date" not in figures:  # a row from before prices were dated
            fields["price_date"] = day if fields.get("price_usd") is not None else None
        lab_aliases = list(change.overrides.get("aliases") or ())
        if base is not None and lab_aliases:
            fields["aliases"] = base.aliases + [a for a in lab_aliases if a not in base.aliases]
        if base is None:
            lab_aliases = list(change.specs.get("aliases") or ())
        if lab_aliases:
            sources["aliases"] = f"{stamp}: " + ", ".join(repr(a) for a in lab_aliases)
        fields["sources"] = sources
        fields.pop("note", None)
        try:
            merged[change.id] = CatalogHardware.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise InvalidInput(
                f"catalog entry {change.id!r} is invalid with the lab's changes: {first['loc'][0]}: {first['msg']}",
                hint=f"DELETE /api/v1/catalog/{change.id}/overrides drops them",
            ) from exc
    return merged
