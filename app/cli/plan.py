"""`hwadvisor plan`: how many devices of each candidate reach a target, and what they cost."""

from __future__ import annotations

from typing import Annotated

import typer

from app.cli.common import DeviceKindOption, PrecisionOption, RuntimeOption, database
from app.contracts import Task


def plan(
    workload: Annotated[str, typer.Argument(help="A zoo workload (resnet50, bert_base, ...) or a published one.")],
    task: Annotated[Task, typer.Option(help="infer or train.")] = Task.train,
    objective: Annotated[str, typer.Option(help="cheapest, fastest or least_energy.")] = "cheapest",
    batch: Annotated[int | None, typer.Option(min=1, help="Per device; unset, each candidate's best.")] = None,
    throughput: Annotated[float | None, typer.Option(min=0.001, help="Target: samples/s of all devices.")] = None,
    dataset: Annotated[int | None, typer.Option(min=1, help="Target: a training job of this many samples.")] = None,
    epochs: Annotated[float, typer.Option(min=0.001, help="Epochs of the training job.")] = 1.0,
    deadline_h: Annotated[float | None, typer.Option(min=0.001, help="Hours the training job must finish in.")] = None,
    request_rate: Annotated[float | None, typer.Option(min=0.001, help="Target: requests/s to serve.")] = None,
    slo_ms: Annotated[float | None, typer.Option(min=0.001, help="p99 latency SLO for serving, ms.")] = None,
    power_budget: Annotated[float | None, typer.Option(min=1, help="Watts per device.")] = None,
    system_budget: Annotated[float | None, typer.Option(min=1, help="Watts for all devices.")] = None,
    max_price: Annotated[float | None, typer.Option(min=1, help="USD for all devices and systems.")] = None,
    years: Annotated[float, typer.Option(min=0.1, max=20, help="Ownership period.")] = 3.0,
    usd_per_kwh: Annotated[float, typer.Option(min=0, help="Electricity price.")] = 0.15,
    utilisation: Annotated[float, typer.Option(min=0.01, max=1, help="Share of the period the devices run.")] = 1.0,
    hosting: Annotated[float, typer.Option(min=0, help="USD per kW-year of system power.")] = 0.0,
    system_usd: Annotated[float, typer.Option(min=0, help="USD per system on top of its devices.")] = 0.0,
    cloud: Annotated[
        list[str] | None, typer.Option(help="Cloud rate as CATALOG_ID=USD_PER_DEVICE_HOUR (repeat).")
    ] = None,
    per_system: Annotated[int, typer.Option(min=1, max=64, help="Devices one system holds.")] = 8,
    max_devices: Annotated[int, typer.Option(min=1, help="No plan uses more devices.")] = 64,
    network_gb_s: Annotated[
        float, typer.Option(min=0.001, help="Per device and direction between systems, GB/s.")
    ] = 25.0,
    cluster: Annotated[
        str | None,
        typer.Option(help="A declared cluster (hwadvisor clusters list): its network and devices per system."),
    ] = None,
    precision: PrecisionOption = None,
    runtime: RuntimeOption = None,
    device_kind: DeviceKindOption = None,
    owned: Annotated[
        bool, typer.Option("--owned", help="Only hardware the lab owns (default: the catalog too).")
    ] = False,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print the Plan as JSON.")] = False,
) -> None:
    """How many devices reach a throughput, a training deadline or a request rate; time to train;
    cost of owning them (purchase, energy, hosting) over a period, and renting them instead."""
    from pydantic import ValidationError

    from app.cli.recommend import check_known
    from app.contracts import PlanRequest
    from app.planner import plan as make_plan
    from app.planner.table import render

    target: dict[str, object] = {}
    if throughput is not None:
        target["throughput_samples_per_s"] = throughput
    if dataset is not None:
        target["job"] = {"dataset_samples": dataset, "epochs": epochs, "deadline_hours": deadline_h}
    if request_rate is not None:
        target["serving"] = {"request_rate_per_s": request_rate, "latency_p99_slo_ms": slo_ms}
    try:
        request = PlanRequest.model_validate(
            {
                "workload": workload,
                "task": task,
                "objective": objective,
                "batch_size": batch,
                "precisions": precision or None,
                "runtimes": runtime or None,
                "device_kinds": device_kind or None,
                "scope": "owned" if owned else "catalog",
                "target": target,
                "power_budget_w": power_budget,
                "system_power_budget_w": system_budget,
                "max_price_usd": max_price,
                "costs": {
                    "period_years": years,
                    "electricity_usd_per_kwh": usd_per_kwh,
                    "utilisation": utilisation,
                    "hosting_usd_per_kw_year": hosting,
                    "system_usd": system_usd,
                    "cloud_usd_per_device_hour": _rates(cloud or []),
                },
                "cluster": (
                    {"declared": cluster, "max_devices": max_devices}
                    if cluster is not None
                    else {"devices_per_system": per_system, "network_gb_s": network_gb_s, "max_devices": max_devices}
                ),
                "limit": limit,
            }
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise typer.BadParameter(f"{where}: {error['msg']}" if where else str(error["msg"])) from exc
    with database().reading() as session:
        check_known(session, workload)
        answer = make_plan(session, request)
    typer.echo(answer.model_dump_json(indent=1) if as_json else render(answer))


def _rates(given: list[str]) -> dict[str, float]:
    rates = {}
    for item in given:
        part, _, usd = item.partition("=")
        try:
            rates[part.strip()] = float(usd)
        except ValueError:
            raise typer.BadParameter(
                f"--cloud {item!r}: give CATALOG_ID=USD_PER_DEVICE_HOUR, e.g. h100-sxm5-80gb=2.49 "
                "(hwadvisor catalog list shows the ids)"
            ) from None
    return rates
