from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select

from app.contracts import TokenKind
from app.db import tokens
from app.db.engine import Database
from app.db.models import Run, TokenRow, utcnow
from testkit.factories import Api, machine_spec, run_report


def test_missing_token_is_401_with_a_hint(api: Api) -> None:
    response = api.client.get("/api/v1/machines")
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert "Authorization: Bearer" in response.json()["detail"]


def test_a_body_without_credentials_is_refused_before_it_is_read(api: Api) -> None:
    """The body is never parsed: a broken one gets the same 401 (FastAPI's parse came first: a 422), and a
    login, which anyone may send, still reads its own."""
    broken = {"content-type": "application/json"}
    for method, path in (("POST", "/api/v1/runs"), ("PUT", "/api/v1/catalog/l4"), ("POST", "/api/v1/plans")):
        response = api.client.request(method, path, content=b"[{" * 1000, headers=broken)
        assert response.status_code == 401, response.text
        assert response.headers["www-authenticate"] == "Bearer"
        assert "Authorization: Bearer" in response.json()["detail"]
    with_token = api.client.post("/api/v1/plans", content=b"[{", headers={**broken, **api.admin})
    assert with_token.status_code == 422
    login = api.client.post("/api/v1/session", content=b"[{", headers=broken)
    assert login.status_code == 422


@pytest.mark.parametrize(
    "token",
    ["nonsense", "hwa_admin_000000000000.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "Bearer"],
)
def test_wrong_token_is_401(api: Api, token: str) -> None:
    response = api.client.get("/api/v1/machines", headers=api.bearer(token))
    assert response.status_code == 401


def test_token_with_right_id_and_wrong_secret_is_401(api: Api) -> None:
    real = api.token("readonly")
    forged = real[: real.index(".") + 1] + "B" * 43
    assert api.client.get("/api/v1/machines", headers=api.bearer(real)).status_code == 200
    assert api.client.get("/api/v1/machines", headers=api.bearer(forged)).status_code == 401


def test_tokens_are_stored_only_as_hashes(api: Api, db: Database) -> None:
    secret = api.token("readonly")
    with db.reading() as session:
        rows = session.scalars(select(TokenRow)).all()
    stored = " ".join(f"{r.id} {r.secret_hash} {r.note}" for r in rows)
    assert secret.split(".", 1)[1] not in stored


def test_revoked_token_is_401(api: Api) -> None:
    secret = api.token("readonly")
    token_id = secret.split("_")[2].split(".")[0]
    assert api.client.delete(f"/api/v1/tokens/{token_id}", headers=api.admin).status_code == 200
    response = api.client.get("/api/v1/machines", headers=api.bearer(secret))
    assert response.status_code == 401
    assert "revoked" in response.json()["detail"]


def test_expired_token_is_401(api: Api, db: Database) -> None:
    with db.writing() as session:
        _row, secret = tokens.issue(session, kind=TokenKind.readonly, expires_in=timedelta(seconds=-1))
    response = api.client.get("/api/v1/machines", headers=api.bearer(secret))
    assert response.status_code == 401
    assert "expired" in response.json()["detail"]


def test_readonly_key_reads_but_cannot_write(api: Api) -> None:
    key = api.bearer(api.token("readonly"))
    assert api.client.get("/api/v1/results", headers=key).status_code == 200
    assert api.client.post("/api/v1/tokens", json={"kind": "readonly"}, headers=key).status_code == 403
    assert api.client.post("/api/v1/runs", content=run_report().model_dump_json(), headers=key).status_code == 403


def test_machine_token_writes_only_its_own_runs(api: Api, db: Database) -> None:
    _a, token_a = api.enroll()
    _b, token_b = api.enroll()
    report = run_report()
    assert api.post_run(token_a, report).status_code == 201
    response = api.post_run(token_b, report)
    assert response.status_code == 403
    assert "another machine" in response.json()["detail"]
    with db.reading() as session:
        assert len(session.scalars(select(Run)).all()) == 1


def test_machine_token_cannot_claim_another_machines_hardware(api: Api) -> None:
    spec_a = machine_spec()
    _a, _token_a = api.enroll(spec_a)
    _b, token_b = api.enroll()
    response = api.post_run(token_b, run_report(spec_a))
    assert response.status_code == 409
    assert "another machine" in response.json()["detail"]


def test_machine_token_cannot_administer(api: Api) -> None:
    _machine, token = api.enroll()
    assert api.client.get("/api/v1/tokens", headers=api.bearer(token)).status_code == 403
    assert api.client.get("/api/v1/machines", headers=api.bearer(token)).status_code == 403


def test_pending_machine_cannot_upload_until_approved(api: Api) -> None:
    machine_id, token = api.enroll(approve=False)
    refused = api.post_run(token, run_report())
    assert refused.status_code == 403
    assert "pending approval" in refused.json()["detail"]
    api.client.post(f"/api/v1/machines/{machine_id}/approve", headers=api.admin)
    assert api.post_run(token, run_report()).status_code == 201


def test_enrollment_token_is_used_up_after_max_uses(api: Api) -> None:
    secret = api.token("enrollment", max_uses=1)
    body = {"spec": machine_spec().model_dump(mode="json")}
    assert api.client.post("/api/v1/agents/enroll", json=body, headers=api.bearer(secret)).status_code == 201
    again = api.client.post(
        "/api/v1/agents/enroll", json={"spec": machine_spec().model_dump(mode="json")}, headers=api.bearer(secret)
    )
    assert again.status_code == 401
    assert "used up" in again.json()["detail"]


def test_reenrolling_the_same_hardware_keeps_the_machine_and_its_token_until_approved(api: Api) -> None:
    """Re-enrolling without the machine's current token used to revoke it and hand out a working one
    (a takeover, tests/server/test_enroll_takeover.py); now the new token waits for an admin."""
    spec = machine_spec()
    first_id, first_token = api.enroll(spec)
    second_id, second_token = api.enroll(spec, approve=False)
    assert first_id == second_id
    assert api.post_run(first_token, run_report(spec)).status_code == 201
    assert api.post_run(second_token, run_report(spec)).status_code == 403
    api.client.post(f"/api/v1/machines/{second_id}/approve", headers=api.admin)
    assert api.post_run(first_token, run_report(spec)).status_code == 401
    assert api.post_run(second_token, run_report(spec)).status_code == 201


def test_admin_token_is_generated_once_on_first_start(db: Database, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from fastapi.testclient import TestClient

    from app.config import Settings
    from app.server.app import create_app

    settings = Settings(database_url=db.url, admin_token=None, data_dir=tmp_path)
    with TestClient(create_app(settings, database=db)):
        pass
    printed = capsys.readouterr().err
    secret = printed.strip().splitlines()[-1].strip()
    assert secret.startswith("hwa_admin_")
    with TestClient(create_app(settings, database=db)) as client:
        assert "hwa_admin_" not in capsys.readouterr().err
        assert client.get("/api/v1/tokens", headers=Api.bearer(secret)).status_code == 200
    with db.reading() as session:
        admins = tokens.list_tokens(session, kind=TokenKind.admin)
        assert len(admins) == 1 and admins[0].created_at <= utcnow()
