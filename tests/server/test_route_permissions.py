"""Who may call what, for every route: a new route without a rule here fails this test."""

from __future__ import annotations

import uuid

import pytest

from app.server.app import create_app
from testkit.factories import Api

ADMIN, READONLY, MACHINE, ENROLLMENT, ANYONE = "admin", "readonly", "machine", "enrollment", "anyone"
READERS = {ADMIN, READONLY}

RULES: dict[tuple[str, str], set[str]] = {
    ("GET", "/healthz"): {ANYONE},
    ("GET", "/metrics"): {ANYONE},
    ("POST", "/api/v1/agents/enroll"): {ENROLLMENT},
    ("POST", "/api/v1/agents/heartbeat"): {MACHINE},
    ("POST", "/api/v1/agents/claim"): {MACHINE},
    ("POST", "/api/v1/agents/jobs/{job_id}/progress"): {MACHINE},
    ("POST", "/api/v1/agents/jobs/{job_id}/finish"): {MACHINE},
    ("POST", "/api/v1/runs"): {MACHINE},
    ("GET", "/api/v1/runs/{run_id}"): READERS,
    ("POST", "/api/v1/jobs"): {ADMIN},
    ("GET", "/api/v1/jobs"): READERS,
    ("GET", "/api/v1/jobs/{job_id}"): READERS,
    ("POST", "/api/v1/jobs/{job_id}/cancel"): {ADMIN},
    ("GET", "/api/v1/machines"): READERS,
    ("GET", "/api/v1/machines/{machine_id}"): READERS,
    ("PUT", "/api/v1/machines/{machine_id}/labels"): {ADMIN},
    ("POST", "/api/v1/machines/{machine_id}/retire"): {ADMIN},
    ("POST", "/api/v1/machines/{machine_id}/approve"): {ADMIN},
    ("POST", "/api/v1/machines/{machine_id}/unretire"): {ADMIN},
    ("PUT", "/api/v1/machines/{machine_id}/catalog"): {ADMIN},
    ("DELETE", "/api/v1/machines/{machine_id}/catalog"): {ADMIN},
    ("GET", "/api/v1/clusters"): READERS,
    ("POST", "/api/v1/clusters"): {ADMIN},
    ("GET", "/api/v1/clusters/{name}"): READERS,
    ("DELETE", "/api/v1/clusters/{name}"): {ADMIN},
    ("GET", "/api/v1/results"): READERS,
    ("GET", "/api/v1/results/export.csv"): READERS,
    ("POST", "/api/v1/tokens"): {ADMIN},
    ("GET", "/api/v1/tokens"): {ADMIN},
    ("DELETE", "/api/v1/tokens/{token_id}"): {ADMIN},
    ("POST", "/api/v1/recommendations"): READERS,
    ("POST", "/api/v1/plans"): READERS,
    ("POST", "/api/v1/plans/serving"): READERS,
    ("POST", "/api/v1/predictions"): READERS,
    ("POST", "/api/v1/workloads/onnx-profile"): READERS,
    ("GET", "/api/v1/catalog"): READERS,
    ("GET", "/api/v1/catalog/match"): READERS,
    ("GET", "/api/v1/catalog/{catalog_id}"): READERS,
    ("PUT", "/api/v1/catalog/{catalog_id}"): {ADMIN},
    ("DELETE", "/api/v1/catalog/{catalog_id}/overrides"): {ADMIN},
    ("GET", "/api/v1/public-results"): READERS,
    ("POST", "/api/v1/public-results"): {ADMIN},
    ("DELETE", "/api/v1/public-results"): {ADMIN},
    ("POST", "/api/v1/session"): {ANYONE},
    ("GET", "/api/v1/session"): {ANYONE},
    ("DELETE", "/api/v1/session"): READERS,
    ("GET", "/api/v1/registry"): READERS,
}


def routes() -> set[tuple[str, str]]:
    """Every operation the app serves, read from its OpenAPI schema (FastAPI includes routers
    lazily, so app.routes does not list them)."""
    paths = create_app().openapi()["paths"]
    return {(method.upper(), path) for path, operations in paths.items() for method in operations}


def test_every_route_has_a_rule() -> None:
    assert routes() == set(RULES), "add the new route to RULES with who may call it"


@pytest.mark.parametrize(("method", "path"), sorted(RULES))
def test_only_the_allowed_callers_get_past_authorisation(api: Api, method: str, path: str) -> None:
    _machine_id, machine_token = api.enroll()
    callers = {
        ADMIN: api.admin_token,
        READONLY: api.token("readonly"),
        MACHINE: machine_token,
        ENROLLMENT: api.token("enrollment"),
        ANYONE: None,
    }
    url = path.format(
        job_id=uuid.uuid4(),
        run_id=uuid.uuid4(),
        machine_id=uuid.uuid4(),
        token_id="0" * 12,
        catalog_id="h100-sxm5-80gb",
        name="rack-b",
    )
    allowed = RULES[(method, path)]
    for caller, token in callers.items():
        headers = api.bearer(token) if token else {}
        response = api.client.request(method, url, json={}, headers=headers)
        refused = response.status_code in (401, 403)
        if ANYONE in allowed or caller in allowed:
            assert not refused, f"{caller} was refused {method} {path}: {response.text}"
        else:
            assert refused, f"{caller} got {response.status_code} on {method} {path}"
