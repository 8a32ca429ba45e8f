"""What every command group shares: where the database is, and how to show its URL."""

from __future__ import annotations

from sqlalchemy.engine import make_url

from app.config import get_settings


def database_url() -> str:
    return get_settings().resolved_database_url


def shown_url(url: str) -> str:
    """The URL with its password hidden, for messages."""
    return make_url(url).render_as_string(hide_password=True)
