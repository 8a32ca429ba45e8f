"""The agent's HTTP client: enrol, upload runs. Errors come back as HwadvisorErrors a person can act on."""

from __future__ import annotations

import uuid
from typing import Any

import httpx

from app import __version__
from app.contracts import (
    EnrollRequest,
    EnrollResponse,
    Heartbeat,
    HeartbeatReply,
    Job,
    JobFinish,
    JobProgress,
    JobStatus,
    MachineSpec,
    RunRead,
    RunReport,
)
from app.errors import (
    AuthError,
    ConflictError,
    ForbiddenError,
    HwadvisorError,
    InvalidInput,
    LimitError,
    NotFoundError,
)

TIMEOUT = httpx.Timeout(30.0, connect=5.0)
JSON = {"content-type": "application/json"}
_BY_STATUS: dict[int, type[HwadvisorError]] = {
    400: InvalidInput,
    401: AuthError,
    403: ForbiddenError,
    404: NotFoundError,
    409: ConflictError,
    413: LimitError,
    422: InvalidInput,
}
RETRY_LATER = frozenset({408, 429})
"""4xx answers about the moment, not the request: asked again later, the server may take it."""


class ServerUnavailable(HwadvisorError):
    """The server could not be reached, or answered 5xx (or 408/429): worth retrying later.

    ``reachable`` tells the two apart: an answer about one request says nothing of the next one,
    while a server that cannot be reached will not take the next upload either."""

    def __init__(self, message: str, *, hint: str | None = None, reachable: bool = False) -> None:
        super().__init__(message, hint=hint)
        self.reachable = reachable


class AgentClient:
    def __init__(
        self, base_url: str, token: str | None = None, *, transport: httpx.BaseTransport | None = None
    ) -> None:
        headers = {"User-Agent": f"hwadvisor-agent/{__version__}"}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        self.base_url = base_url.rstrip("/")
        self._http = httpx.Client(base_url=self.base_url, headers=headers, timeout=TIMEOUT, transport=transport)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> AgentClient:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise ServerUnavailable(
                f"cannot reach the hwadvisor server at {self.base_url}: {exc.__class__.__name__}",
                hint="check the URL and that the server is running",
            ) from exc
        if response.status_code >= 500 or response.status_code in RETRY_LATER:
            raise ServerUnavailable(f"the server answered {response.status_code}: {_detail(response)}", reachable=True)
        if response.status_code >= 400:
            error = _BY_STATUS.get(response.status_code, HwadvisorError)(
                f"the server refused {method} {path} ({response.status_code}): {_detail(response)}"
            )
            error.status_code = response.status_code
            raise error
        return response

    def enroll(self, spec: MachineSpec, machine_token: str | None = None) -> EnrollResponse:
        """Enrol this machine; ``machine_token`` (the current one, when re-enrolling) proves it is this
        machine's agent, so the server rotates the token at once instead of waiting for an admin."""
        body = EnrollRequest(spec=spec, machine_token=machine_token).model_dump(mode="json")
        return EnrollResponse.model_validate(self._request("POST", "/api/v1/agents/enroll", json=body).json())

    def heartbeat(self, beat: Heartbeat) -> HeartbeatReply:
        response = self._request("POST", "/api/v1/agents/heartbeat", content=beat.model_dump_json(), headers=JSON)
        return HeartbeatReply.model_validate(response.json())

    def claim(self) -> Job | None:
        response = self._request("POST", "/api/v1/agents/claim")
        return None if response.status_code == 204 else Job.model_validate(response.json())

    def progress(self, job_id: uuid.UUID, done: int, total: int | None) -> Job:
        body = JobProgress(configs_done=done, configs_total=total).model_dump_json()
        return Job.model_validate(
            self._request("POST", f"/api/v1/agents/jobs/{job_id}/progress", content=body, headers=JSON).json()
        )

    def finish(self, job_id: uuid.UUID, status: JobStatus, message: str | None = None) -> Job:
        body = JobFinish(status=status, message=message).model_dump_json()  # type: ignore[arg-type]
        return Job.model_validate(
            self._request("POST", f"/api/v1/agents/jobs/{job_id}/finish", content=body, headers=JSON).json()
        )

    def upload_run(self, report: RunReport) -> tuple[RunRead, bool]:
        """Upload a run; (what the server stored, whether this upload created it)."""
        response = self._request("POST", "/api/v1/runs", content=report.model_dump_json(), headers=JSON)
        return RunRead.model_validate(response.json()), response.status_code == 201


def _detail(response: httpx.Response) -> str:
    try:
        return str(response.json().get("detail", response.text))
    except ValueError:
        return response.text[:500]
