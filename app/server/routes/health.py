from __future__ import annotations

from fastapi import APIRouter
from sqlalchemy import text

from app import __version__
from app.server.deps import DatabaseDep

router = APIRouter(tags=["health"])


@router.get("/healthz")
def healthz(db: DatabaseDep) -> dict[str, str]:
    """Liveness and database reachability: 503 (with Retry-After) while the database is down."""
    with db.reading() as session:
        session.execute(text("SELECT 1"))
    return {"status": "ok", "database": "ok", "version": __version__}
