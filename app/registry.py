"""One registry class for every plug-in family: workloads, runtimes, probes, recommender strategies.

A plug-in registers under a name when its module is imported; an unknown name is an error that
lists what is there; a plug-in that cannot run here says why instead of vanishing from the list.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Generic, TypeVar

from app.errors import NotFoundError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Entry(Generic[T]):
    name: str
    plugin: T


class Registry(Generic[T]):
    def __init__(self, family: str) -> None:
        self.family = family
        self._entries: dict[str, T] = {}

    def register(self, name: str) -> Callable[[T], T]:
        """Decorator: ``@probes.register("cpu")``."""

        def add(plugin: T) -> T:
            self.add(name, plugin)
            return plugin

        return add

    def add(self, name: str, plugin: T) -> None:
        if name in self._entries:
            raise ValueError(f"{self.family} {name!r} is registered twice")
        self._entries[name] = plugin

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            available = ", ".join(sorted(self._entries)) or "none"
            raise NotFoundError(f"unknown {self.family} {name!r}", hint=f"available: {available}") from None

    def names(self, pattern: str = "*") -> list[str]:
        return sorted(n for n in self._entries if fnmatch.fnmatchcase(n, pattern))

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[Entry[T]]:
        for name in sorted(self._entries):
            yield Entry(name, self._entries[name])

    def __len__(self) -> int:
        return len(self._entries)
