"""The catalog as a list people page through: filters (vendor, kind, release year, memory, a search
text), one stable order, and each entry read with its price and release year worked out.

Pure, like the rest of app/catalog: app/db/catalog.py hands in the lab's entries.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from app.catalog import CatalogHardware
from app.catalog.price import price_of
from app.catalog.release import release_year
from app.contracts import Page
from app.contracts.catalog import Price
from app.errors import InvalidInput


class CatalogRead(CatalogHardware):
    """A catalog entry as the API shows it: the entry's own fields, plus its price by the one rule
    (app/catalog/price.py) and the year its ``release_date`` names."""

    price: Price | None = None
    release_year: int | None = None


@dataclass(frozen=True, slots=True)
class CatalogFilter:
    """What to list; every field unset lists everything. Text matches ignore case."""

    vendor: str | None = None
    kind: Literal["gpu", "cpu"] | None = None
    min_year: int | None = None
    max_year: int | None = None
    min_memory_gb: float | None = None
    q: str | None = None
    """Part of the id or the name."""

    def __post_init__(self) -> None:
        if self.min_year is not None and self.max_year is not None and self.min_year > self.max_year:
            raise InvalidInput(
                f"min_year {self.min_year} is after max_year {self.max_year}", hint="give min_year <= max_year"
            )

    def admits(self, entry: CatalogHardware) -> bool:
        if self.kind is not None and entry.kind != self.kind:
            return False
        if self.vendor is not None and entry.vendor.casefold() != self.vendor.strip().casefold():
            return False
        if self.min_year is not None or self.max_year is not None:
            year = release_year(entry.release_date)
            if year is None:
                return False
            if (self.min_year is not None and year < self.min_year) or (
                self.max_year is not None and year > self.max_year
            ):
                return False
        if self.min_memory_gb is not None and (entry.memory_gb is None or entry.memory_gb < self.min_memory_gb):
            return False
        if self.q:
            text = self.q.strip().casefold()
            if text not in entry.id.casefold() and text not in entry.name.casefold():
                return False
        return True


def year_range(year: int | None, min_year: int | None, max_year: int | None) -> tuple[int | None, int | None]:
    """(min_year, max_year) from one ``year`` or from the two bounds; not from both."""
    if year is None:
        return min_year, max_year
    if min_year is not None or max_year is not None:
        raise InvalidInput("give year, or min_year and max_year, not both")
    return year, year


class CatalogPage(Page[CatalogRead]):
    vendors: list[str] = Field(description="Every vendor in the catalog (filtered or not), for a filter's choices.")


KIND_ORDER = {"gpu": 0, "cpu": 1}
MAX_PAGE = 500
"""Entries per page at most (the catalog holds many hundreds)."""


def _order(entry: CatalogHardware) -> tuple[int, str, int, str, str]:
    """GPUs, then CPUs; by vendor; newest first (an unknown year last); then by name."""
    year = release_year(entry.release_date)
    return (KIND_ORDER[entry.kind], entry.vendor.casefold(), -(year or 0), entry.name.casefold(), entry.id)


def read(entry: CatalogHardware) -> CatalogRead:
    return CatalogRead(**entry.model_dump(), price=price_of(entry), release_year=release_year(entry.release_date))


def page(entries: Iterable[CatalogHardware], where: CatalogFilter, *, limit: int, offset: int) -> CatalogPage:
    """One page of the entries the filter admits, in the listing's order, with how many it admits."""
    every = list(entries)
    admitted = sorted((e for e in every if where.admits(e)), key=_order)
    return CatalogPage(
        items=[read(e) for e in admitted[offset : offset + limit]],
        total=len(admitted),
        limit=limit,
        offset=offset,
        vendors=sorted({e.vendor for e in every}, key=str.casefold),
    )
