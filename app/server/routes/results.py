from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Generator
from typing import Annotated

import anyio
import anyio.to_thread
from fastapi import APIRouter, Depends, Query, Request
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
def export_results(where: FilterDep, _reader: Reader, db: DatabaseDep, request: Request) -> StreamingResponse:
    """Every result matching the filters as CSV, streamed a page at a time.

    The first page is read before the answer starts, so a database that cannot be reached is a 503,
    not a 200 cut short; each later page is read in its own short transaction (results.iter_csv),
    by one of the worker's few export threads (``paced``)."""
    pages = results.iter_csv(db, where)
    first = next(pages)
    return StreamingResponse(
        paced(first, pages, request.app.state.export_limiter),
        media_type="text/csv",
        headers={"Content-Disposition": 'attachment; filename="hwadvisor-results.csv"'},
    )


EXPORT_THREADS = 2
"""Export pages built at once in one server worker, however many exports are streaming.

Starlette reads a plain iterator in the thread pool every endpoint shares (40 threads): 40 exports to
clients that read slowly, or whose kernels buffer megabytes, kept 40 threads writing CSV on a 2-core
server, and a five-row query behind them waited past 20 s. Exports now queue for these threads among
themselves; the rest of the API keeps its pool and its share of the CPU. The limiter is made in each
worker's event loop as it starts (app.server.app's lifespan, ``app.state.export_limiter``)."""


async def paced(first: str, pages: Generator[str], limiter: anyio.CapacityLimiter) -> AsyncIterator[str]:
    """``first``, then each next page of ``pages`` read in a thread under ``limiter``."""
    try:
        yield first
        while (page := await anyio.to_thread.run_sync(next, pages, None, limiter=limiter)) is not None:
            yield page
    finally:
        pages.close()  # a client that went away: the generator ends here, holding nothing
