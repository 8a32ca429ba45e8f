"""Settings from HWADVISOR_* environment variables, in one Settings object."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app.errors import ConfigError

ADMIN_TOKEN_MIN_LENGTH = 32
ADMIN_TOKEN_MIN_DISTINCT = 8


def admin_token_weakness(token: str) -> str | None:
    """Why an HWADVISOR_ADMIN_TOKEN is too weak to guard the whole server, or None.

    Length and character variety are what can be checked without a dictionary: 32 characters of
    `openssl rand -hex 16` or more pass, 'changeme' and 'aaaa...' do not."""
    if len(token) < ADMIN_TOKEN_MIN_LENGTH:
        return f"it has {len(token)} characters; at least {ADMIN_TOKEN_MIN_LENGTH} are needed"
    if len(set(token)) < ADMIN_TOKEN_MIN_DISTINCT:
        return f"it uses only {len(set(token))} different characters; at least {ADMIN_TOKEN_MIN_DISTINCT} are needed"
    return None


def default_data_dir() -> Path:
    """The per-user data directory (XDG on Linux), where the embedded database lives."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "hwadvisor"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HWADVISOR_", extra="ignore")

    data_dir: Path = Field(default_factory=default_data_dir)
    database_url: str | None = Field(
        default=None,
        description="SQLAlchemy URL; unset means an embedded SQLite file in data_dir.",
    )
    admin_token: str | None = Field(
        default=None,
        description="Admin bearer token; unset means one is generated on first start and printed once.",
    )
    host: str = "127.0.0.1"
    port: int = Field(default=8321, ge=1, le=65535)
    migrate_on_start: bool = True
    auto_approve_machines: bool = False
    max_body_bytes: int = Field(default=8 * 1024 * 1024, ge=1024)
    max_onnx_bytes: int = Field(
        default=64 * 1024 * 1024,
        ge=1024,
        description="The largest ONNX file POST /api/v1/workloads/onnx-profile takes (the CLI profiles any size).",
    )
    max_results_per_run: int = Field(default=10_000, ge=1)
    page_size_max: int = Field(default=1000, ge=1)
    log_format: Literal["text", "json"] = "text"
    auth_failures_per_window: int = Field(
        default=20, ge=1, description="Failed logins or enrollments one client may make per window before 429."
    )
    auth_window_s: int = Field(default=300, ge=1, description="The window of auth_failures_per_window, seconds.")
    read_timeout_s: float = Field(
        default=20.0,
        gt=0,
        description="A request's head must arrive whole within this many seconds of its first byte (or of the "
        "connection opening); a body may not go quiet for longer, and must arrive within this plus its length at "
        "16 KiB/s; an answer the client stops reading for this long is dropped. The connection is closed otherwise.",
    )
    proxy_headers: bool = Field(
        default=False,
        description="Take the client's address from X-Forwarded-For / X-Forwarded-Proto, sent by the addresses "
        "uvicorn's FORWARDED_ALLOW_IPS names (127.0.0.1 by default): turn it on behind a reverse proxy, so that "
        "rate limits and connection caps see each client, not the proxy. Off, no client can choose the address "
        "those limits count it under by sending the header itself.",
    )
    max_client_connections: int = Field(
        default=100,
        ge=0,
        description="Open connections one client address may hold (0: no cap): a newer one takes the place of "
        "the address's longest-waiting connection that has not sent a whole request, and is refused only when all "
        "are inside requests. Behind a reverse proxy every client has the proxy's address.",
    )
    heavy_requests: int = Field(
        default=4,
        ge=1,
        description="Recommendations, plans and ONNX profiles one server process computes at once; another "
        "waits for a turn, holding no thread, up to 30 s, then gets 503 with Retry-After (agents' and the "
        "dashboard's other calls keep the rest of the threads).",
    )
    heartbeat_interval_s: float = Field(default=15.0, gt=0, description="How often agents should heartbeat.")
    job_lease_s: float = Field(
        default=300.0, gt=0, description="A claimed job returns to the queue after this long without progress."
    )

    @field_validator("admin_token")
    @classmethod
    def _refuse_weak_admin_token(cls, value: str | None) -> str | None:
        """A guessable admin token is refused at start, not merely warned of: it opens every route,
        and a warning scrolls past in a service's log while the server runs exposed."""
        if not value:
            return None
        weakness = admin_token_weakness(value)
        if weakness:
            # ConfigError is not a ValueError: pydantic lets it through, and the CLI prints it in one line.
            raise ConfigError(
                f"HWADVISOR_ADMIN_TOKEN is too weak: {weakness}",
                hint="generate one with `openssl rand -hex 32`, or unset it to have the server generate one",
            )
        return value

    @field_validator("database_url")
    @classmethod
    def _normalise_database_url(cls, value: str | None) -> str | None:
        """Accept the URLs people paste (postgres://, postgresql://) and pick the psycopg 3 driver."""
        if not value:
            return None
        for prefix in ("postgres://", "postgresql://"):
            if value.startswith(prefix):
                return "postgresql+psycopg://" + value[len(prefix) :]
        return value

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.data_dir / 'hwadvisor.db'}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
