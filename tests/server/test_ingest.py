from __future__ import annotations

import uuid
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import func, select

from app.db.engine import Database
from app.db.models import ResultRow, Run, SpecSnapshot
from testkit.factories import Api, result, run_report


def _count(db: Database, model: type) -> int:
    with db.reading() as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


def test_run_is_stored_with_all_its_results(api: Api, db: Database) -> None:
    _machine, token = api.enroll()
    report = run_report(results=[result(batch_size=b) for b in (1, 2, 4, 8, 16)])
    response = api.post_run(token, report)
    assert response.status_code == 201, response.text
    assert response.json()["run_id"] == str(report.run_id)
    assert response.json()["result_count"] == 5
    assert _count(db, ResultRow) == 5
    with db.reading() as session:
        stored = session.scalars(select(ResultRow).order_by(ResultRow.batch_size)).all()
        assert [r.batch_size for r in stored] == [1, 2, 4, 8, 16]
        assert stored[0].device_kind == "cuda"
        assert stored[0].energy_per_sample_j == report.results[0].energy_per_sample_j


def test_another_run_under_a_stored_run_id_is_refused_not_answered_as_stored(api: Api, db: Database) -> None:
    _machine, token = api.enroll()
    report = run_report()
    assert api.post_run(token, report).status_code == 201
    other = run_report(run_id=report.run_id, results=[result(batch_size=b) for b in (32, 64)])
    refused = api.post_run(token, other)
    assert refused.status_code == 409 and "is stored already as another run" in refused.json()["detail"]
    assert _count(db, Run) == 1 and _count(db, ResultRow) == 3


def test_duplicate_run_is_stored_once(api: Api, db: Database) -> None:
    _machine, token = api.enroll()
    report = run_report()
    first = api.post_run(token, report)
    second = api.post_run(token, report)
    assert (first.status_code, second.status_code) == (201, 200)
    assert first.json() == second.json()
    assert _count(db, Run) == 1
    assert _count(db, ResultRow) == len(report.results)


def test_concurrent_duplicates_are_stored_once(api: Api, db: Database) -> None:
    _machine, token = api.enroll()
    report = run_report()
    with ThreadPoolExecutor(max_workers=8) as pool:
        codes = sorted(pool.map(lambda _: api.post_run(token, report).status_code, range(8)))
    assert codes.count(201) == 1 and codes.count(200) == 7, codes
    assert _count(db, Run) == 1
    assert _count(db, ResultRow) == len(report.results)


def test_run_with_one_invalid_result_is_rejected_whole(api: Api, db: Database) -> None:
    _machine, token = api.enroll()
    body = run_report().model_dump(mode="json")
    body["results"][2]["latency_p50_ms"] = -1.0
    response = api.client.post("/api/v1/runs", json=body, headers=api.bearer(token))
    assert response.status_code == 422
    fields = [e["field"] for e in response.json()["errors"]]
    assert "body.results.2.latency_p50_ms" in fields
    assert _count(db, Run) == 0 and _count(db, ResultRow) == 0


def test_wrong_field_gets_422_naming_it(api: Api) -> None:
    _machine, token = api.enroll()
    body = run_report().model_dump(mode="json")
    body["results"][0]["latency_p99"] = 3.0
    response = api.client.post("/api/v1/runs", json=body, headers=api.bearer(token))
    assert response.status_code == 422
    assert response.headers["content-type"].startswith("application/problem+json")
    assert "body.results.0.latency_p99" in response.json()["detail"]


def test_malformed_json_is_422(api: Api) -> None:
    _machine, token = api.enroll()
    response = api.client.post(
        "/api/v1/runs", content=b'{"run_id": ', headers={**api.bearer(token), "content-type": "application/json"}
    )
    assert response.status_code == 422
    assert "Traceback" not in response.text


def test_oversized_body_is_413(api: Api, db: Database) -> None:
    _machine, token = api.enroll()
    huge = b'{"pad": "' + b"x" * (9 * 1024 * 1024) + b'"}'
    response = api.client.post(
        "/api/v1/runs", content=huge, headers={**api.bearer(token), "content-type": "application/json"}
    )
    assert response.status_code == 413
    assert "limit" in response.json()["detail"]


def test_oversized_chunked_body_is_413(api: Api) -> None:
    _machine, token = api.enroll()

    def chunks():  # type: ignore[no-untyped-def]
        for _ in range(10):
            yield b"x" * (1024 * 1024)

    response = api.client.post(
        "/api/v1/runs", content=chunks(), headers={**api.bearer(token), "content-type": "application/json"}
    )
    assert response.status_code == 413


def test_too_many_results_in_one_run_is_413(api: Api, settings, db: Database) -> None:  # type: ignore[no-untyped-def]
    settings.max_results_per_run = 10
    _machine, token = api.enroll()
    response = api.post_run(token, run_report(results=[result(batch_size=b) for b in range(1, 12)]))
    assert response.status_code == 413
    assert "split" in response.json()["detail"]
    assert _count(db, Run) == 0


def test_same_spec_keeps_one_snapshot_and_a_changed_spec_adds_one(api: Api, db: Database) -> None:
    from testkit.factories import machine_spec

    spec = machine_spec()
    _machine, token = api.enroll(spec)
    api.post_run(token, run_report(spec))
    api.post_run(token, run_report(spec))
    assert _count(db, SpecSnapshot) == 1
    libraries = {**spec.software.libraries, "torch": "2.13.0+cu130"}
    changed = spec.model_copy(update={"software": spec.software.model_copy(update={"libraries": libraries})})
    assert api.post_run(token, run_report(changed)).status_code == 201
    assert _count(db, SpecSnapshot) == 2


def test_run_naming_an_unknown_job_is_refused(api: Api, db: Database) -> None:
    _machine, token = api.enroll()
    response = api.post_run(token, run_report(job_id=uuid.uuid4()))
    assert response.status_code == 409
    assert _count(db, Run) == 0
