"""The catalog listing's filters, order and paging (no database)."""

from __future__ import annotations

from typing import Any

import pytest

from app.catalog import CatalogHardware
from app.catalog.listing import CatalogFilter, page, year_range
from app.errors import InvalidInput


def part(id: str, kind: str = "gpu", vendor: str = "NVIDIA", **fields: Any) -> CatalogHardware:
    return CatalogHardware.model_validate({"id": id, "kind": kind, "vendor": vendor, "name": id.upper(), **fields})


PARTS = [
    part("old-gpu", release_date="2017-06-21", memory_gb=16),
    part("big-gpu", release_date="2024-11-18", memory_gb=141, price_usd=30000, price_date="2024-12"),
    part("mid-gpu", release_date="11/10/2022", memory_gb=48),
    part("amd-gpu", vendor="AMD", release_date="2023-12-06", memory_gb=192),
    part("xeon-a", kind="cpu", vendor="Intel", release_date="Q2'21", release_price_usd=9359),
    part("epyc-b", kind="cpu", vendor="AMD", release_date=None),
]


def ids(where: CatalogFilter, **paging: int) -> list[str]:
    return [e.id for e in page(PARTS, where, limit=paging.get("limit", 100), offset=paging.get("offset", 0)).items]


def test_gpus_then_cpus_by_vendor_newest_first() -> None:
    assert ids(CatalogFilter()) == ["amd-gpu", "big-gpu", "mid-gpu", "old-gpu", "epyc-b", "xeon-a"]


def test_each_filter_narrows_the_list() -> None:
    assert ids(CatalogFilter(vendor="nvidia")) == ["big-gpu", "mid-gpu", "old-gpu"], "vendor in any case"
    assert ids(CatalogFilter(kind="cpu")) == ["epyc-b", "xeon-a"]
    assert ids(CatalogFilter(vendor="AMD", kind="cpu")) == ["epyc-b"]
    assert ids(CatalogFilter(min_year=2022, max_year=2023)) == ["amd-gpu", "mid-gpu"], "AMD's m/d/y date read too"
    assert ids(CatalogFilter(min_year=2021, max_year=2021)) == ["xeon-a"], "an ARK quarter is its year"
    assert "epyc-b" not in ids(CatalogFilter(min_year=1970)), "an unknown year is left out by a year filter"
    assert ids(CatalogFilter(min_memory_gb=100)) == ["amd-gpu", "big-gpu"], "unknown memory (CPUs) left out"
    assert ids(CatalogFilter(q="GPU")) == ["amd-gpu", "big-gpu", "mid-gpu", "old-gpu"], "any case, id or name"
    assert ids(CatalogFilter(vendor="Cyrix")) == []


def test_a_page_says_how_many_the_filter_admits_and_every_vendor() -> None:
    first = page(PARTS, CatalogFilter(kind="gpu"), limit=3, offset=0)
    assert [e.id for e in first.items] == ["amd-gpu", "big-gpu", "mid-gpu"]
    assert (first.total, first.limit, first.offset) == (4, 3, 0)
    assert first.vendors == ["AMD", "Intel", "NVIDIA"], "the whole catalog's, for the filter's choices"
    second = page(PARTS, CatalogFilter(kind="gpu"), limit=3, offset=3)
    assert [e.id for e in second.items] == ["old-gpu"] and second.total == 4
    assert page(PARTS, CatalogFilter(), limit=3, offset=50).items == []


def test_each_entry_is_read_with_its_price_and_release_year() -> None:
    by_id = {e.id: e for e in page(PARTS, CatalogFilter(), limit=100, offset=0).items}
    assert by_id["big-gpu"].price is not None and by_id["big-gpu"].price.label == "quoted 2024-12"
    assert by_id["xeon-a"].price is not None and by_id["xeon-a"].price.label == "release price, 2021-Q2"
    assert by_id["epyc-b"].price is None and by_id["epyc-b"].release_year is None
    assert by_id["mid-gpu"].release_year == 2022


def test_years_are_one_year_or_a_range_never_both() -> None:
    assert year_range(2023, None, None) == (2023, 2023)
    assert year_range(None, 2020, None) == (2020, None)
    with pytest.raises(InvalidInput, match="not both"):
        year_range(2023, 2020, None)
    with pytest.raises(InvalidInput, match="min_year 2024 is after max_year 2020"):
        CatalogFilter(min_year=2024, max_year=2020)
