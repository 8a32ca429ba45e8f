"""The lab's catalog: its entries and overrides, the results it imported, and matching device names
against the shipped catalog with the lab's entries and aliases on top.

app/catalog holds the data and the pure parts (loading, layering, matching); this module reads
and writes the rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from app.catalog import CatalogHardware, Match, Matcher, is_generic_cpu_name, listing, load, meant
from app.catalog.lab import LabChange, layer
from app.catalog.listing import CatalogFilter, CatalogPage
from app.catalog.published import shipped
from app.contracts import CatalogPatch, Device, DeviceKind, MachineSpec, PublicResult
from app.contracts.catalog import CatalogMatch
from app.db.models import CatalogEntry, PublicResultRow, utcnow
from app.errors import InvalidInput, NotFoundError

FIND_HINT = "`hwadvisor catalog list --search TEXT` or GET /api/v1/catalog?q=TEXT finds an entry's id"
RESERVED_IDS = frozenset({"match"})
"""Ids a route path already uses (GET /api/v1/catalog/match)."""


def entries(session: Session) -> dict[str, CatalogHardware]:
    """Every entry by id, the lab's changes applied."""
    rows = session.scalars(select(CatalogEntry).order_by(CatalogEntry.id))
    return layer(load(), (LabChange.model_validate(row) for row in rows))


def page(session: Session, where: CatalogFilter, *, limit: int, offset: int) -> CatalogPage:
    """One page of the lab's catalog (GET /api/v1/catalog, ``hwadvisor catalog list``)."""
    return listing.page(entries(session).values(), where, limit=limit, offset=offset)


def entry(session: Session, catalog_id: str) -> CatalogHardware:
    return known(entries(session), catalog_id)


def known(found: Mapping[str, CatalogHardware], catalog_id: str) -> CatalogHardware:
    """The entry ``catalog_id`` names in ``found``; else a 404 that says which id was likely meant."""
    entry = found.get(catalog_id)
    if entry is None:
        raise NotFoundError(f"no catalog entry {catalog_id!r}", hint=id_hint(found, catalog_id))
    return entry


def id_hint(found: Mapping[str, CatalogHardware], *asked: str) -> str:
    """What to do about catalog ids no entry has: for each, the id the text names or is spelled close to,
    then how to find an id."""
    said = []
    for text in asked:
        named = [f"{e.id!r} ({e.name})" for e in meant(found, text)]
        if named:
            which = named[0] if len(named) == 1 else f"{', '.join(named[:-1])} or {named[-1]}"
            said.append(f"for {text!r} did you mean {which}?" if len(asked) > 1 else f"did you mean {which}?")
    return " ".join([*said, FIND_HINT])


def apply(session: Session, catalog_id: str, patch: CatalogPatch) -> CatalogHardware:
    """Override fields of a shipped entry, or add (or change) the lab's own entry."""
    if catalog_id in RESERVED_IDS:
        raise InvalidInput(f"{catalog_id!r} cannot be a catalog id", hint="the API uses that path for something else")
    changes = patch.model_dump(exclude_unset=True)
    if "price_usd" in changes and "price_date" not in changes:
        changes["price_date"] = None if changes["price_usd"] is None else f"{utcnow():%Y-%m-%d}"
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
    merged = entries(session)
    _check_power_range(merged[catalog_id])
    _check_aliases(merged, merged[catalog_id], changes.get("aliases") or [])
    return merged[catalog_id]


def checked_row(row: CatalogEntry) -> CatalogHardware:
    """A stored lab row as ``apply`` would have taken it: its figures as a CatalogPatch allows them (the
    shipped entry's overrides, or the lab's own entry's specs), the entry they make, its power range."""
    CatalogPatch.model_validate(row.overrides)
    CatalogPatch.model_validate({k: v for k, v in row.specs.items() if k != "id"})
    entry = layer(load(), [LabChange.model_validate(row)])[row.id]
    _check_power_range(entry)
    return entry


def _check_power_range(changed: CatalogHardware) -> None:
    """The power limits, as the entry now has them, must be a range (the caller's transaction rolls
    back otherwise): the recommender caps a device's draw between them."""
    low, high = changed.power_limit_min_w, changed.power_limit_max_w
    if low is not None and high is not None and low > high:
        raise InvalidInput(
            f"{changed.id}'s power_limit_min_w ({low:g} W) would be above its power_limit_max_w ({high:g} W)",
            hint="give both limits in one change, the minimum at most the maximum",
        )


