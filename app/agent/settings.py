"""The agent's own config file: which server, its machine token, where its outbox lives.

Written by `hwadvisor agent enroll`, readable only by its owner (it holds a secret).
"""

from __future__ import annotations

import json
import os
import stat
import uuid
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from app.config import default_data_dir
from app.errors import ConfigError


def default_config_path() -> Path:
    explicit = os.environ.get("HWADVISOR_AGENT_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "hwadvisor" / "agent.json"


class AgentSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    server: str
    machine_id: uuid.UUID
    token: str
    outbox: Path = Field(default_factory=lambda: default_data_dir() / "agent-outbox.db")
    quiet_check: bool = True
    max_busy_cpu_percent: float = Field(default=25.0, ge=0, le=100)
    """The machine counts as quiet when other processes use less than this share of all CPUs."""
    poll_interval_s: float = Field(default=5.0, gt=0)
    job_upload_attempts: int = Field(default=8, ge=1, le=100)
    """Uploads tried (with backoff: by default ~1 min on average, 2 min at most) before a job whose run
    the server would not take is reported failed; the run stays in the outbox for later turns of the loop."""

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(self.model_dump_json(indent=2))
        os.chmod(tmp, 0o600)
        tmp.replace(path)

    @classmethod
    def load(cls, path: Path) -> AgentSettings:
        try:
            return cls.model_validate(json.loads(path.read_text()))
        except FileNotFoundError:
            raise ConfigError(
                f"no agent config at {path}", hint="enrol first: hwadvisor agent enroll --server URL --token TOKEN"
            ) from None
        except ValueError as exc:
            raise ConfigError(f"the agent config {path} is not valid: {exc}") from exc


def exposure_warning(path: Path) -> str | None:
    """Why the config file (it holds the machine token) is readable by more than its owner, with
    the command that fixes it; None when it is not."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return None
    who = [name for bit, name in ((stat.S_IRGRP, "its group"), (stat.S_IROTH, "every user")) if mode & bit]
    if not who:
        return None
    return (
        f"the agent config {path} holds this machine's token and is readable by {' and '.join(who)}"
        f" (mode {stat.S_IMODE(mode):o}): chmod 600 {path}"
    )
