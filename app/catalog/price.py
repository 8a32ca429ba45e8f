"""What a part costs: the one rule the catalog listing, the recommender's cost figures and the
dashboard all use, so that no two of them can disagree about a price.

In order: the entry's ``price_usd`` (a dataset's quote, dated by ``price_date``, or the lab's own
price, which ``sources['price_usd']`` marks as set through the API); else its launch price,
labelled as such with the release date, since a part's price moves far from it over the years; else
no price at all. A missing price is never filled in from anything else.
"""

from __future__ import annotations

from app.catalog import CatalogHardware
from app.catalog.lab import USER_SOURCE
from app.catalog.release import release
from app.contracts.catalog import Price


def price_of(entry: CatalogHardware | None) -> Price | None:
    """The entry's price with how it is known, or None when the catalog has none."""
    if entry is None:
        return None
    if entry.price_usd is not None:
        source = entry.sources.get("price_usd")
        date = entry.price_date
        if source is not None and source.startswith(USER_SOURCE):
            return Price(
                usd=entry.price_usd,
                basis="lab",
                date=date,
                source=source,
                label=f"lab's price, {date or 'date unknown'}",
            )
        label = f"quoted {date}" if date else "quoted, date unknown"
        return Price(usd=entry.price_usd, basis="quote", date=date, source=source, label=label)
    if entry.release_price_usd is not None:
        when = release(entry.release_date)
        date = when.when if when else None
        return Price(
            usd=entry.release_price_usd,
            basis="release",
            date=date,
            source=entry.sources.get("release_price_usd"),
            label=f"release price, {date or 'date unknown'}",
        )
    return None


def price_text(price: Price | None) -> str:
    """'$9,359 (release price, 2021-Q2)', or 'no price'."""
    if price is None:
        return "no price"
    return f"${price.usd:,.0f} ({price.label})"
