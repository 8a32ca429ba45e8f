"""A weak HWADVISOR_ADMIN_TOKEN is refused at start, in one line, before anything is served."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.config import Settings, admin_token_weakness
from app.errors import ConfigError
from testkit import ROOT


@pytest.mark.parametrize("token", ["changeme", "admin", "x" * 64, "abcabcabcabcabcabcabcabcabcabcabcabc"])
def test_weak_admin_tokens_are_refused(token: str) -> None:
    with pytest.raises(ConfigError, match="HWADVISOR_ADMIN_TOKEN is too weak"):
        Settings(admin_token=token)


@pytest.mark.parametrize("token", ["0123456789abcdef" * 2, "hwa-" + "Zq8_rT2-" * 5])
def test_generated_admin_tokens_pass(token: str) -> None:
    assert admin_token_weakness(token) is None
    assert Settings(admin_token=token).admin_token == token


def test_the_server_refuses_to_start_with_a_weak_admin_token(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "HWADVISOR_ADMIN_TOKEN": "letmein",
        "HWADVISOR_DATA_DIR": str(tmp_path),
        "HWADVISOR_DATABASE_URL": f"sqlite:///{tmp_path / 'x.db'}",
    }
    done = subprocess.run(
        [sys.executable, "-m", "app", "server", "--port", "1"],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "hwadvisor: error: HWADVISOR_ADMIN_TOKEN is too weak: it has 7 characters" in done.stderr
    assert "openssl rand -hex 32" in done.stderr
    assert not (tmp_path / "x.db").exists()  # refused before touching the database
