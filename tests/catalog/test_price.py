"""One rule for a part's price: a dated quote, the lab's own price, else a release price labelled as
such, else none; and the release dates the datasets spell their own way (no database)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from app.catalog import CatalogHardware
from app.catalog.lab import LabChange, layer
from app.catalog.price import price_of, price_text
from app.catalog.release import Release, release, release_year

WHEN = datetime(2025, 3, 1, tzinfo=UTC)


def part(**fields: Any) -> CatalogHardware:
    return CatalogHardware.model_validate({"id": "gpu-x", "kind": "gpu", "vendor": "ACME", "name": "ACME X", **fields})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2022-09-20", Release(2022, "2022-09")),
        ("2024-03", Release(2024, "2024-03")),
        ("2019", Release(2019, "2019")),
        ("11/10/2022", Release(2022, "2022-11")),
        ("3/5/2021", Release(2021, "2021-03")),
        ("Q2'21", Release(2021, "2021-Q2")),
        ("Q4 2023", Release(2023, "2023-Q4")),
        ("2022-13-01", None),
        ("soon", None),
        ("", None),
        (None, None),
    ],
)
def test_release_dates_are_read_in_every_spelling_the_datasets_use(text: str | None, expected: Release | None) -> None:
    assert release(text) == expected
    assert release_year(text) == (expected.year if expected else None)


def test_a_quote_carries_its_date_and_its_source() -> None:
    quoted = part(
        price_usd=36718.75,
        price_date="2024-06",
        release_price_usd=33600,
        release_date="2022-09-20",
        sources={"price_usd": "lambda-dl-benchmark v1_2024"},
    )
    price = price_of(quoted)
    assert price is not None
    assert (price.usd, price.basis, price.date, price.source) == (
        36718.75,
        "quote",
        "2024-06",
        "lambda-dl-benchmark v1_2024",
    )
    assert price.label == "quoted 2024-06", "the quote wins over the release price"
    assert price_text(price) == "$36,719 (quoted 2024-06)"
    assert price_of(part(price_usd=10)).label == "quoted, date unknown"  # type: ignore[union-attr]


def test_the_only_figure_a_release_price_is_shown_as_such_with_its_date() -> None:
    price = price_of(part(release_price_usd=9359, release_date="Q2'21", sources={"release_price_usd": "ark"}))
    assert price is not None
    assert (price.usd, price.basis, price.date, price.source) == (9359, "release", "2021-Q2", "ark")
    assert price_text(price) == "$9,359 (release price, 2021-Q2)"
    undated = price_of(part(release_price_usd=100))
    assert undated is not None and undated.label == "release price, date unknown"


def test_no_figure_is_no_price() -> None:
    assert price_of(part(tdp_w=300)) is None
    assert price_of(None) is None
    assert price_text(None) == "no price"


def test_a_lab_price_is_the_labs_and_dated_when_it_was_set() -> None:
    shipped = part(price_usd=30000, price_date="2023-01", sources={"price_usd": "a dataset"})
    stored = LabChange(
        id="gpu-x", specs={}, overrides={"price_usd": 25000, "price_date": "2025-02-14"}, updated_at=WHEN
    )
    price = price_of(layer([shipped], [stored])["gpu-x"])
    assert price is not None
    assert (price.usd, price.basis, price.date) == (25000, "lab", "2025-02-14")
    assert price.label == "lab's price, 2025-02-14"
    assert price.source == "set by a user through the API (2025-03-01)"
    # a row kept before prices were dated: the day the row was changed, never the replaced quote's date
    old = LabChange(id="gpu-x", specs={}, overrides={"price_usd": 25000}, updated_at=WHEN)
    assert layer([shipped], [old])["gpu-x"].price_date == "2025-03-01"
    cleared = LabChange(id="gpu-x", specs={}, overrides={"price_usd": None}, updated_at=WHEN)
    assert price_of(layer([shipped], [cleared])["gpu-x"]) is None, "a lab that unsets the price leaves none"


def test_every_figure_of_a_labs_own_entry_names_the_lab_as_its_source() -> None:
    own = LabChange(
        id="my-gpu",
        specs={"id": "my-gpu", "kind": "gpu", "vendor": "Lab", "name": "Lab GPU", "tdp_w": 300, "price_usd": 5000},
        overrides={},
        updated_at=WHEN,
    )
    entry = layer([], [own])["my-gpu"]
    assert set(entry.sources) == {"tdp_w", "price_usd"}
    price = price_of(entry)
    assert price is not None and price.basis == "lab" and price.date == "2025-03-01"
