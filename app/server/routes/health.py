from __future__ import annotations

from fastapi import APIRouter, Request, Response
from prometheus_client import CONTENT_TYPE_LATEST
from sqlalchemy import text

from app import __version__
from app.server.deps import DatabaseDep

router = APIRouter(tags=["health"])


@router.get("/metrics", response_class=Response, responses={200: {"content": {"text/plain": {}}}})
def metrics(request: Request) -> Response:
    """Prometheus metrics: requests and latency per route, results ingested, jobs by state, machines by status."""
    return Response(request.app.state.metrics.render(), media_type=CONTENT_TYPE_LATEST)


@router.get("/healthz")
def healthz(db: DatabaseDep) -> dict[str, str]:
    """Whether a write made now would be durable: 503 (with Retry-After, and the reason) while the
    database is down, read-only, or (SQLite) its file was removed or replaced under the server."""
    with db.reading() as session:
        session.execute(text("SELECT 1"))
        db.check_writable(session)
    return {"status": "ok", "database": "ok", "version": __version__}
