"""One registry class for every plug-in family: probes, workloads, runtimes, primitives, energy
meters, estimators, objectives (and the dashboard's pages, which are files the server lists).

A plug-in is a class with an ``info: ClassVar[PluginInfo]`` and registers one way, with the
family's decorator: ``@workloads.register``. A family names the package its plug-ins live in;
``Registry.load()`` imports every module of that package, so adding a plug-in is adding one file.
Plug-in modules keep heavy imports (torch, onnxruntime) inside their methods, so the metadata of
every family is readable without importing torch (``tests/test_registry.py`` holds that true).

An unknown name is an error that lists what is there; a plug-in that cannot run here (a package
missing) is still listed, with the reason and what to install.
"""

from __future__ import annotations

import fnmatch
import importlib
import importlib.metadata
import importlib.util
import pkgutil
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from app.errors import NotFoundError


@dataclass(frozen=True, slots=True)
class Need:
    """A Python package a plug-in needs: the module it imports, the distribution that installs it."""

    module: str
    distribution: str
    install: str = ""
    alternatives: tuple[str, ...] = ()
    """Other distributions that install the same module (onnxruntime-gpu for onnxruntime)."""

    @property
    def install_command(self) -> str:
        return self.install or f"pip install {self.distribution}"

    def missing(self) -> bool:
        """Neither imported nor loaded: the module is looked up and the distribution's metadata read."""
        try:
            if importlib.util.find_spec(self.module) is None:
                return True
        except (ImportError, ValueError):
            return True
        return self.version() is None

    def version(self) -> str | None:
        for distribution in (self.distribution, *self.alternatives):
            try:
                return importlib.metadata.version(distribution)
            except importlib.metadata.PackageNotFoundError:
                continue
        return None


@dataclass(frozen=True, slots=True, kw_only=True)
class PluginInfo:
    """What a plug-in is and what it needs, readable without loading it. A family that has more to
    say subclasses it with typed fields (``WorkloadInfo.parameters``) and lists them in ``details``."""

    name: str
    description: str
    tasks: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    needs: tuple[Need, ...] = ()

    def details(self) -> dict[str, Any]:
        """Family-specific facts the dashboard and CLI show (a workload's parameter count, say)."""
        return {}


class Plugin(Protocol):
    """A plug-in class: what the registry needs of it is its ``info``."""

    @property
    def info(self) -> PluginInfo: ...


P = TypeVar("P", bound=Plugin)


@dataclass(frozen=True, slots=True)
class Entry(Generic[P]):
    name: str
    plugin: P


class Registry(Generic[P]):
    """The plug-ins of one family, by name."""

    def __init__(self, family: str, package: str | None = None) -> None:
        self.family = family
        self.package = package
        self._entries: dict[str, P] = {}
        self._loaded = package is None
        self._ready = package is None
        self._lock = threading.RLock()

    def register(self, plugin: P) -> P:
        """Class decorator: ``@runtimes.register`` over a class with an ``info``."""
        name = plugin.info.name
        if name in self._entries and self._entries[name] is not plugin:
            raise ValueError(f"{self.family} {name!r} is registered twice")
        self._entries[name] = plugin
        return plugin

    def load(self) -> Registry[P]:
        """Import every module of the family's package once (each registers what it defines).

        The first caller imports under a lock, and every other thread waits for the whole family:
        the server's request threads and a benchmark's agents ask at once, and a thread that went on
        while the first was still importing saw a family with plug-ins missing (a probed machine
        without its GPU, a recommendation without an estimator). A plug-in module that asks its own
        registry while it is imported re-enters the lock and gets what is registered so far."""
        if self._ready:
            return self
        with self._lock:
            if not self._loaded:
                self._loaded = True
                assert self.package is not None
                package = importlib.import_module(self.package)
                for module in pkgutil.iter_modules(package.__path__, prefix=f"{self.package}."):
                    if not module.name.rsplit(".", 1)[-1].startswith("_"):
                        importlib.import_module(module.name)
                self._ready = True
        return self

    def get(self, name: str) -> P:
        self.load()
        try:
            return self._entries[name]
        except KeyError:
            available = ", ".join(sorted(self._entries)) or "none"
            raise NotFoundError(f"unknown {self.family} {name!r}", hint=f"available: {available}") from None

    def names(self, pattern: str = "*") -> list[str]:
        self.load()
        return sorted(n for n in self._entries if fnmatch.fnmatchcase(n, pattern))

    def infos(self) -> list[PluginInfo]:
        return [entry.plugin.info for entry in self]

    def unavailable(self, name: str) -> str | None:
        """Why the named plug-in cannot run on this machine (a package missing), or None."""
        missing = [need for need in self.get(name).info.needs if need.missing()]
        if not missing:
            return None
        return "; ".join(f"needs {need.distribution} ({need.install_command})" for need in missing)

    def __contains__(self, name: object) -> bool:
        self.load()
        return name in self._entries

    def __iter__(self) -> Iterator[Entry[P]]:
        self.load()
        for name in sorted(self._entries):
            yield Entry(name, self._entries[name])

    def __len__(self) -> int:
        self.load()
        return len(self._entries)


def describe(
    registry: Registry[Any], extra: Callable[[PluginInfo], dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Every plug-in of a family as plain data (what ``GET /api/v1/registry`` serves)."""
    rows = []
    for info in registry.infos():
        reason = registry.unavailable(info.name)
        row: dict[str, Any] = {
            "name": info.name,
            "description": info.description,
            "tasks": list(info.tasks),
            "precisions": list(info.precisions),
            "needs": [need.distribution for need in info.needs],
            "available": reason is None,
            "reason": reason,
            "details": info.details(),
        }
        if extra is not None:
            row.update(extra(info))
        rows.append(row)
    return rows
