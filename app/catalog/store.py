"""Transition: app/cli.py imports ``store.entries`` and ``store.apply`` from here.

Delete this module once the CLI imports them from app.db.catalog (the layering itself is
app.catalog.lab's). Nothing else may import it: the catalog package does not read the database.
"""

from __future__ import annotations

from app.db.catalog import apply, entries, entry, reset

__all__ = ["apply", "entries", "entry", "reset"]
