"""`hwadvisor recommend`: rank hardware x runtime x precision x batch for a workload."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from app.cli.common import DeviceKindOption, PrecisionOption, RuntimeOption, database
from app.contracts import Task
from app.errors import NotFoundError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


def recommend(
    workload: Annotated[str, typer.Argument(help="A zoo workload (resnet50, bert_base, ...) or a published one.")],
    task: Annotated[Task, typer.Option(help="infer or train.")] = Task.infer,
    objective: Annotated[
        str, typer.Option(help="What to rank by: one of the objectives (GET /api/v1/registry lists them).")
    ] = "throughput",
    batch: Annotated[
        int | None, typer.Option(min=1, help="Fixed batch size; unset, every batch is a candidate.")
    ] = None,
    power_budget: Annotated[float | None, typer.Option(min=1, help="Watts per device.")] = None,
    system_budget: Annotated[float | None, typer.Option(min=1, help="Watts for all --devices together.")] = None,
    devices: Annotated[int, typer.Option(min=1, help="Devices in the system.")] = 1,
    slo_ms: Annotated[float | None, typer.Option(min=0.001, help="p99 latency SLO in ms.")] = None,
    min_throughput: Annotated[float | None, typer.Option(min=0.001, help="Samples/s the system must reach.")] = None,
    max_price: Annotated[float | None, typer.Option(min=1, help="USD for all devices.")] = None,
    precision: PrecisionOption = None,
    runtime: RuntimeOption = None,
    device_kind: DeviceKindOption = None,
    catalog: Annotated[
        bool,
        typer.Option(
            "--catalog/--owned", help="Also hardware nobody here owns yet (the default), or the lab's machines alone."
        ),
    ] = True,
    variants: Annotated[
        bool,
        typer.Option("--variants", help="Also model variants the lab measured (speed only: pruned, int8-static...)."),
    ] = False,
    variant: Annotated[list[str] | None, typer.Option(help="With --variants: only this variant (repeat).")] = None,
    limit: Annotated[int, typer.Option(min=1, max=1000)] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print the Recommendation as JSON.")] = False,
) -> None:
    """Rank hardware x runtime x precision x batch for a workload under a power budget."""
    from pydantic import ValidationError

    from app.contracts import WorkloadSpec
    from app.recommender import recommend as ask
    from app.recommender.table import render

    try:
        spec = WorkloadSpec.model_validate(
            {
                "workload": workload,
                "task": task,
                "objective": objective,
                "batch_size": batch,
                "scope": "catalog" if catalog else "owned",
                "limit": limit,
                "allow_variants": variants,
                "constraints": {
                    "power_budget_w": power_budget,
                    "system_power_budget_w": system_budget,
                    "device_count": devices,
                    "latency_p99_slo_ms": slo_ms,
                    "min_throughput_samples_per_s": min_throughput,
                    "max_price_usd": max_price,
                    "precisions": precision or None,
                    "runtimes": runtime or None,
                    "device_kinds": device_kind or None,
                    "variants": variant or None,
                },
            }
        )
    except ValidationError as exc:
        raise typer.BadParameter(str(exc.errors()[0]["msg"])) from exc
    with database().reading() as session:
        check_known(session, workload)
        answer = ask(session, spec)
    typer.echo(answer.model_dump_json(indent=1) if as_json else render(answer))


def check_known(session: Session, name: str) -> None:
    """A name that is not in the zoo, was never published and was never measured here is a typo: say
    so, with the names that exist, where the recommender would say that nothing has measured it yet."""
    from app.bench.workloads import workloads
    from app.db import catalog, results

    if name in workloads:
        return
    published = {r.workload for r in catalog.all_results(session)}
    if name in published:
        return
    if results.page(session, results.ResultFilter(workload=name), limit=1, offset=0).total:
        return  # one of the lab's own workloads
    raise NotFoundError(
        f"unknown workload {name!r}; these exist: {', '.join(sorted({*workloads.names(), *published}))}"
    )
