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
    """Liveness and database reachability: 503 (with Retry-After) while the database is down."""
    with db.reading() as session:
        session.execute(text("SELECT 1"))
    return {"status": "ok", "database": "ok", "version": __version__}
