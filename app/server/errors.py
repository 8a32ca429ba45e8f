"""Map errors to JSON problem bodies, once, for the whole app: never a traceback on the wire."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.contracts import Problem, problem_type
from app.errors import AuthError, DatabaseUnavailable, HwadvisorError, RateLimited
from app.server.observability import request_id

log = logging.getLogger("hwadvisor.server")

RETRY_AFTER_S = "5"


def problem(status: int, title: str, detail: str, **extra: Any) -> JSONResponse:
    headers = extra.pop("headers", None)
    body = Problem(
        type=problem_type(title), title=title, status=status, detail=detail, request_id=request_id.get(), **extra
    )
    return JSONResponse(
        body.model_dump(exclude_none=True),
        status_code=status,
        headers=headers,
        media_type="application/problem+json",
    )


def missing_token() -> AuthError:
    """What a caller who sent no credentials is told (a route's dependency, or the API's door before it)."""
    return AuthError("missing bearer token", hint="send the header 'Authorization: Bearer <token>'")


def _unavailable(detail: str) -> JSONResponse:
    return problem(503, "Database unavailable", detail, headers={"Retry-After": RETRY_AFTER_S})


async def _hwadvisor_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HwadvisorError)
    return answer(exc)


def answer(exc: HwadvisorError) -> JSONResponse:
    """The problem body and headers an error hwadvisor raises on purpose is answered with (a route's, or
    a middleware's before any route runs)."""
    if isinstance(exc, DatabaseUnavailable):
        return _unavailable(str(exc))
    headers = {"WWW-Authenticate": "Bearer"} if type(exc) is AuthError else None
    if isinstance(exc, RateLimited):
        headers = {"Retry-After": str(exc.retry_after_s)}
    return problem(exc.status_code, HTTPStatus(exc.status_code).phrase, str(exc), headers=headers)


async def _validation_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    errors = [
        {"field": ".".join(str(part) for part in err.get("loc", ())), "message": err.get("msg", "")}
        for err in exc.errors()
    ]
    fields = ", ".join(e["field"] for e in errors[:5])
    return problem(422, "Invalid request", f"{len(errors)} invalid field(s): {fields}", errors=errors)


async def _http_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    title = HTTPStatus(exc.status_code).phrase
    return problem(exc.status_code, title, str(exc.detail), headers=getattr(exc, "headers", None))


async def _database_error(request: Request, exc: Exception) -> JSONResponse:
    if isinstance(exc, PoolTimeoutError | OperationalError) or (
        isinstance(exc, DBAPIError) and exc.connection_invalidated
    ):
        log.warning("database unavailable on %s %s: %s", request.method, request.url.path, exc.__class__.__name__)
        return _unavailable("the database cannot be reached right now; retry shortly")
    if isinstance(exc, IntegrityError) and _lost_a_race(exc):
        log.warning("write conflict on %s %s: %s", request.method, request.url.path, exc.orig)
        return problem(
            409,
            "Conflict",
            "a request at the same time wrote the same record first (or removed one this write refers to); "
            "read it back, or retry",
        )
    log.exception("database error on %s %s", request.method, request.url.path)
    return problem(500, "Internal error", "the server failed; the error is in its log")


UNIQUE_OR_FOREIGN_KEY = {"23505", "23503"}
"""PostgreSQL's SQLSTATEs of a unique and a foreign-key violation."""


def _lost_a_race(exc: IntegrityError) -> bool:
    """Whether ``exc`` is a check-then-write that another transaction overtook: a unique key taken, or a
    referenced row gone, between this transaction's read and its write. PostgreSQL at READ COMMITTED lets
    two identical creates both pass their check (SQLite's one writer at a time never does). Another
    integrity error (a NOT NULL, a CHECK) is the server's own mistake, and stays a 500."""
    state = getattr(exc.orig, "sqlstate", None)
    if state is not None:
        return state in UNIQUE_OR_FOREIGN_KEY
    message = str(exc.orig)
    return message.startswith(("UNIQUE constraint failed", "FOREIGN KEY constraint failed"))


def _internal_error() -> JSONResponse:
    return problem(500, "Internal error", "the server failed; the error is in its log")


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return _internal_error()


class UnexpectedErrors:
    """ASGI middleware that turns an unexpected exception into a 500 problem *inside* the request-id
    and security-header middleware, and swallows it. Starlette's own catch-all sits outside every
    middleware: its 500 had neither header, and the exception it re-raises makes the server close
    the connection. Installed innermost, so every answer, errors included, passes the others."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, watched)
        except Exception:
            if started:  # part of a body is out: only ending the connection can say it failed (logged outside)
                raise
            log.exception("unhandled error on %s %s", scope.get("method"), scope.get("path"))
            await _internal_error()(scope, receive, send)


def install(app: FastAPI) -> None:
    """The handlers, and the middleware that keeps an unexpected error's answer inside the others
    (call before adding any other middleware: the first added is the innermost)."""
    app.add_middleware(UnexpectedErrors)
    app.add_exception_handler(HwadvisorError, _hwadvisor_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(DBAPIError, _database_error)
    app.add_exception_handler(PoolTimeoutError, _database_error)
    app.add_exception_handler(Exception, _unexpected_error)
