from __future__ import annotations

import io
import json
import logging

from app.server.observability import JsonFormatter, RequestIdFilter
from testkit.factories import Api, run_report


def test_every_answer_carries_a_request_id_and_problems_repeat_it(api: Api) -> None:
    fresh = api.client.get("/healthz")
    assert len(fresh.headers["x-request-id"]) == 32
    mine = api.client.get("/api/v1/machines", headers={"X-Request-ID": "trace-42"})
    assert mine.status_code == 401
    assert mine.headers["x-request-id"] == "trace-42" and mine.json()["request_id"] == "trace-42"
    hostile = api.client.get("/healthz", headers={"X-Request-ID": "a b\nc" * 30})
    assert hostile.headers["x-request-id"] != "a b\nc" * 30, "an id that is not a sane token is replaced"


def test_metrics_count_requests_by_route_and_read_the_queue_from_the_database(api: Api) -> None:
    _machine, token = api.enroll()
    api.post_run(token, run_report())
    api.client.post("/api/v1/jobs", json={"suite": "quick", "selector": {"a": "b"}}, headers=api.admin)
    text = api.client.get("/metrics").text
    assert 'hwadvisor_http_requests_total{method="POST",route="/api/v1/runs",status="201"} 1.0' in text
    assert "hwadvisor_results_ingested_total 3.0" in text
    assert 'hwadvisor_jobs{state="queued"} 1.0' in text
    assert 'hwadvisor_machines{status="online"} 1.0' in text
    assert "hwadvisor_http_request_duration_seconds_bucket" in text


def test_json_log_lines_carry_the_request_id_and_never_the_token(api: Api) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter())
    access = logging.getLogger("hwadvisor.access")
    access.addHandler(handler)
    access.setLevel(logging.INFO)
    try:
        api.client.get("/api/v1/machines", headers={**api.admin, "X-Request-ID": "log-check"})
    finally:
        access.removeHandler(handler)
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert lines and lines[-1]["request_id"] == "log-check"
    assert lines[-1]["route"] == "/api/v1/machines" and lines[-1]["status"] == 200
    assert api.admin_token not in stream.getvalue()


def test_a_made_up_method_is_counted_as_other_so_metrics_stay_bounded(api: Api) -> None:
    for n in range(5):
        api.client.request(f"M{n:03d}{'X' * 200}", "/healthz")
    api.client.request("DELETE", "/healthz")
    text = api.client.get("/metrics").text
    assert "XXXX" not in text, "a client's method token must never become a label"
    assert 'method="OTHER",route="/healthz",status="405"} 5.0' in text
    assert 'method="DELETE",route="/healthz",status="405"} 1.0' in text
