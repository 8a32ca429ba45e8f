"""Two HTTP conventions FastAPI's routes leave out, kept once for every route:

- ``HEAD`` is answered as ``GET`` is, without the body (RFC 9110 9.3.2): monitors and link checkers
  send it, and every GET route answered 405;
- a redirect names a path on this server, not the address the request's ``Host`` header gave:
  Starlette's trailing-slash redirect (``/api/v1/machines/`` -> ``/api/v1/machines``) wrote
  ``http://<Host>/api/v1/machines``, so whoever set the header chose where a client (or a cache in
  front of the server) was sent.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HttpConventions:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        head = scope["method"] == "HEAD"
        if head:
            scope = {**scope, "method": "GET"}

        async def conventional(message: Message) -> None:
            if message["type"] == "http.response.start" and 300 <= message["status"] < 400:
                headers = MutableHeaders(scope=message)
                if "location" in headers:
                    headers["location"] = on_this_server(headers["location"])
            elif message["type"] == "http.response.body" and head:
                message = {**message, "body": b""}  # Content-Length still says what GET would send
            await send(message)

        await self.app(scope, receive, conventional)


def on_this_server(location: str) -> str:
    """An absolute address made relative: its path, query and fragment, on whatever host the client
    reached. A scheme-relative ``//host/path`` is another host too."""
    parts = urlsplit(location)
    if not (parts.scheme or parts.netloc):
        return location
    path = "/" + parts.path.lstrip("/")  # "//evil" as a path would be read as a host
    return path + (f"?{parts.query}" if parts.query else "") + (f"#{parts.fragment}" if parts.fragment else "")
