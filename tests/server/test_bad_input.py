"""Input that once made the server fail (500) is refused with a 4xx problem naming what is wrong, on
SQLite and PostgreSQL alike: naive or out-of-range datetimes, NUL characters anywhere (PostgreSQL
cannot store them), deeply nested TOML, oversized CSV fields. And when something does fail, the 500
is a problem like every other answer: request id, security headers, the connection kept."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from sqlalchemy import func, select

from app.db.engine import Database
from app.db.models import Machine, ResultRow, Run
from testkit.factories import Api, machine_spec, result, run_report


def _assert_problem(response: httpx.Response, status: int, *words: str) -> dict[str, Any]:
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    assert response.headers["x-request-id"]
    assert response.headers["x-content-type-options"] == "nosniff"
    body: dict[str, Any] = response.json()
    assert body["request_id"] == response.headers["x-request-id"]
    text = (body["detail"] + " " + " ".join(e["message"] for e in body.get("errors", []))).lower()
    for word in words:
        assert word.lower() in text, body
    return body


def _count(db: Database, model: type) -> int:
    with db.reading() as session:
        return int(session.scalar(select(func.count()).select_from(model)) or 0)


# --------------------------------------------------------------------------- datetimes


@pytest.mark.parametrize(
    ("started_at", "words"),
    [
        ("2026-01-01T10:00:00", ("timezone",)),  # naive: whose 10 o'clock?
        ("0001-01-01T00:30:00+01:00", ("utc", "year")),  # 31 Dec of year 0 in UTC
        ("9999-12-31T23:30:00-01:00", ("utc", "year")),  # year 10000 in UTC
    ],
)
def test_a_run_with_a_naive_or_out_of_range_time_is_refused(
    api: Api, db: Database, started_at: str, words: tuple[str, ...]
) -> None:
    _machine, token = api.enroll()
    body = run_report().model_dump(mode="json")
    body["started_at"] = started_at
    if started_at.startswith("9999"):
        body["finished_at"] = started_at
    response = api.client.post("/api/v1/runs", json=body, headers=api.bearer(token))
    problem = _assert_problem(response, 422, *words)
    assert any(e["field"].endswith("started_at") for e in problem["errors"]), problem
    assert _count(db, Run) == 0


def test_finished_at_naive_against_an_aware_start_is_refused(api: Api) -> None:
    _machine, token = api.enroll()
    body = run_report().model_dump(mode="json")
    body["finished_at"] = "2030-01-01T00:00:00"
    _assert_problem(api.client.post("/api/v1/runs", json=body, headers=api.bearer(token)), 422, "timezone")


def test_times_in_other_offsets_are_still_accepted(api: Api, db: Database) -> None:
    _machine, token = api.enroll()
    body = run_report().model_dump(mode="json")
    body["started_at"], body["finished_at"] = "0001-01-01T00:30:00+00:00", "9999-12-31T22:30:00-01:00"
    response = api.client.post("/api/v1/runs", json=body, headers=api.bearer(token))
    assert response.status_code == 201, response.text
    assert _count(db, Run) == 1


# --------------------------------------------------------------------------- NUL characters

NUL = "\x00"


def test_enrolling_with_a_nul_in_the_hostname_is_refused(api: Api, db: Database) -> None:
    spec = machine_spec(hostname=f"node{NUL}1").model_dump(mode="json")
    response = api.client.post(
        "/api/v1/agents/enroll", json={"spec": spec}, headers=api.bearer(api.token("enrollment"))
    )
    _assert_problem(response, 422, "nul", "hostname")
    assert _count(db, Machine) == 0


@pytest.mark.parametrize(
    "where",
    [
        ("agent_version",),
        ("results", 1, "reason"),
        ("machine", "software", "libraries", "torch"),  # a mapping's value
        ("machine", "facts", "cpu"),  # a mapping's key, one level down
        ("machine", "cpu", "isa_features", 0),  # an item of a list
    ],
)
def test_a_run_with_a_nul_anywhere_is_refused_whole(api: Api, db: Database, where: tuple[str | int, ...]) -> None:
    _machine, token = api.enroll()
    body = run_report(results=[result(), result(status="oom", reason="out of memory")]).model_dump(mode="json")
    parent: Any = body
    for step in where[:-1]:
        parent = parent[step]
    if where[-1] == "cpu":
        parent[where[-1]] = {f"bad{NUL}key": 1}
    else:
        parent[where[-1]] = f"x{NUL}y"
    response = api.client.post("/api/v1/runs", json=body, headers=api.bearer(token))
    _assert_problem(response, 422, "nul")
    assert (_count(db, Run), _count(db, ResultRow)) == (0, 0)


def test_nul_in_tokens_notes_and_logins_is_refused(api: Api) -> None:
    created = api.client.post("/api/v1/tokens", json={"kind": "readonly", "note": f"a{NUL}b"}, headers=api.admin)
    _assert_problem(created, 422, "nul")
    login = api.client.post("/api/v1/session", json={"token": f"hwa_admin_{NUL}"})
    _assert_problem(login, 422, "nul")
    bearer = api.client.get("/api/v1/machines", headers=api.bearer(f"hwa_admin_{NUL}"))
    _assert_problem(bearer, 422, "nul", "authorization")
    labels = api.client.put(
        f"/api/v1/machines/{api.enroll()[0]}/labels", json={"labels": {"gpu": f"h100{NUL}"}}, headers=api.admin
    )
    _assert_problem(labels, 422, "nul")


@pytest.mark.parametrize(
    "url",
    [
        "/api/v1/results?workload=%00",
        "/api/v1/results?runtime=torch%00",
        "/api/v1/results/export.csv?workload=resnet%0050",
        "/api/v1/machines?search=%00",
        "/api/v1/catalog/match?name=h100%00",
        "/api/v1/public-results?workload=%00",
        "/api/v1/catalog/h100%00",
        "/api/v1/jobs/6c0e1b52-93d4-4a4c-9d6a-0d1f7a0c2b11%00",
    ],
)
def test_a_nul_in_a_filter_or_a_path_is_refused(api: Api, url: str) -> None:
    _assert_problem(api.client.get(url, headers=api.admin), 422, "nul")


def test_a_nul_in_a_token_path_is_refused(api: Api) -> None:
    _assert_problem(api.client.delete("/api/v1/tokens/abc%00", headers=api.admin), 422, "nul")


def test_a_csv_import_with_a_nul_is_refused_with_its_line(api: Api) -> None:
    csv_text = (
        "source,hardware_id,hardware_name,workload,runtime,precision,batch_size,throughput_samples_per_s\n"
        f"public:x,h100,H100{NUL},resnet50/infer,trt,fp16,8,100\n"
    )
    response = api.client.post(
        "/api/v1/public-results", content=csv_text, headers={**api.admin, "content-type": "text/csv"}
    )
    _assert_problem(response, 422, "line 2", "nul")


def test_a_csv_field_over_the_csv_modules_limit_is_refused(api: Api) -> None:
    csv_text = (
        "source,hardware_id,hardware_name,workload,runtime,precision,batch_size,throughput_samples_per_s,note\n"
        f'public:x,h100,H100,resnet50/infer,trt,fp16,8,100,"{"n" * 140_000}"\n'
    )
    response = api.client.post(
        "/api/v1/public-results", content=csv_text, headers={**api.admin, "content-type": "text/csv"}
    )
    _assert_problem(response, 422, "line 2")


# --------------------------------------------------------------------------- nesting


@pytest.mark.parametrize(
    "toml",
    [
        "name = 'deep'\nx = " + "[" * 5000 + "]" * 5000 + "\n",
        "name = 'deep'\nx = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
    ],
)
def test_a_deeply_nested_suite_toml_is_refused(api: Api, toml: str) -> None:
    machine_id, _token = api.enroll()
    response = api.client.post(
        "/api/v1/jobs",
        json={"suite": "deep", "suite_toml": toml, "machine_id": str(machine_id)},
        headers=api.admin,
    )
    _assert_problem(response, 422, "nested")


def test_a_shallow_suite_toml_with_brackets_in_strings_is_accepted(api: Api) -> None:
    machine_id, _token = api.enroll()
    toml = (
        "name = 'mine'\n"
        'description = "' + "[" * 100 + '"  # and ' + "{" * 100 + "\n"
        "[[grid]]\nworkloads = ['resnet50']\nbatch_sizes = [1, 8]\n"
    )
    response = api.client.post(
        "/api/v1/jobs", json={"suite": "mine", "suite_toml": toml, "machine_id": str(machine_id)}, headers=api.admin
    )
    assert response.status_code == 201, response.text


# --------------------------------------------------------------------------- the 500 itself


def test_an_unexpected_failure_is_a_problem_with_the_request_id_and_headers(db: Database, settings: Any) -> None:
    from fastapi.testclient import TestClient

    from app.server.app import create_app

    app = create_app(settings, database=db)

    def fail() -> None:
        raise RuntimeError("a bug")

    app.add_api_route("/api/v1/boom", fail)
    # raise_server_exceptions stays on: an exception escaping the app is what made the server drop
    # the connection after its bare 500
    with TestClient(app) as client:
        response = client.get("/api/v1/boom", headers={"X-Request-ID": "trace-42"})
        assert response.headers["x-request-id"] == "trace-42"
        body = _assert_problem(response, 500, "log")
        assert "a bug" not in response.text
        assert body["request_id"] == "trace-42"
        assert response.headers["x-frame-options"] == "DENY"
        assert response.headers["cache-control"] == "no-store"
        assert client.get("/healthz").status_code == 200
