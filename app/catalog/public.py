"""Transition: app/cli.py and benchmarks/accuracy.py import from here.

Delete this module once they import ``parse_csv``/``shipped`` from app.catalog.published and
``store_public`` from app.db.catalog. Nothing else may import it: the catalog package does not
read the database.
"""

from __future__ import annotations

from app.catalog.published import COLUMNS, MAX_IMPORT_ROWS, REQUIRED, parse_csv, shipped
from app.db.catalog import all_results, delete_source, imported
from app.db.catalog import store_public as store

__all__ = [
    "COLUMNS",
    "MAX_IMPORT_ROWS",
    "REQUIRED",
    "all_results",
    "delete_source",
    "imported",
    "parse_csv",
    "shipped",
    "store",
]
