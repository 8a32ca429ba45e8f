"""Request body size limit, enforced before the body is parsed (413 instead of a full read)."""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.server.errors import problem


class BodySizeLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = headers.get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await problem(413, "Body too large", self._detail())(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    # FastAPI re-raises HTTPException from body reading; the handler makes it a problem.
                    raise HTTPException(413, self._detail())
            return message

        await self.app(scope, counted, send)

    def _detail(self) -> str:
        return f"request body is over the {self.max_bytes} byte limit; split the upload into smaller runs"


# Paging offsets stay within a 64-bit integer the databases can bind (a larger one made SQLite fail).
MAX_OFFSET = 1_000_000_000
