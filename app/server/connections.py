"""What one client's connections may hold: uvicorn's HTTP protocol with read and write deadlines and
a per-address cap.

uvicorn waits for a request's head and body as long as the client likes: a client that connects
and says nothing, sends a header line every few seconds, or declares a body and never sends it,
holds its socket (and a page of buffers) for ever, and a few thousand of them use up the process's
file descriptors, after which nobody connects (slowloris). Here:

- a connection's next request head must arrive whole within ``read_timeout_s`` of the connection
  opening or of the head's first byte (so an idle keep-alive connection still closes on uvicorn's
  own keep-alive timeout);
- a body must not go quiet for ``read_timeout_s`` between two reads, and must arrive whole within
  ``read_timeout_s`` plus its length at ``MIN_BODY_RATE`` (a slow upload that keeps moving is not cut;
  one trickled a byte at a time, R.U.D.Y., is);
- an answer the client stops reading (the transport's buffer full, slow read) is dropped once nothing
  more could be written for ``read_timeout_s``;
- one client address holds at most ``max_client_connections`` open connections. A connection over
  the cap takes the place of that address's longest-waiting connection that has not sent a whole
  request (a stalled one, or a kept-alive one between requests); where every one of them is inside
  a request, the newcomer is closed. So a client that shares its address with a slowloris (a NAT, a
  proxy, the same host) still gets in, and the stalled connections churn instead of piling up.
  Behind a reverse proxy every client has the proxy's address: raise the cap there, or set it to 0
  (no cap) and let the proxy limit clients.

A connection over its deadline is closed, as uvicorn closes one over its keep-alive timeout; a
route still waiting for that body reads a disconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from app.config import get_settings
from app.server.routes.workloads import ONNX_PATH

MIN_BODY_RATE = 16 * 1024
"""Bytes a second a body must average after its grace (``read_timeout_s``): an upload slower than a
128 kbit/s line is taken for an attack. A body without a length may take as long as the largest body
the server takes would."""


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol, with the deadlines and the per-address cap above."""

    open_per_address: ClassVar[dict[str, dict[GuardedH11Protocol, None]]] = {}
    """Each address's open connections, oldest first (one event loop per process: never raced)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        settings = get_settings()
        self.read_timeout_s = settings.read_timeout_s
        self.max_client_connections = settings.max_client_connections
        self.largest_body = settings.max_body_bytes
        self.largest_upload = settings.max_onnx_bytes
        self.address: str | None = None
        self.read_deadline: asyncio.TimerHandle | None = None
        self.body_due: float | None = None
        """Loop time by which the current request's whole body must be in."""
        self.write_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.address = self.client[0] if self.client else None
        if self.address is not None:
            mine = self.open_per_address.setdefault(self.address, {})
            if self.max_client_connections and len(mine) >= self.max_client_connections:
                waiting = next((other for other in mine if other._awaiting_request()), None)
                if waiting is None:
                    busy = f"its {self.max_client_connections} connections are all inside requests"
                    self.logger.warning("refused a connection from %s: %s", self.address, busy)
                    self.address = None  # never counted
                    transport.close()
                    return
                waiting._close("made room for a newer connection from its address")
            mine[self] = None
        self._arm()

    def _awaiting_request(self) -> bool:
        """Waiting for a request's head: stalled, or kept alive between requests (not inside one)."""
        return self.conn.their_state is h11.IDLE and (self.cycle is None or self.cycle.response_complete)

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        self._unwatch_writes()
        self._forget()
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        super().pause_writing()
        if self.write_deadline is None:  # the client stopped taking what is written: how long for
            self.write_deadline = self.loop.call_later(self.read_timeout_s, self._unread)

    def resume_writing(self) -> None:
        super().resume_writing()
        self._unwatch_writes()

    def _unwatch_writes(self) -> None:
        if self.write_deadline is not None:
            self.write_deadline.cancel()
            self.write_deadline = None

    def _unread(self) -> None:
        """An answer nobody reads: dropped, not flushed (a flush would wait on the same client)."""
        self.write_deadline = None
        self._close(f"the client read nothing for {self.read_timeout_s:.0f} s", drop=True)

    def _forget(self) -> None:
        if self.address is not None:
            mine = self.open_per_address.get(self.address, {})
            mine.pop(self, None)
            if not mine:
                self.open_per_address.pop(self.address, None)
            self.address = None

    def data_received(self, data: bytes) -> None:
        awaiting_head = self.conn.their_state is h11.IDLE
        super().data_received(data)
        if self.transport.is_closing():
            return
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            if self.body_due is None:
                self.body_due = self.loop.time() + self.read_timeout_s + self._body_length() / MIN_BODY_RATE
            # the body moved: the silence starts again, but never past the whole body's due time
            self._arm(restart=True, within=self.body_due - self.loop.time())
        elif state is h11.IDLE and awaiting_head:
            self._arm()  # part of a head: its deadline runs from its first byte
        else:
            self.body_due = None
            self._disarm()  # the request is in: the route has it, keep-alive is uvicorn's

    def _body_length(self) -> int:
        """The body's declared length; without one (a chunked body), the largest body its route takes: an
        ONNX upload's on that route, the API's on any other (an hour's allowance at MIN_BODY_RATE, which
        every route had, is the upload's alone)."""
        declared = dict(self.headers or []).get(b"content-length", b"")
        if declared.isdigit():
            return int(declared)
        path = str(self.scope.get("path", "")) if self.scope else ""
        return self.largest_upload if path.endswith(ONNX_PATH) else self.largest_body

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self.body_due = None
        self._disarm()  # until the next request's first byte, uvicorn's keep-alive timeout holds

    def _arm(self, *, restart: bool = False, within: float | None = None) -> None:
        if self.read_deadline is not None:
            if not restart:
                return
            self.read_deadline.cancel()
        delay = self.read_timeout_s if within is None else max(0.0, min(self.read_timeout_s, within))
        self.read_deadline = self.loop.call_later(delay, self._too_slow)

    def _disarm(self) -> None:
        if self.read_deadline is not None:
            self.read_deadline.cancel()
            self.read_deadline = None

    def _too_slow(self) -> None:
        self.read_deadline = None
        late = self.body_due is not None and self.loop.time() >= self.body_due
        self._close(
            f"a body slower than {MIN_BODY_RATE} bytes/s" if late else f"nothing read for {self.read_timeout_s:.0f} s"
        )

    def _close(self, why: str, *, drop: bool = False) -> None:
        """Close as uvicorn closes a connection over its keep-alive timeout (``drop``: discarding what is
        still to be written); it stops counting at once."""
        self._disarm()
        self._unwatch_writes()
        self._forget()
        if self.transport.is_closing() and not drop:
            return
        self.logger.info("closed a connection from %s: %s", self.client[0] if self.client else "?", why)
        with contextlib.suppress(h11.LocalProtocolError):  # h11 already knows the connection failed
            self.conn.send(h11.ConnectionClosed())
        if drop:
            self.transport.abort()
        else:
            self.transport.close()
