from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta

from sqlalchemy import update

from app.db.engine import Database
from app.db.models import JobRow, utcnow
from testkit.factories import Api, machine_spec

SUITE = 'name = "tiny"\n[[grid]]\nworkloads = ["gemm_1024"]\n'


def _job(api: Api, **target: object) -> dict:  # type: ignore[type-arg]
    response = api.client.post("/api/v1/jobs", json={"suite": "tiny", "suite_toml": SUITE, **target}, headers=api.admin)
    assert response.status_code == 201, response.text
    return dict(response.json())


def test_concurrent_claims_give_each_job_to_exactly_one_machine(api: Api) -> None:
    machines = [api.enroll() for _ in range(2)]
    jobs = {_job(api, selector={"cpu_arch": "x86_64"})["id"] for _ in range(5)}

    def claim(token: str) -> str | None:
        response = api.client.post("/api/v1/agents/claim", headers=api.bearer(token))
        assert response.status_code in (200, 204), response.text
        return response.json()["id"] if response.status_code == 200 else None

    with ThreadPoolExecutor(max_workers=16) as pool:
        won = list(pool.map(claim, [token for _id, token in machines] * 10))
    claimed = [job for job in won if job]
    assert sorted(claimed) == sorted(jobs), "every job claimed once, none twice"


def test_job_for_one_machine_is_not_given_to_another(api: Api) -> None:
    (target, _token), (_other, other_token) = api.enroll(), api.enroll()
    job = _job(api, machine_id=str(target))
    assert api.client.post("/api/v1/agents/claim", headers=api.bearer(other_token)).status_code == 204
    assert api.client.get(f"/api/v1/jobs/{job['id']}", headers=api.admin).json()["status"] == "queued"


def test_selector_must_match_the_machines_labels(api: Api) -> None:
    machine_id, token = api.enroll()
    _job(api, selector={"gpu": "no-such-gpu"})
    assert api.client.post("/api/v1/agents/claim", headers=api.bearer(token)).status_code == 204
    relabel = api.client.put(
        f"/api/v1/machines/{machine_id}/labels", json={"labels": {"gpu": "no-such-gpu"}}, headers=api.admin
    )
    assert relabel.status_code == 200
    assert api.client.post("/api/v1/agents/claim", headers=api.bearer(token)).status_code == 200


def test_a_label_the_machine_lacks_matches_no_selector_value_not_even_none(api: Api) -> None:
    _machine_id, token = api.enroll()
    _job(api, selector={"rack": "None"})
    assert api.client.post("/api/v1/agents/claim", headers=api.bearer(token)).status_code == 204


def test_expired_lease_requeues_and_the_last_attempt_fails(api: Api, db: Database) -> None:
    _machine_id, token = api.enroll()
    job = _job(api, selector={"cpu_arch": "x86_64"}, max_attempts=2)
    for attempt in (1, 2):
        claimed = api.client.post("/api/v1/agents/claim", headers=api.bearer(token)).json()
        assert claimed["id"] == job["id"] and claimed["attempts"] == attempt
        with db.writing() as session:
            session.execute(update(JobRow).values(lease_expires_at=utcnow() - timedelta(seconds=1)))
    assert api.client.post("/api/v1/agents/claim", headers=api.bearer(token)).status_code == 204
    final = api.client.get(f"/api/v1/jobs/{job['id']}", headers=api.admin).json()
    assert final["status"] == "failed" and "last attempt" in final["message"]


def test_a_job_handed_back_on_its_last_attempt_with_the_longest_message_fails_with_it_cut(api: Api) -> None:
    _machine_id, token = api.enroll()
    job = _job(api, selector={"cpu_arch": "x86_64"}, max_attempts=1)
    assert api.client.post("/api/v1/agents/claim", headers=api.bearer(token)).json()["id"] == job["id"]
    back = {"status": "queued", "message": "x" * 2000}  # as long as the agent sends
    answer = api.client.post(f"/api/v1/agents/jobs/{job['id']}/finish", json=back, headers=api.bearer(token))
    assert answer.status_code == 200, answer.text
    final = api.client.get(f"/api/v1/jobs/{job['id']}", headers=api.admin).json()
    assert final["status"] == "failed" and final["message"].startswith("handed back after its last attempt: xxx")
    assert len(final["message"]) == 2000


def test_progress_extends_the_lease_and_tells_the_agent_of_a_cancel(api: Api) -> None:
    _machine_id, token = api.enroll()
    job = _job(api, selector={"cpu_arch": "x86_64"})
    claimed = api.client.post("/api/v1/agents/claim", headers=api.bearer(token)).json()
    body = {"configs_done": 1, "configs_total": 3}
    first = api.client.post(f"/api/v1/agents/jobs/{job['id']}/progress", json=body, headers=api.bearer(token)).json()
    assert first["configs_done"] == 1 and first["lease_expires_at"] >= claimed["lease_expires_at"]
    assert api.client.post(f"/api/v1/jobs/{job['id']}/cancel", headers=api.admin).json()["status"] == "cancelled"
    after = api.client.post(f"/api/v1/agents/jobs/{job['id']}/progress", json=body, headers=api.bearer(token)).json()
    assert after["status"] == "cancelled"


def test_only_the_holder_reports_on_a_job(api: Api) -> None:
    _a, token_a = api.enroll()
    _b, token_b = api.enroll()
    job = _job(api, selector={"cpu_arch": "x86_64"})
    api.client.post("/api/v1/agents/claim", headers=api.bearer(token_a))
    done = {"status": "done"}
    assert (
        api.client.post(f"/api/v1/agents/jobs/{job['id']}/finish", json=done, headers=api.bearer(token_b)).status_code
        == 403
    )
    assert (
        api.client.post(f"/api/v1/agents/jobs/{job['id']}/finish", json=done, headers=api.bearer(token_a)).status_code
        == 200
    )


