"""How many heavy answers one server process computes at once.

A recommendation over the catalog, a plan or an ONNX file's profile takes a CPU for a fraction of a
second to seconds; the server's request threads are shared with agents' heartbeats, uploads and job
claims. A few readers asking for the largest plans at once would otherwise hold every thread. A heavy
request takes a turn from the gate, waits up to ``WAIT_S`` for one, and is otherwise told to come
back (503 with Retry-After), which a procurement tool's HTTP client retries.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import Request

from app.errors import Busy

WAIT_S = 1.0
RETRY_AFTER_S = 2


class Gate:
    def __init__(self, turns: int) -> None:
        self.turns = turns
        self._free = threading.BoundedSemaphore(turns)

    @contextmanager
    def held(self) -> Iterator[None]:
        if not self._free.acquire(timeout=WAIT_S):
            raise Busy(
                f"the server is computing {self.turns} recommendations, plans or profiles already",
                retry_after_s=RETRY_AFTER_S,
                hint=f"ask again in {RETRY_AFTER_S} s; an operator can raise HWADVISOR_HEAVY_REQUESTS",
            )
        try:
            yield
        finally:
            self._free.release()


def heavy_turn(request: Request) -> Iterator[None]:
    """A FastAPI dependency: the route runs holding one of the gate's turns."""
    gate: Gate = request.app.state.heavy
    with gate.held():
        yield
