"""Heavy answers take turns: with every turn taken, another waits a moment and is then told to come
back (503, Retry-After), while the routes agents use go on answering."""

from __future__ import annotations

from fastapi.testclient import TestClient

from app.config import Settings
from app.db.engine import Database
from app.server.app import create_app
from app.server.gate import Gate
from testkit.factories import Api
from tests.conftest import ADMIN_TOKEN


def test_with_every_turn_taken_a_heavy_request_is_told_to_come_back(db: Database, settings: Settings) -> None:
    one_turn = settings.model_copy(update={"heavy_requests": 1})
    with TestClient(create_app(one_turn, database=db)) as client:
        api = Api(client, ADMIN_TOKEN)
        gate: Gate = client.app.state.heavy  # type: ignore[attr-defined]
        ask = {"workload": "resnet50", "task": "infer", "scope": "catalog"}
        with gate.held():  # another request is computing
            busy = client.post("/api/v1/recommendations", json=ask, headers=api.admin)
            assert busy.status_code == 503, busy.text
            assert busy.headers["retry-after"] == "2"
            assert "HWADVISOR_HEAVY_REQUESTS" in busy.json()["detail"]
            stranger = client.post("/api/v1/recommendations", json=ask)
            assert stranger.status_code == 401, "a caller without a token never waits for a turn"
            assert client.get("/api/v1/machines", headers=api.admin).status_code == 200
            assert client.get("/healthz").status_code == 200
        answered = client.post("/api/v1/recommendations", json=ask, headers=api.admin)
        assert answered.status_code == 200, answered.text
        # the turn was given back after the answer
        again = client.post("/api/v1/recommendations", json=ask, headers=api.admin)
        assert again.status_code == 200
