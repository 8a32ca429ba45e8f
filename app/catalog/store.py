"""The catalog as the lab sees it: the shipped entries with the lab's own entries and overrides on top.

A user's change never edits the shipped file: it is a row in ``catalog_entries`` (``overrides``
for a shipped entry, ``specs`` for hardware the shipped catalog lacks), and every overridden
figure names where it came from in ``sources``.
"""

from __future__ import annotations

from pydantic import ValidationError
from sqlalchemy import select
from sqlalchemy.orm import Session

from app.catalog import CatalogHardware, load
from app.contracts import CatalogPatch
from app.db.models import CatalogEntry, utcnow
from app.errors import InvalidInput, NotFoundError

USER_SOURCE = "set by a user through the API"


def entries(session: Session) -> dict[str, CatalogHardware]:
    """Every entry by id, the lab's changes applied."""
    merged = {entry.id: entry for entry in load()}
    for row in session.scalars(select(CatalogEntry)):
        base = merged.get(row.id)
        fields = dict(row.specs) if base is None else base.model_dump()
        fields.update(row.overrides)
        sources = dict(fields.get("sources") or {})
        for field in row.overrides:
            if field not in ("id", "sources", "note"):
                sources[field] = f"{USER_SOURCE} ({row.updated_at:%Y-%m-%d})"
        fields["sources"] = sources
        fields.pop("note", None)
        try:
            merged[row.id] = CatalogHardware.model_validate(fields)
        except ValidationError as exc:
            first = exc.errors()[0]
            raise InvalidInput(
                f"catalog entry {row.id!r} is invalid with the lab's changes: {first['loc'][0]}: {first['msg']}",
                hint=f"DELETE /api/v1/catalog/{row.id}/overrides drops them",
            ) from exc
    return merged


def entry(session: Session, catalog_id: str) -> CatalogHardware:
    found = entries(session).get(catalog_id)
    if found is None:
        raise NotFoundError(f"no catalog entry {catalog_id!r}", hint="GET /api/v1/catalog lists them")
    return found


def apply(session: Session, catalog_id: str, patch: CatalogPatch) -> CatalogHardware:
    """Override fields of a shipped entry, or add (or change) the lab's own entry."""
    changes = patch.model_dump(exclude_unset=True)
    base = next((e for e in load() if e.id == catalog_id), None)  # the shipped entry, if there is one
    row = session.get(CatalogEntry, catalog_id)
    if row is None:
        if base is None:
            missing = [f for f in ("kind", "vendor", "name") if not changes.get(f)]
            if missing:
                raise InvalidInput(
                    f"a new catalog entry needs {', '.join(missing)}",
                    hint="give kind ('gpu' or 'cpu'), vendor and name with the figures you know",
                )
        row = CatalogEntry(
            id=catalog_id,
            kind=changes.get("kind") or (base.kind if base else "gpu"),
            vendor=changes.get("vendor") or (base.vendor if base else ""),
            name=changes.get("name") or (base.name if base else catalog_id),
            specs={} if base else {"id": catalog_id},
            overrides={},
            source="user",
        )
        session.add(row)
    if base is not None:
        row.overrides = {**row.overrides, **changes}
    else:
        row.specs = {**row.specs, **{k: v for k, v in changes.items() if k != "note"}, "id": catalog_id}
        row.overrides = {"note": changes["note"]} if "note" in changes else dict(row.overrides)
        row.kind, row.vendor, row.name = row.specs["kind"], row.specs["vendor"], row.specs["name"]
    row.updated_at = utcnow()
    session.flush()
    return entries(session)[catalog_id]


def reset(session: Session, catalog_id: str) -> None:
    """Drop the lab's changes: a shipped entry is as shipped again, the lab's own entry is gone."""
    row = session.get(CatalogEntry, catalog_id)
    if row is None:
        raise NotFoundError(f"the lab has not changed catalog entry {catalog_id!r}")
    session.delete(row)
