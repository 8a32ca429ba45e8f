"""An ask's options before its constraints and objective: every hardware x config estimated, with the
notes that go with them. Building them is the costly step (tens of thousands of estimates over the
whole catalog); they depend only on the workload, task, scope and batch (or the custom workload) and
on what the answer reads (the database's fleet, results and catalog, the shipped calibration), so
they are kept per process and reused until any of those changes.
"""

from __future__ import annotations

import gc
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

from app.contracts import Precision
from app.recommender.columns import Columns

CACHE_SIZE = 16
"""Tables kept (each a few tens of MB over the whole catalog); the least recently used goes first."""
UNESTIMATED_LISTED = 3
"""The runtime x precision pairs with the most unanswered hardware that the note names."""


@dataclass(frozen=True, slots=True)
class OptionTable:
    columns: Columns
    notes_before: list[str]
    """Notes said before the count of pairs nothing could estimate."""
    unestimated: dict[tuple[str, Precision], int]
    """Hardware x config pairs nothing could estimate, by runtime and precision (the ask's filters pick)."""
    notes_after: list[str]

    def notes(self, precisions: list[Precision] | None, runtimes: list[str] | None) -> list[str]:
        """The table's notes for an ask with these filters."""
        chosen = sorted(
            (
                (n, f"{runtime} {precision.value}")
                for (runtime, precision), n in self.unestimated.items()
                if (precisions is None or precision in precisions) and (runtimes is None or runtime in runtimes)
            ),
            key=lambda pair: (-pair[0], pair[1]),
        )
        unestimated = sum(n for n, _ in chosen)
        most = ", ".join(f"{what} {n}" for n, what in chosen[:UNESTIMATED_LISTED])
        more = ", ..." if len(chosen) > UNESTIMATED_LISTED else ""
        middle = (
            [
                f"{unestimated} hardware x config pairs had no measurement and nothing to predict them from "
                f"(no catalog entry, no peak for that precision, or a runtime for another kind of device: "
                f"{most}{more})"
            ]
            if unestimated
            else []
        )
        return [*self.notes_before, *middle, *self.notes_after]


class Loaded:
    """An object in a key by its identity (the shipped calibration as loaded: reloading it makes a
    new key). Holding it keeps its id from being reused while the key is kept."""

    __slots__ = ("thing",)

    def __init__(self, thing: object) -> None:
        self.thing = thing

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Loaded) and other.thing is self.thing

    def __hash__(self) -> int:
        return id(self.thing)


class _Building:
    """A table one thread is building, for the threads that ask for the same key meanwhile."""

    __slots__ = ("builder", "done", "error", "table")

    def __init__(self) -> None:
        self.builder = threading.get_ident()
        self.done = threading.Event()
        self.table: OptionTable | None = None
        self.error: BaseException | None = None

    def wait(self) -> OptionTable:
        self.done.wait()
        if self.error is not None:
            raise self.error
        assert self.table is not None
        return self.table


class TableCache:
    """Tables by key, the ``CACHE_SIZE`` most recently used. A key holds everything a table depends
    on, so a stale table is never found: it is just not asked for again, and ages out.

    One thread builds a missing table; others asking for the same key meanwhile wait for it rather than
    build it again. After a new result every ask of the workload misses at once, and builds side by side
    share the process's one interpreter lock: four of them would each take four builds' time."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._tables: OrderedDict[Hashable, OptionTable] = OrderedDict()
        self._building: dict[Hashable, _Building] = {}
        self._lock = threading.Lock()

    def get(self, key: Hashable, build: Callable[[], OptionTable]) -> OptionTable:
        with self._lock:
            found = self._tables.get(key)
            if found is not None:
                self._tables.move_to_end(key)
                return found
            building = self._building.get(key)
            if building is None:
                mine = self._building[key] = _Building()
        if building is not None:
            if building.builder == threading.get_ident():
                return build()  # asked again while building it (never so far): waiting would never end
            return building.wait()  # the builder's table, or its error: the same inputs fail the same way
        try:
            table = build()
            # A table is hundreds of thousands of objects that live until it ages out: move everything
            # alive now out of the cyclic collector's sight, or each full collection walks them again
            # (reference counting still frees them when the table is dropped; they make no cycles).
            gc.collect()
            gc.freeze()
            with self._lock:
                self._tables[key] = table
                while len(self._tables) > self.size:
                    self._tables.popitem(last=False)
            mine.table = table
            return table
        except BaseException as error:
            mine.error = error
            raise
        finally:  # the waiters go, with the table or the error, whichever way the build ended
            with self._lock:
                del self._building[key]
            mine.done.set()

    def clear(self) -> None:
        with self._lock:
            self._tables.clear()


tables = TableCache()
