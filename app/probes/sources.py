"""Where probes read the machine from: the live host, or a captured one replayed from files.

Probes never open /sys or run lscpu themselves; they ask a Sources object. The host answers
from the real system; a FixtureSources answers from a folder captured on another machine (an
H100 server, an Arm box, a container), so the same parsing code is tested on hardware we lack.

A fixture folder holds:
  fs/<absolute path>      files as they were (fs/proc/cpuinfo, fs/sys/fs/cgroup/cpu.max, ...)
  cmd/<program>.txt       what a program printed (cmd/lscpu.txt)
  host.json               {"machine": "x86_64", "affinity": 16, "hostname": "...", ...}
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import socket
import subprocess
from abc import ABC, abstractmethod
from pathlib import Path
from typing import Any

COMMAND_TIMEOUT_S = 10


class Sources(ABC):
    captured: bool = False
    """True when replaying a machine captured elsewhere: library-backed facts come from facts()."""

    @abstractmethod
    def read(self, path: str) -> str | None:
        """The text of a file, or None when it does not exist or cannot be read."""

    @abstractmethod
    def command(self, program: str, *args: str) -> str | None:
        """What a program printed, or None when it is missing or failed."""

    @abstractmethod
    def listdir(self, path: str) -> list[str]:
        """Names in a folder; empty when it does not exist."""

    @abstractmethod
    def affinity(self) -> int | None:
        """How many CPUs the scheduler lets this process run on."""

    @abstractmethod
    def machine(self) -> str:
        """The CPU architecture (platform.machine())."""

    @abstractmethod
    def hostname(self) -> str: ...

    def facts(self) -> dict[str, Any]:
        """Extra facts a replay supplies that the host answers through libraries (memory, OS)."""
        return {}


class HostSources(Sources):
    def read(self, path: str) -> str | None:
        try:
            return Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def command(self, program: str, *args: str) -> str | None:
        executable = shutil.which(program)
        if executable is None:
            return None
        try:
            done = subprocess.run(
                [executable, *args],
                capture_output=True,
                text=True,
                timeout=COMMAND_TIMEOUT_S,
                env={**os.environ, "LC_ALL": "C"},
                check=False,
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    def listdir(self, path: str) -> list[str]:
        try:
            return sorted(os.listdir(path))
        except OSError:
            return []

    def affinity(self) -> int | None:
        getter = getattr(os, "sched_getaffinity", None)
        return len(getter(0)) if getter else None

    def machine(self) -> str:
        return platform.machine()

    def hostname(self) -> str:
        return socket.gethostname()


def fixture_path(root: Path, path: str) -> Path:
    """Where a fixture folder keeps the file at the absolute ``path``."""
    return root / "fs" / path.lstrip("/")


class FixtureSources(Sources):
    """A machine captured in a folder (see the module docstring)."""

    captured = True

    def __init__(self, root: Path) -> None:
        self.root = root
        host = root / "host.json"
        self._host: dict[str, Any] = json.loads(host.read_text()) if host.is_file() else {}

    def read(self, path: str) -> str | None:
        try:
            return fixture_path(self.root, path).read_text(encoding="utf-8")
        except OSError:
            return None

    def command(self, program: str, *args: str) -> str | None:
        try:
            return (self.root / "cmd" / f"{program}.txt").read_text(encoding="utf-8")
        except OSError:
            return None

    def listdir(self, path: str) -> list[str]:
        folder = fixture_path(self.root, path)
        return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []

    def affinity(self) -> int | None:
        value = self._host.get("affinity")
        return int(value) if value is not None else None

    def machine(self) -> str:
        return str(self._host.get("machine", "x86_64"))

    def hostname(self) -> str:
        return str(self._host.get("hostname", self.root.name))

    def facts(self) -> dict[str, Any]:
        return dict(self._host)


class RecordingSources(HostSources):
    """The live host, every answer also written into a fixture folder that FixtureSources replays.

    What the probes read is what gets captured, no more: a probe that reads a new file is captured
    with it on the next machine. A file that could not be read is left out (a replay answers None
    for it too); a folder listed is made, so that a replay lists the same names."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def read(self, path: str) -> str | None:
        text = super().read(path)
        if text is not None:
            target = fixture_path(self.root, path)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        return text

    def command(self, program: str, *args: str) -> str | None:
        text = super().command(program, *args)
        if text is not None:
            (self.root / "cmd").mkdir(parents=True, exist_ok=True)
            (self.root / "cmd" / f"{program}.txt").write_text(text, encoding="utf-8")
        return text

    def listdir(self, path: str) -> list[str]:
        names = super().listdir(path)
        for name in names:
            entry = fixture_path(self.root, f"{path.rstrip('/')}/{name}")
            if not entry.exists():
                entry.mkdir(parents=True)
        return names
