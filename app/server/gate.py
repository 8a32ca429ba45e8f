"""How many heavy answers one server process computes at once.

A recommendation over the catalog, a plan or an ONNX file's profile takes a CPU for a fraction of a
second to seconds, on the request threads that agents' heartbeats, uploads and job claims share. A
few readers asking for the largest plans at once would otherwise hold every thread. A heavy request
waits for a turn in the event loop, where waiting holds no thread (a burst from a procurement tool
queues), for up to ``WAIT_S``; past that it is told to come back (503 with Retry-After).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from fastapi import Request

from app.errors import Busy

WAIT_S = 30.0
RETRY_AFTER_S = 5


class Gate:
    def __init__(self, turns: int) -> None:
        self.turns = turns
        self._free: anyio.Semaphore | None = None

    def open(self) -> None:
        """Made in the worker's event loop, as it starts (app.server.app's lifespan)."""
        self._free = anyio.Semaphore(self.turns)

    @asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        assert self._free is not None, "the gate opens with the app's lifespan"
        try:
            with anyio.fail_after(WAIT_S):  # the wait alone: the answer takes as long as it takes
                await self._free.acquire()
        except TimeoutError:
            raise Busy(
                f"the server has been computing {self.turns} recommendations, plans or profiles for {WAIT_S:g} s",
                retry_after_s=RETRY_AFTER_S,
                hint=f"ask again in {RETRY_AFTER_S} s; an operator can raise HWADVISOR_HEAVY_REQUESTS",
            ) from None
        try:
            yield
        finally:
            self._free.release()


async def heavy_turn(request: Request) -> AsyncIterator[None]:
    """A FastAPI dependency: the route runs holding one of the gate's turns."""
    gate: Gate = request.app.state.heavy
    async with gate.held():
        yield
