"""The FastAPI app factory."""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from fastapi import APIRouter, FastAPI
from fastapi.routing import APIRoute

from app import __version__, web
from app.config import Settings, get_settings
from app.contracts import Problem, TokenKind
from app.db import tokens
from app.db.engine import Database
from app.server import errors
from app.server.conventions import HttpConventions
from app.server.deps import SESSION_COOKIE
from app.server.gate import Gate
from app.server.limits import BodySizeLimit, RefuseAnonymousBodies, RefuseNul
from app.server.observability import Metrics, RequestContext, configure_logging
from app.server.routes import (
    agents,
    catalog,
    clusters,
    health,
    jobs,
    machines,
    recommend,
    registry,
    results,
    runs,
    session,
    workloads,
)
from app.server.routes import tokens as token_routes
from app.server.security import SecurityHeaders

log = logging.getLogger("hwadvisor.server")

API_PREFIX = "/api/v1"


def _operation_id(route: APIRoute) -> str:
    return f"{route.tags[0]}-{route.name}" if route.tags else route.name


def _problem(description: str) -> dict[str, Any]:
    return {
        "description": description,
        "content": {"application/problem+json": {"schema": Problem.model_json_schema()}},
    }


# Every error is a Problem (app/server/errors.py); documented once for every operation, so that a
# client generated from the OpenAPI schema (or a fuzzer checking it) knows each answer's shape.
ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    400: _problem("The body could not be parsed (not JSON, or not the declared content type)."),
    401: _problem("No valid token."),
    403: _problem("The token may not do this (or a dashboard change without its CSRF header)."),
    404: _problem("Not found."),
    409: _problem("Conflicts with what is stored."),
    413: _problem("The body is too large."),
    422: _problem("The request is invalid; the problem names the fields."),
    429: _problem("Too many failed attempts from this client; see Retry-After."),
    503: _problem(
        "The database cannot be reached, or could not keep a write (its file removed, replaced or read-only);"
        " see Retry-After."
    ),
}


def api_router() -> APIRouter:
    router = APIRouter(prefix=API_PREFIX, responses=ERROR_RESPONSES)
    for module in (
        agents,
        runs,
        jobs,
        machines,
        clusters,
        results,
        token_routes,
        catalog,
        recommend,
        workloads,
        session,
        registry,
    ):
        router.include_router(module.router)
    return router


def bootstrap_admin_token(db: Database, settings: Settings) -> str | None:
    """Make an admin token on first start when none is configured; returns it (to print once)."""
    if settings.admin_token:
        return None
    with db.writing() as session:
        if tokens.has_admin_token(session):
            return None
        _row, secret = tokens.issue(session, kind=TokenKind.admin, note="generated on first start")
        return secret


def create_app(settings: Settings | None = None, *, database: Database | None = None) -> FastAPI:
    settings = settings or get_settings()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if database is None:  # a real server (each worker process), not an app handed a test database
            configure_logging(settings.log_format)
        db = database or Database(settings.resolved_database_url)
        app.state.db = db
        app.state.export_limiter = anyio.CapacityLimiter(results.EXPORT_THREADS)  # in this worker's loop
        app.state.heavy.open()
        metrics.watch(db)
        try:
            secret = bootstrap_admin_token(db, settings)
        except Exception as exc:  # the server still answers 503 on /healthz while the database is down
            log.warning("could not check for an admin token at start: %s", exc.__class__.__name__)
            secret = None
        if secret:
            print(
                f"hwadvisor: generated the admin token (shown once, stored only as a hash):\n  {secret}",
                file=sys.stderr,
                flush=True,
            )
        try:
            yield
        finally:
            if database is None:
                db.dispose()

    app = FastAPI(
        title="hwadvisor",
        version=__version__,
        summary="Hardware-selection advisor for deep learning.",
        lifespan=lifespan,
        generate_unique_id_function=_operation_id,
        docs_url=None,  # app/web serves /docs from its own copy of Swagger UI, not a CDN's
        redoc_url=None,
    )
    metrics = Metrics()
    app.state.settings = settings
    app.state.metrics = metrics
    app.state.heavy = Gate(settings.heavy_requests)
    errors.install(app)
    app.include_router(health.router)
    app.include_router(api_router())
    web.mount(app)
    app.add_middleware(HttpConventions)  # innermost: the log and metrics still see HEAD
    app.add_middleware(RefuseNul)
    app.add_middleware(
        RefuseAnonymousBodies,
        prefix=f"{API_PREFIX}/",
        open_paths=frozenset({f"{API_PREFIX}{session.router.prefix}"}),
        cookie=SESSION_COOKIE,
    )
    app.add_middleware(
        BodySizeLimit,
        max_bytes=settings.max_body_bytes,
        per_path={f"{API_PREFIX}{workloads.ONNX_PATH}": (settings.max_onnx_bytes, workloads.TOO_LARGE)},
    )
    app.add_middleware(SecurityHeaders)
    app.add_middleware(RequestContext, metrics=metrics)  # outermost: it sees every answer, 413s too
    return app
