"""What every command group shares: where the database is, and how to show its URL."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from sqlalchemy.engine import make_url

from app.config import get_settings
from app.contracts import DeviceKind, Precision

if TYPE_CHECKING:
    from app.db.engine import Database


def database_url() -> str:
    return get_settings().resolved_database_url


def database() -> Database:
    """The configured database with its schema brought to the current version first: a command run
    on a fresh machine (no server started yet) creates the SQLite file instead of failing on it."""
    from app.db.engine import Database
    from app.db.migrate import upgrade

    url = database_url()
    upgrade(url)
    return Database(url)


def shown_url(url: str) -> str:
    """The URL with its password hidden, for messages."""
    return make_url(url).render_as_string(hide_password=True)


def parse_device_kind(value: str) -> DeviceKind:
    """``--device-kind``'s parser: ``cuda`` or ``gpu`` (the catalog's word for one) for GPUs, ``cpu``."""
    try:
        return DeviceKind(value.lower())
    except ValueError:
        raise typer.BadParameter(f"{value!r}: give cuda (or gpu) for GPUs, or cpu") from None


PrecisionOption = Annotated[list[Precision] | None, typer.Option(help="Allowed precision (repeat).")]
"""``--precision``: the precisions an answer may use (``recommend``, ``plan``)."""
RuntimeOption = Annotated[list[str] | None, typer.Option(help="Allowed runtime (repeat).")]
"""``--runtime``: the runtimes an answer may use."""
DeviceKindOption = Annotated[
    list[DeviceKind] | None,
    typer.Option(
        parser=parse_device_kind, metavar="KIND", help="Only this kind of device: cuda or gpu (GPUs), or cpu (repeat)."
    ),
]
"""``--device-kind``: the kinds of device an answer may use, read by ``parse_device_kind``."""
