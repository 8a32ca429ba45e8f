"""What can be checked here of the deployment files without a Docker engine: the compose file parses
under the Compose specification (compose-spec, the Rust reference parser), and hadolint passes the
Dockerfile."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from compose_spec import PyCompose

ROOT = Path(__file__).resolve().parents[1]


def test_the_compose_file_follows_the_compose_specification() -> None:
    compose = PyCompose.from_yaml((ROOT / "docker-compose.yml").read_text())
    assert compose.service_names() == ["db", "server", "agent"]
    services = compose.to_dict()["services"]
    assert services["server"]["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert services["agent"]["depends_on"] == {"server": {"condition": "service_healthy"}}
    assert "db-data" in (compose.volumes or {})  # the database survives the containers
    environment = services["agent"]["environment"]
    assert "HWADVISOR_ENROLLMENT_TOKEN" in environment  # enrolled by a token from the environment


def test_the_parser_does_refuse_a_broken_compose_file() -> None:
    with pytest.raises(ValueError, match="condition"):
        PyCompose.from_yaml("services:\n  x:\n    image: a\n    depends_on:\n      db:\n        condition: up\n")


def test_hadolint_passes_the_dockerfile() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    done = subprocess.run([str(hadolint), str(ROOT / "Dockerfile")], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    text = (ROOT / "Dockerfile").read_text()
    assert "USER 10001" in text and "HEALTHCHECK" in text and text.count("FROM ") == 2  # non-root, multi-stage
