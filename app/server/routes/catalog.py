"""The hardware catalog (shipped, with the lab's own entries and overrides) and published results."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Path, Query

from app.catalog import CatalogHardware
from app.catalog.published import parse_csv
from app.contracts import CatalogPatch, PublicImportReport, PublicResult
from app.contracts.catalog import CatalogMatch
from app.db import catalog
from app.server.deps import Admin, DatabaseDep, Reader

router = APIRouter(tags=["catalog"])
Source = Annotated[str, Query(pattern=r"^public:[a-z0-9][a-z0-9_.\-]{0,60}$")]


@router.get("/catalog")
def list_catalog(_reader: Reader, db: DatabaseDep, kind: Literal["gpu", "cpu"] | None = None) -> list[CatalogHardware]:
    with db.reading() as session:
        return [e for e in catalog.entries(session).values() if kind is None or e.kind == kind]


@router.get("/catalog/match")
def match_catalog_name(
    _reader: Reader,
    db: DatabaseDep,
    name: Annotated[str, Query(min_length=1, max_length=200, description="A GPU's driver name or a CPU's model name.")],
    kind: Literal["gpu", "cpu"] | None = None,
) -> CatalogMatch:
    """What a device name matches in the lab's catalog (the shipped entries with the lab's own entries
    and aliases on top), and why; the same matching the server applies when a machine reports its spec.
    Without ``kind``, the name is tried as a GPU driver name, then as a CPU model name."""
    with db.reading() as session:
        return catalog.match(session, name, kind)


@router.get("/catalog/{catalog_id}")
def get_catalog_entry(catalog_id: str, _reader: Reader, db: DatabaseDep) -> CatalogHardware:
    with db.reading() as session:
        return catalog.entry(session, catalog_id)


@router.put("/catalog/{catalog_id}")
def put_catalog_entry(
    catalog_id: Annotated[str, Path(pattern=r"^[a-z0-9][a-z0-9_.\-]*$", max_length=64)],
    patch: CatalogPatch,
    _admin: Admin,
    db: DatabaseDep,
) -> CatalogHardware:
    """Override fields of a shipped entry (e.g. your own price quote), or add hardware the catalog lacks
    (kind, vendor and name needed). The entry's ``sources`` says which figures are yours. ``aliases``
    names devices that are this entry: machines reporting one match it from their next new spec."""
    with db.writing() as session:
        return catalog.apply(session, catalog_id, patch)


@router.delete("/catalog/{catalog_id}/overrides", status_code=204)
def reset_catalog_entry(catalog_id: str, _admin: Admin, db: DatabaseDep) -> None:
    """Drop the lab's changes: a shipped entry is as shipped again; the lab's own entry is removed."""
    with db.writing() as session:
        catalog.reset(session, catalog_id)


@router.get("/public-results")
def list_public_results(
    _reader: Reader,
    db: DatabaseDep,
    workload: Annotated[str | None, Query(max_length=64)] = None,
    source: Annotated[str | None, Query(max_length=80)] = None,
) -> list[PublicResult]:
    """Results others published (shipped: public:lambda-2024, public:openvino-2024.1; and imported ones)."""
    with db.reading() as session:
        return [r for r in catalog.all_results(session, workload=workload) if source is None or r.source == source]


@router.post("/public-results", status_code=201, openapi_extra={"requestBody": {"content": {"text/csv": {}}}})
def import_public_results(
    _admin: Admin,
    db: DatabaseDep,
    csv_text: Annotated[str, Body(media_type="text/csv")],
    source: Source | None = None,
) -> PublicImportReport:
    """Import a CSV of published results (columns: PublicResult's fields). ``source`` fills a missing
    source column. One bad row rejects the whole file, with its line number."""
    rows = parse_csv(csv_text, source=source)
    with db.writing() as session:
        count = catalog.store_public(session, rows)
    sources = sorted({r.source for r in rows})
    return PublicImportReport(imported=count, source=", ".join(sources))


@router.delete("/public-results", status_code=204)
def delete_public_results(source: Source, _admin: Admin, db: DatabaseDep) -> None:
    """Remove every imported result of one source (the shipped ones stay)."""
    with db.writing() as session:
        catalog.delete_source(session, source)
