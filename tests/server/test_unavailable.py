"""A database that cannot be reached: 503 with Retry-After, no traceback, and the server stays up."""

from __future__ import annotations

import socket
from pathlib import Path

from fastapi.testclient import TestClient

from app.config import Settings
from app.server.app import create_app


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_database_answers_503_with_retry_after(tmp_path: Path) -> None:
    url = f"postgresql+psycopg://postgres@127.0.0.1:{_closed_port()}/nowhere"
    settings = Settings(database_url=url, admin_token="admin-" + "0123456789abcdef" * 2, data_dir=tmp_path)
    with TestClient(create_app(settings), raise_server_exceptions=False) as client:
        for path in ("/healthz", "/api/v1/machines"):
            headers = {"Authorization": f"Bearer {settings.admin_token}"}
            response = client.get(path, headers=headers)
            assert response.status_code == 503, (path, response.text)
            assert response.headers["retry-after"] == "5"
            assert "Traceback" not in response.text and "psycopg" not in response.text
            assert response.json()["title"] == "Database unavailable"
