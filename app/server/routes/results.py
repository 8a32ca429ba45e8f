from __future__ import annotations

import itertools
import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Query
from fastapi.responses import StreamingResponse

from app.contracts import DeviceKind, Page, Precision, ResultRead, ResultStatus, Task, VariantName
from app.db import results
from app.db.results import ResultFilter
from app.server.deps import DatabaseDep, Reader
from app.server.limits import MAX_OFFSET

router = APIRouter(prefix="/results", tags=["results"])


def result_filter(
    machine_id: uuid.UUID | None = None,
    run_id: uuid.UUID | None = None,
    workload: Annotated[
        str | None, Query(max_length=64, description="The bare name; 'resnet50/infer' is read as the task too.")
    ] = None,
    task: Annotated[Task | None, Query(description="infer or train (primitives have none).")] = None,
    runtime: Annotated[str | None, Query(max_length=64)] = None,
    precision: Precision | None = None,
    device_kind: DeviceKind | None = None,
    batch_size: Annotated[int | None, Query(ge=1, le=100_000_000)] = None,
    status: ResultStatus | None = None,
    variant: Annotated[
        VariantName | None, Query(description="A model variant (pruned-50); 'none': the original model's results only.")
    ] = None,
) -> ResultFilter:
    return ResultFilter(
        machine_id=machine_id,
        run_id=run_id,
        workload=workload,
        task=task,
        runtime=runtime,
        precision=precision,
        device_kind=device_kind,
        batch_size=batch_size,
        status=status,
        variant=variant,
    )


FilterDep = Annotated[ResultFilter, Depends(result_filter)]


@router.get("")
def list_results(
    where: FilterDep,
    _reader: Reader,
    db: DatabaseDep,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> Page[ResultRead]:
    with db.reading() as session:
        return results.page(session, where, limit=limit, offset=offset)


@router.get("/export.csv", response_class=StreamingResponse, responses={200: {"content": {"text/csv": {}}}})
def export_results(where: FilterDep, _reader: Reader, db: DatabaseDep) -> StreamingResponse:
    """Every result matching the filters as CSV, streamed a page at a time.

    The first page is read before the answer starts, so a database that cannot be reached is a 503,
    not a 200 cut short; each later page is read in its own short transaction (results.iter_csv)."""
    pages = results.iter_csv(db, where)
    first = next(pages)
    return StreamingResponse(
        itertools.chain([first], pages),
        media_type="text/csv",
        headers={"Content-Disposition": 'attachment; filename="hwadvisor-results.csv"'},
    )
