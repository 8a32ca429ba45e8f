"""Map errors to JSON problem bodies, once, for the whole app: never a traceback on the wire."""

from __future__ import annotations

import logging
from http import HTTPStatus
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError
from starlette.exceptions import HTTPException as StarletteHTTPException

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


def _unavailable(detail: str) -> JSONResponse:
    return problem(503, "Database unavailable", detail, headers={"Retry-After": RETRY_AFTER_S})


async def _hwadvisor_error(_request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, HwadvisorError)
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
    log.exception("database error on %s %s", request.method, request.url.path)
    return problem(500, "Internal error", "the server failed; the error is in its log")


async def _unexpected_error(request: Request, exc: Exception) -> JSONResponse:
    log.exception("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return problem(500, "Internal error", "the server failed; the error is in its log")


def install(app: FastAPI) -> None:
    app.add_exception_handler(HwadvisorError, _hwadvisor_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(DBAPIError, _database_error)
    app.add_exception_handler(PoolTimeoutError, _database_error)
    app.add_exception_handler(Exception, _unexpected_error)
