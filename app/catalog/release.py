"""When a part came out, read from ``release_date`` as the datasets spell it.

The sources write it their own way: ISO ('2022-09-20'), Intel ARK's quarter ("Q1'23"), AMD's
month/day/year ('11/10/2022'), or a bare year. Filtering by year and labelling a release price need
one reading of all of them; a text none of the spellings fits gives None, never a guess.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_ISO = re.compile(r"^(?P<year>\d{4})(-(?P<month>\d{2})(-\d{2})?)?$")
_US = re.compile(r"^(?P<month>\d{1,2})/\d{1,2}/(?P<year>\d{4})$")
_QUARTER = re.compile(r"^Q(?P<quarter>[1-4])\s*'?(?P<year>\d{2}|\d{4})$", re.IGNORECASE)


class Release(NamedTuple):
    year: int
    when: str
    """As precise as the source: '2021-04', '2021-Q2' or '2021'."""


def release(text: str | None) -> Release | None:
    """The year and the month (or quarter) a ``release_date`` names; None if it names neither."""
    if not text:
        return None
    text = text.strip()
    found = _ISO.match(text) or _US.match(text)
    if found:
        year = int(found["year"])
        month = found["month"]
        if month is None:
            return Release(year, str(year))
        if not 1 <= int(month) <= 12:
            return None
        return Release(year, f"{year}-{int(month):02d}")
    quarter = _QUARTER.match(text)
    if quarter:
        digits = quarter["year"]
        year = int(digits) if len(digits) == 4 else 2000 + int(digits)
        return Release(year, f"{year}-Q{quarter['quarter']}")
    return None


def release_year(text: str | None) -> int | None:
    found = release(text)
    return found.year if found else None
