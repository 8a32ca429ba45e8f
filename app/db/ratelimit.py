"""Fixed-window counters of failed authentication attempts, in the database so that every server
worker and replica sees the same count (an in-memory limiter would give each its own allowance)."""

from __future__ import annotations

import hashlib
import time

from sqlalchemy import delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from app.db.models import RateLimitRow


def _window(window_s: int, now: float | None = None) -> tuple[int, int]:
    """(the current window's number, seconds until it ends)."""
    now = time.time() if now is None else now
    number = int(now // window_s)
    return number, max(1, int((number + 1) * window_s - now + 0.999))


KEY_LENGTH = 200
"""The stored key's column width (``RateLimitRow.key``)."""


def _stored(key: str) -> str:
    """``key`` as the column holds it: a longer key (a client's address is what a proxy header says it is)
    is replaced by its digest, so no caller's text can overflow the column, and two long keys stay apart."""
    if len(key) <= KEY_LENGTH:
        return key
    return "sha256:" + hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


def failures(session: Session, key: str, *, window_s: int) -> tuple[int, int]:
    """(failures of ``key`` in the current window, seconds until the window ends)."""
    number, remaining = _window(window_s)
    key = _stored(key)
    count = session.scalar(select(RateLimitRow.count).where(RateLimitRow.key == key, RateLimitRow.bucket == number))
    return count or 0, remaining


def record_failure(session: Session, key: str, *, window_s: int) -> None:
    """Count one failure atomically (an upsert: concurrent workers never lose one)."""
    number, _remaining = _window(window_s)
    key = _stored(key)
    dialect = session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    statement = insert(RateLimitRow).values(key=key, bucket=number, count=1)
    statement = statement.on_conflict_do_update(
        index_elements=[RateLimitRow.key, RateLimitRow.bucket], set_={"count": RateLimitRow.count + 1}
    )
    session.execute(statement)
    session.execute(delete(RateLimitRow).where(RateLimitRow.key == key, RateLimitRow.bucket < number))
