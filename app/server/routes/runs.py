from __future__ import annotations

import uuid

from fastapi import APIRouter, Request, Response, status

from app.contracts import RunRead, RunReport
from app.db import runs
from app.errors import LimitError
from app.server.deps import DatabaseDep, MachineAgent, Reader, SettingsDep

router = APIRouter(prefix="/runs", tags=["runs"])


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses={200: {"description": "This run id was stored before; nothing changed.", "model": RunRead}},
)
def post_run(
    report: RunReport,
    principal: MachineAgent,
    db: DatabaseDep,
    settings: SettingsDep,
    request: Request,
    response: Response,
) -> RunRead:
    """Store a run and all its results in one transaction; posting the same run id again is a no-op."""
    if len(report.results) > settings.max_results_per_run:
        raise LimitError(
            f"run has {len(report.results)} results, over the limit of {settings.max_results_per_run}",
            hint="split it into several runs",
        )
    assert principal.machine_id is not None
    stored, created = runs.ingest(db, machine_id=principal.machine_id, report=report)
    if created:
        request.app.state.metrics.results_ingested.inc(stored.result_count)
    else:
        response.status_code = status.HTTP_200_OK
    return stored


@router.get("/{run_id}")
def get_run(run_id: uuid.UUID, _reader: Reader, db: DatabaseDep) -> RunRead:
    with db.reading() as session:
        return runs.to_read(runs.get(session, run_id))
