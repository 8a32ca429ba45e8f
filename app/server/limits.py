"""Limits on requests, enforced before anything reads them: the body's size (413 instead of a full
read) and NUL characters in the path, the query or the headers (422 instead of a database error)."""

from __future__ import annotations

from urllib.parse import parse_qsl

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.contracts.common import NUL
from app.server.errors import answer, missing_token, problem


class BodySizeLimit:
    """``max_bytes`` for every body, but the paths in ``per_path`` (uploads) have their own limit and
    advice: path -> (bytes, what to do instead)."""

    def __init__(self, app: ASGIApp, *, max_bytes: int, per_path: dict[str, tuple[int, str]] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.per_path = per_path or {}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit, advice = self.per_path.get(scope.get("path", ""), (self.max_bytes, SPLIT))
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await problem(413, "Body too large", _detail(limit, advice))(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit:
                    # FastAPI re-raises HTTPException from body reading; the handler makes it a problem.
                    raise HTTPException(413, _detail(limit, advice))
            return message

        await self.app(scope, counted, send)


SPLIT = "split the upload into smaller runs"


def _detail(limit: int, advice: str) -> str:
    return f"request body is over the {limit} byte limit; {advice}"


class RefuseAnonymousBodies:
    """A request that sends a body to the API with no credentials at all (no Authorization header, no
    session cookie) is refused with the 401 the route would give, before its body is read. FastAPI reads
    and parses a JSON body before a route's dependencies check the caller: an anonymous 8 MB body cost
    the server 160 MB and its event loop a quarter of a second, only to be told 401. ``open_paths`` take
    a body from anyone (the dashboard's login)."""

    def __init__(self, app: ASGIApp, *, prefix: str, open_paths: frozenset[str], cookie: str) -> None:
        self.app = app
        self.prefix = prefix
        self.open_paths = open_paths
        self.cookie = f"{cookie}=".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and self._anonymous_body(scope):
            await answer(missing_token())(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _anonymous_body(self, scope: Scope) -> bool:
        path = str(scope.get("path", ""))
        if scope.get("method") not in BODY_METHODS or not path.startswith(self.prefix) or path in self.open_paths:
            return False
        for name, value in scope.get("headers") or ():
            if name == b"authorization":
                return False
            if name == b"cookie" and any(part.strip().startswith(self.cookie) for part in value.split(b";")):
                return False
        return True


BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})


class RefuseNul:
    """No URL or header of this API has a use for a NUL character, and PostgreSQL cannot compare
    text with one: a filter (``/results?workload=%00``), a path segment or a token holding one was a
    500. Refused here, once for every route, the way FastAPI refuses an invalid parameter (422
    naming it), so no route needs to remember; a JSON body's text is refused by the contracts."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            where = _nul_in_request(scope)
            if where:
                message = "may not contain a NUL character (\\x00)"
                await problem(
                    422,
                    "Invalid request",
                    f"1 invalid field(s): {where}",
                    errors=[{"field": where, "message": message}],
                )(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _nul_in_request(scope: Scope) -> str | None:
    if NUL in str(scope.get("path", "")):
        return "path"
    query = bytes(scope.get("query_string") or b"").decode("latin-1")
    if "%00" in query or NUL in query:
        for key, value in parse_qsl(query, keep_blank_values=True):
            if NUL in key:
                return "query"
            if NUL in value:
                return f"query.{key}"
        return "query"
    for name, value in scope.get("headers") or ():
        if b"\0" in value:
            return f"header.{name.decode('latin-1')}"
    return None


# Paging offsets stay within a 64-bit integer the databases can bind (a larger one made SQLite fail).
MAX_OFFSET = 1_000_000_000