def test_a_job_needs_a_target_and_a_valid_suite(api: Api) -> None:
    assert api.client.post("/api/v1/jobs", json={"suite": "quick"}, headers=api.admin).status_code == 422
    bad = api.client.post(
        "/api/v1/jobs", json={"suite": "x", "suite_toml": "name = 3", "selector": {"a": "b"}}, headers=api.admin
    )
    assert bad.status_code == 409 and "not a valid suite" in bad.json()["detail"]
    missing = api.client.post(
        "/api/v1/jobs", json={"suite": "quick", "machine_id": str(uuid.uuid4())}, headers=api.admin
    )
    assert missing.status_code == 404


def test_heartbeats_drive_the_machine_status(api: Api, db: Database) -> None:
    spec = machine_spec()
    machine_id, token = api.enroll(spec)

    def status() -> str:
        return str(api.client.get(f"/api/v1/machines/{machine_id}", headers=api.admin).json()["status"])

    beat = api.client.post(
        "/api/v1/agents/heartbeat", json={"state": "busy", "note": "other load"}, headers=api.bearer(token)
    )
    assert beat.status_code == 200 and beat.json()["heartbeat_interval_s"] > 0
    assert status() == "busy"
    api.client.post("/api/v1/agents/heartbeat", json={"state": "idle"}, headers=api.bearer(token))
    assert status() == "online"
    listing = api.client.get("/api/v1/machines", params={"status": "online"}, headers=api.admin).json()
    assert [m["id"] for m in listing["items"]] == [str(machine_id)]
    from app.db.models import Machine

    with db.writing() as session:
        session.execute(update(Machine).values(last_seen_at=utcnow() - timedelta(minutes=5)))
    assert status() == "offline"
    assert api.client.get("/api/v1/machines", params={"status": "offline"}, headers=api.admin).json()["total"] == 1


def test_jobs_for_other_machines_do_not_hide_the_ones_behind_them(api: Api) -> None:
    _machine_id, token = api.enroll()
    for _ in range(25):
        _job(api, selector={"gpu": "someone-elses"})
    mine = _job(api, selector={"cpu_arch": "x86_64"})
    claimed = api.client.post("/api/v1/agents/claim", headers=api.bearer(token))
    assert claimed.status_code == 200 and claimed.json()["id"] == mine["id"]


def test_an_unknown_built_in_suite_is_refused_when_queued(api: Api) -> None:
    response = api.client.post("/api/v1/jobs", json={"suite": "quik", "selector": {"a": "b"}}, headers=api.admin)
    assert response.status_code == 422 and "not built in" in response.text


def test_a_run_cannot_attach_itself_to_another_machines_job(api: Api, db: Database) -> None:
    from sqlalchemy import func, select

    from app.db.models import Run
    from testkit.factories import run_report

    spec_a, spec_b = machine_spec(), machine_spec()
    (a, token_a), (_b, token_b) = api.enroll(spec_a), api.enroll(spec_b)
    held = _job(api, selector={"cpu_arch": "x86_64"})
    assert api.client.post("/api/v1/agents/claim", headers=api.bearer(token_a)).json()["id"] == held["id"]
    meant_for_a = _job(api, machine_id=str(a))
    for job in (held, meant_for_a):
        stolen = api.post_run(token_b, run_report(spec_b, job_id=uuid.UUID(job["id"])))
        assert stolen.status_code == 403 and "belongs to another machine" in stolen.json()["detail"]
    elsewhere = _job(api, selector={"gpu": "someone-elses"})  # queued, but not for b's labels
    assert api.post_run(token_b, run_report(spec_b, job_id=uuid.UUID(elsewhere["id"]))).status_code == 403
    with db.reading() as session:
        assert session.scalar(select(func.count()).select_from(Run)) == 0
    # the machines the jobs are for may attach their runs
    assert api.post_run(token_a, run_report(spec_a, job_id=uuid.UUID(held["id"]))).status_code == 201
    assert api.post_run(token_a, run_report(spec_a, job_id=uuid.UUID(meant_for_a["id"]))).status_code == 201


def test_a_suite_naming_what_no_plug_in_has_is_queued_with_notes_that_say_so(api: Api) -> None:
    """An agent newer than the server may have the plug-in, so the job is queued; the answer says now what
    an agent would record unsupported hours later."""
    mistakes = 'name = "typo"\n[[grid]]\nworkloads = ["resnet5"]\nruntimes = ["openvino"]\ntasks = ["train"]\n'
    body = {"suite": "typo", "suite_toml": mistakes, "selector": {"gpu": "h100-sxm5-80gb"}}
    response = api.client.post("/api/v1/jobs", json=body, headers=api.admin)
    assert response.status_code == 201, response.text
    notes = response.json()["notes"]
    assert len(notes) == 1 and "unknown workload 'resnet5'; known: " in notes[0] and "resnet50" in notes[0]
    assert api.client.get(f"/api/v1/jobs/{response.json()['id']}", headers=api.admin).json()["notes"] == []
    body["suite_toml"] = mistakes.replace("resnet5", "resnet50")
    notes = api.client.post("/api/v1/jobs", json=body, headers=api.admin).json()["notes"]
    assert notes == [
        "no machine can run part of this suite (an agent records it unsupported): openvino runs infer, not train"
    ]
    assert _job(api, selector={"gpu": "h100-sxm5-80gb"})["notes"] == []
