"""Heavy answers take turns: with every turn taken, another waits for one (holding no thread) and,
past the wait, is told to come back (503, Retry-After); the routes agents use go on answering."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.config import Settings
from app.db.engine import Database
from app.server import gate as gate_module
from app.server.app import create_app
from app.server.gate import Gate
from testkit.factories import Api
from tests.conftest import ADMIN_TOKEN

ASK = {"workload": "resnet50", "task": "infer", "scope": "catalog"}


def test_with_every_turn_taken_a_heavy_request_waits_then_is_told_to_come_back(
    db: Database, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gate_module, "WAIT_S", 0.3)
    one_turn = settings.model_copy(update={"heavy_requests": 1})
    with TestClient(create_app(one_turn, database=db)) as client:
        api = Api(client, ADMIN_TOKEN)
        gate: Gate = client.app.state.heavy  # type: ignore[attr-defined]
        assert client.portal is not None
        with client.portal.wrap_async_context_manager(gate.held()):  # another request is computing
            busy = client.post("/api/v1/recommendations", json=ASK, headers=api.admin)
            assert busy.status_code == 503, busy.text
            assert busy.headers["retry-after"] == str(gate_module.RETRY_AFTER_S)
            assert "HWADVISOR_HEAVY_REQUESTS" in busy.json()["detail"]
            stranger = client.post("/api/v1/recommendations", json=ASK)
            assert stranger.status_code == 401, "a caller without a token never waits for a turn"
            assert client.get("/api/v1/machines", headers=api.admin).status_code == 200
            assert client.get("/healthz").status_code == 200
        answered = client.post("/api/v1/recommendations", json=ASK, headers=api.admin)
        assert answered.status_code == 200, answered.text
        again = client.post("/api/v1/recommendations", json=ASK, headers=api.admin)
        assert again.status_code == 200, "the turn was given back after the answer"


def test_a_burst_waits_its_turn_instead_of_failing(db: Database, settings: Settings) -> None:
    one_turn = settings.model_copy(update={"heavy_requests": 1})
    with TestClient(create_app(one_turn, database=db)) as client:
        api = Api(client, ADMIN_TOKEN)
        gate: Gate = client.app.state.heavy  # type: ignore[attr-defined]
        answers: list[Any] = []
        assert client.portal is not None
        with client.portal.wrap_async_context_manager(gate.held()):
            asking = threading.Thread(
                target=lambda: answers.append(client.post("/api/v1/recommendations", json=ASK, headers=api.admin))
            )
            asking.start()
            time.sleep(0.5)
            assert not answers, "it waits while the turn is taken"
        asking.join(timeout=60)
        assert [a.status_code for a in answers] == [200]


def test_waiting_for_a_turn_holds_no_request_thread(db: Database, settings: Settings) -> None:
    """More heavy requests wait than the server has request threads (40): the agents' routes still
    answer, since a wait is in the event loop. (An empty ONNX body is refused as soon as its turn
    comes: a heavy route that answers at once.)"""
    one_turn = settings.model_copy(update={"heavy_requests": 1})
    with TestClient(create_app(one_turn, database=db)) as client:
        api = Api(client, ADMIN_TOKEN)
        gate: Gate = client.app.state.heavy  # type: ignore[attr-defined]
        statuses: list[int] = []

        def ask() -> None:
            statuses.append(client.post("/api/v1/workloads/onnx-profile", content=b"", headers=api.admin).status_code)

        assert client.portal is not None
        with client.portal.wrap_async_context_manager(gate.held()):
            waiting = [threading.Thread(target=ask) for _ in range(48)]
            for t in waiting:
                t.start()
            time.sleep(0.5)
            assert not statuses
            answered: list[int] = []
            agent = threading.Thread(
                target=lambda: answered.append(client.get("/api/v1/machines", headers=api.admin).status_code)
            )
            agent.start()
            agent.join(timeout=20)
            assert answered == [200], "a reader's route answered while 48 heavy requests waited"
        for t in waiting:
            t.join(timeout=60)
        assert statuses == [422] * 48
