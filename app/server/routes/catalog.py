"""The hardware catalog (shipped, with the lab's own entries and overrides) and published results."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Body, Depends, Path, Query

from app.catalog.listing import MAX_PAGE, CatalogFilter, CatalogPage, CatalogRead, read, year_range
from app.catalog.published import parse_csv
from app.contracts import CatalogPatch, PublicImportReport, PublicResult
from app.contracts.catalog import CatalogMatch
from app.db import catalog
from app.server.deps import Admin, DatabaseDep, Reader
from app.server.limits import MAX_OFFSET

router = APIRouter(tags=["catalog"])
Source = Annotated[str, Query(pattern=r"^public:[a-z0-9][a-z0-9_.\-]{0,60}$")]
CatalogIdPath = Annotated[str, Path(pattern=r"^[a-z0-9][a-z0-9_.\-]*$", max_length=64)]
"""A catalog id in a path, as the catalog spells every one (a 422 naming it, not a 404 echoing any text)."""


def catalog_filter(
    vendor: Annotated[str | None, Query(max_length=64, description="The vendor, e.g. NVIDIA (any case).")] = None,
    kind: Annotated[Literal["gpu", "cpu"] | None, Query(description="gpu or cpu.")] = None,
    year: Annotated[int | None, Query(ge=1970, le=2100, description="Released that year.")] = None,
    min_year: Annotated[int | None, Query(ge=1970, le=2100, description="Released that year or later.")] = None,
    max_year: Annotated[int | None, Query(ge=1970, le=2100, description="Released that year or earlier.")] = None,
    min_memory_gb: Annotated[float | None, Query(ge=0, le=1e6, description="At least this much memory.")] = None,
    q: Annotated[str | None, Query(max_length=200, description="Part of the id or the name (any case).")] = None,
) -> CatalogFilter:
    """The listing's filters; an entry whose release year or memory is unknown is left out by a filter on it."""
    low, high = year_range(year, min_year, max_year)
    return CatalogFilter(
        vendor=vendor or None, kind=kind, min_year=low, max_year=high, min_memory_gb=min_memory_gb, q=q or None
    )


@router.get("/catalog")
def list_catalog(
    _reader: Reader,
    db: DatabaseDep,
    where: Annotated[CatalogFilter, Depends(catalog_filter)],
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> CatalogPage:
    """The catalog as the recommender sees it (the lab's entries and overrides applied), filtered and
    paged: GPUs then CPUs, by vendor, newest first. Each entry has its ``price`` (how it is known:
    a dated quote, the lab's price, or a release price labelled as such) and its ``release_year``."""
    with db.reading() as session:
        return catalog.page(session, where, limit=limit, offset=offset)


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
def get_catalog_entry(catalog_id: CatalogIdPath, _reader: Reader, db: DatabaseDep) -> CatalogRead:
    with db.reading() as session:
        return read(catalog.entry(session, catalog_id))


@router.put("/catalog/{catalog_id}")
def put_catalog_entry(
    catalog_id: CatalogIdPath,
    patch: CatalogPatch,
    _admin: Admin,
    db: DatabaseDep,
) -> CatalogRead:
    """Override fields of a shipped entry (e.g. your own price quote), or add hardware the catalog lacks
    (kind, vendor and name needed). The entry's ``sources`` says which figures are yours. ``aliases``
    names devices that are this entry: machines reporting one match it from their next new spec."""
    with db.writing() as session:
        return read(catalog.apply(session, catalog_id, patch))


@router.delete("/catalog/{catalog_id}/overrides", status_code=204)
def reset_catalog_entry(catalog_id: CatalogIdPath, _admin: Admin, db: DatabaseDep) -> None:
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
