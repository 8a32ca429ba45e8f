"""Failed logins, enrollments and bearer tokens are limited per client, in the database: every worker
shares the count."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from fastapi.testclient import TestClient

from app.config import Settings
from app.db.engine import Database
from app.server.app import create_app
from testkit.factories import machine_spec
from tests.conftest import ADMIN_TOKEN


@contextmanager
def worker(db: Database, settings: Settings) -> Iterator[TestClient]:
    """One server worker: its own app (and memory) on the shared database."""
    with TestClient(create_app(settings, database=db)) as client:
        yield client


def test_failed_logins_are_limited_across_workers(db: Database, settings: Settings) -> None:
    limited = settings.model_copy(update={"auth_failures_per_window": 3, "auth_window_s": 600})
    with worker(db, limited) as one, worker(db, limited) as two:
        for client in (one, two, one):
            assert client.post("/api/v1/session", json={"token": "hwa_admin_x.guess"}).status_code == 401
        refused = two.post("/api/v1/session", json={"token": "hwa_admin_x.guess"})
        assert refused.status_code == 429, refused.text
        assert 1 <= int(refused.headers["retry-after"]) <= 600
        assert "too many failed login attempts" in refused.json()["detail"]
        # a valid token is let in: a stranger at the same address cannot lock its owner out
        assert two.post("/api/v1/session", json={"token": ADMIN_TOKEN}).status_code == 200
        # other routes and the bearer API are not affected
        assert one.get("/api/v1/machines", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"}).status_code == 200


def test_failed_enrollments_are_limited_and_good_ones_are_not_counted(db: Database, settings: Settings) -> None:
    limited = settings.model_copy(update={"auth_failures_per_window": 2, "auth_window_s": 600})
    with worker(db, limited) as client:
        admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        token = client.post("/api/v1/tokens", json={"kind": "enrollment"}, headers=admin).json()["token"]
        body = {"spec": machine_spec().model_dump(mode="json")}
        for _ in range(3):  # successes do not count towards the limit
            body = {"spec": machine_spec().model_dump(mode="json")}
            ok = client.post("/api/v1/agents/enroll", json=body, headers={"Authorization": f"Bearer {token}"})
            assert ok.status_code == 201, ok.text
        for _ in range(2):
            bad = client.post(
                "/api/v1/agents/enroll", json=body, headers={"Authorization": "Bearer hwa_enrollment_x.y"}
            )
            assert bad.status_code == 401
        refused = client.post(
            "/api/v1/agents/enroll", json=body, headers={"Authorization": "Bearer hwa_enrollment_x.y"}
        )
        assert refused.status_code == 429 and "enrollment" in refused.json()["detail"]
        body = {"spec": machine_spec().model_dump(mode="json")}
        ok = client.post("/api/v1/agents/enroll", json=body, headers={"Authorization": f"Bearer {token}"})
        assert ok.status_code == 201, ok.text
        # the login allowance is separate
        assert client.post("/api/v1/session", json={"token": ADMIN_TOKEN}).status_code == 200


def test_guessing_bearer_tokens_is_limited_across_workers(db: Database, settings: Settings) -> None:
    limited = settings.model_copy(update={"auth_failures_per_window": 3, "auth_window_s": 600})
    good = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    with worker(db, limited) as one, worker(db, limited) as two:
        assert one.get("/api/v1/machines", headers=good).status_code == 200  # successes do not count
        for client in (one, two, one):
            guess = {"Authorization": "Bearer hwa_admin_000000000000." + "A" * 43}
            assert client.get("/api/v1/machines", headers=guess).status_code == 401
        refused = two.get("/api/v1/machines", headers=guess)
        assert refused.status_code == 429, refused.text
        assert 1 <= int(refused.headers["retry-after"]) <= 600
        assert "too many failed bearer token attempts" in refused.json()["detail"]
        assert two.get("/api/v1/machines", headers=good).status_code == 200, "its owner is not locked out"
        # the dashboard's login allowance is separate
        assert one.post("/api/v1/session", json={"token": ADMIN_TOKEN}).status_code == 200
