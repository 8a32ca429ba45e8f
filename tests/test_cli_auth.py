"""`hwadvisor token` and `hwadvisor machines` on what the hardening changed: enrollment tokens are
limited by default, a re-enrolment awaiting approval is shown, a retired machine can come back."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from sqlalchemy import select

from app.cli.tokens import ENROLLMENT_EXPIRES_IN_HOURS, ENROLLMENT_MAX_USES
from app.db.engine import Database
from app.db.models import TokenRow, utcnow
from testkit.factories import Api, machine_spec
from tests.test_cli import hwadvisor, scratch_env


def _row(db: Database, secret: str) -> TokenRow:
    with db.reading() as session:
        row = session.scalars(select(TokenRow).where(TokenRow.id == secret.split("_")[2].split(".")[0])).one()
        session.expunge(row)
        return row


def test_enrollment_tokens_are_limited_by_default_and_say_so(db: Database, database_url: str, tmp_path: Path) -> None:
    env = scratch_env(database_url, tmp_path)
    done = hwadvisor("token", "create", "enrollment", env=env)
    assert done.returncode == 0, done.stderr
    secret = done.stdout.strip()
    assert secret.startswith("hwa_enrollment_") and "\n" not in secret  # stdout is the secret alone
    row = _row(db, secret)
    assert row.max_uses == ENROLLMENT_MAX_USES and row.expires_at is not None
    expected = utcnow() + timedelta(hours=ENROLLMENT_EXPIRES_IN_HOURS)
    assert abs((row.expires_at - expected).total_seconds()) < 120
    assert f"{ENROLLMENT_MAX_USES} uses, expires {row.expires_at.isoformat(timespec='minutes')}" in done.stderr

    one = hwadvisor("token", "create", "enrollment", "--max-uses", "1", "--expires-in-hours", "2", env=env)
    assert _row(db, one.stdout.strip()).max_uses == 1 and "1 use, expires" in one.stderr
    open_ = hwadvisor("token", "create", "enrollment", "--unlimited", env=env)
    row = _row(db, open_.stdout.strip())
    assert row.max_uses is None and row.expires_at is None and "unlimited uses, never expires" in open_.stderr
    key = hwadvisor("token", "create", "readonly", env=env)
    row = _row(db, key.stdout.strip())
    assert row.max_uses is None and row.expires_at is None and "never expires" in key.stderr


def test_machines_unretire_and_a_reenrolment_awaiting_approval(api: Api, database_url: str, tmp_path: Path) -> None:
    env = scratch_env(database_url, tmp_path)
    spec = machine_spec()
    machine_id, _token = api.enroll(spec)
    body = {"spec": spec.model_dump(mode="json")}
    assert api.client.post("/api/v1/agents/enroll", json=body, headers=api.bearer(api.token())).status_code == 201
    listed = hwadvisor("machines", "list", env=env)
    assert "re-enrolled: approve to switch to the new agent" in listed.stdout
    tokens = hwadvisor("token", "list", env=env).stdout
    assert any(" machine " in f" {line} " and "awaiting" in line for line in tokens.splitlines())

    api.client.post(f"/api/v1/machines/{machine_id}/retire", headers=api.admin)
    back = hwadvisor("machines", "unretire", str(machine_id), env=env)
    assert back.returncode == 0, back.stderr
    assert f"{machine_id} is pending" in back.stdout and f"hwadvisor machines approve {machine_id}" in back.stdout
    assert api.client.get(f"/api/v1/machines/{machine_id}", headers=api.admin).json()["status"] == "pending"