def _check_aliases(merged: dict[str, CatalogHardware], changed: CatalogHardware, aliases: Iterable[str]) -> None:
    """Each alias the lab gives must then match this entry and nothing else (the caller's
    transaction rolls back otherwise)."""
    matcher = Matcher(merged.values())
    for alias in aliases:
        if changed.kind == "cpu" and is_generic_cpu_name(alias):
            raise InvalidInput(
                f"{alias!r} is a generic CPU name a hypervisor reports for many parts",
                hint="it cannot identify one catalog entry",
            )
        found = matcher.device(changed.kind, alias)
        if found.catalog_id != changed.id:
            raise InvalidInput(f"the alias {alias!r} would not match {changed.id}: {found.note}")


def reset(session: Session, catalog_id: str) -> None:
    """Drop the lab's changes: a shipped entry is as shipped again, the lab's own entry is gone."""
    row = session.get(CatalogEntry, catalog_id)
    if row is None:
        raise NotFoundError(f"the lab has not changed catalog entry {catalog_id!r}")
    session.delete(row)


def matcher(session: Session) -> Matcher:
    """A matcher over the shipped catalog with the lab's entries and aliases on top."""
    return Matcher(entries(session).values())


def match(session: Session, name: str, kind: Literal["gpu", "cpu"] | None = None) -> CatalogMatch:
    """What a device name matches in the lab's catalog, and why (GET /api/v1/catalog/match, and
    ``hwadvisor catalog match NAME``). Without ``kind``, a GPU driver name is tried first."""
    lab = matcher(session)
    if kind is None:
        kind, found = lab.any(name)
    else:
        found = lab.device(kind, name)
    return CatalogMatch(name=name, kind=kind, catalog_id=found.catalog_id, code=found.code, note=_with_remedy(found))


PIN_HINT = (
    "an admin who knows the part pins the device to its entry: "
    "hwadvisor machines set-catalog MACHINE_ID CATALOG_ID (PUT /api/v1/machines/{id}/catalog)"
)


def _with_remedy(found: Match) -> str:
    """The matcher's reason, with what to do about a name no alias can ever match."""
    return f"{found.note}; {PIN_HINT}" if found.code == "generic" else found.note


def match_devices(session: Session, spec: MachineSpec) -> MachineSpec:
    """The spec with each device's catalog_id and catalog_note as the server's catalog decides.

    The server's answer wins: a device keeps a match only if the server finds one (the agent's
    catalog may be older, or lack the lab's entries), and one it cannot match keeps the reason."""
    lab = matcher(session)
    devices: list[Device] = []
    for device in spec.devices:
        found = lab.device("cpu" if device.kind is DeviceKind.cpu else "gpu", device.name)
        note = _with_remedy(found)
        if found.catalog_id is None and device.catalog_id is not None:
            note += f" (the agent's catalog said {device.catalog_id})"
        devices.append(device.model_copy(update={"catalog_id": found.catalog_id, "catalog_note": note}))
    return spec.model_copy(update={"devices": devices})


def store_public(session: Session, rows: Iterable[PublicResult]) -> int:
    """Keep imported published results (already checked by app.catalog.published.parse_csv)."""
    count = 0
    for row in rows:
        session.add(PublicResultRow(**row.model_dump()))
        count += 1
    session.flush()
    return count


def imported(session: Session, *, workload: str | None = None) -> list[PublicResult]:
    query = select(PublicResultRow).order_by(PublicResultRow.id)
    if workload is not None:
        query = query.where(PublicResultRow.workload == workload)
    return [PublicResult.model_validate(row, from_attributes=True) for row in session.scalars(query)]


def all_results(session: Session, *, workload: str | None = None) -> list[PublicResult]:
    """The shipped results, then the imported ones."""
    ours = [r for r in shipped() if workload is None or r.workload == workload]
    return ours + imported(session, workload=workload)


def delete_source(session: Session, source: str) -> None:
    """Remove every imported result of one source, in one statement."""
    session.execute(delete(PublicResultRow).where(PublicResultRow.source == source))
