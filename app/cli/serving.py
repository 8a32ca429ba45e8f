"""`hwadvisor plan-serving`: which parts serve a language model, on how many devices, at what
TTFT, TPOT, tokens/s, tokens per joule and dollars per million tokens."""

from __future__ import annotations

from typing import Annotated

import typer

from app.cli.common import database
from app.contracts import Precision


def plan_serving(
    model: Annotated[
        str | None, typer.Argument(help="A language-model preset (llama3_8b, llama3_70b, ...); omit with --shape.")
    ] = None,
    shape: Annotated[
        str | None,
        typer.Option(
            help="A custom shape as JSON: layers, hidden, heads, kv_heads, intermediate, vocabulary "
            '(tied_embeddings, head_dim optional), e.g. \'{"layers": 32, "hidden": 4096, ...}\'.'
        ),
    ] = None,
    prompt: Annotated[int, typer.Option(min=1, help="Prompt tokens per request.")] = 1024,
    output: Annotated[int, typer.Option(min=1, help="Output tokens per request.")] = 256,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Sequences in flight.")] = None,
    request_rate: Annotated[float | None, typer.Option(min=0.001, help="Requests per second.")] = None,
    ttft_ms: Annotated[float | None, typer.Option(min=0.001, help="Time-to-first-token SLO, ms.")] = None,
    tpot_ms: Annotated[float | None, typer.Option(min=0.001, help="Time-per-output-token SLO, ms.")] = None,
    precision: Annotated[
        list[Precision] | None, typer.Option(help="bf16, fp16, fp32, or weight-only int8/int4 (repeat).")
    ] = None,
    hardware: Annotated[list[str] | None, typer.Option(help="Only this catalog id (repeat).")] = None,
    cpus: Annotated[bool, typer.Option("--cpus", help="Consider the catalog's CPUs too.")] = False,
    objective: Annotated[str, typer.Option(help="cheapest ($/Mtok), fastest (tok/s) or least_energy.")] = "cheapest",
    power_budget: Annotated[float | None, typer.Option(min=1, help="Watts per device.")] = None,
    system_budget: Annotated[float | None, typer.Option(min=1, help="Watts for all devices.")] = None,
    max_price: Annotated[float | None, typer.Option(min=1, help="USD for all devices and systems.")] = None,
    years: Annotated[float, typer.Option(min=0.1, max=20, help="Ownership period.")] = 3.0,
    usd_per_kwh: Annotated[float, typer.Option(min=0, help="Electricity price.")] = 0.15,
    utilisation: Annotated[float, typer.Option(min=0.01, max=1, help="Share of the period the devices run.")] = 1.0,
    cloud: Annotated[
        list[str] | None, typer.Option(help="Cloud rate as CATALOG_ID=USD_PER_DEVICE_HOUR (repeat).")
    ] = None,
    per_system: Annotated[int, typer.Option(min=1, max=64, help="Devices one system holds.")] = 8,
    max_devices: Annotated[int, typer.Option(min=1, help="No option uses more devices.")] = 64,
    limit: Annotated[int, typer.Option(min=1, max=500)] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print the ServingPlan as JSON.")] = False,
) -> None:
    """Serve a language model: per part and precision the devices that hold its weights and KV cache
    (tensor parallel where one is not enough) and carry the load within the SLOs, with TTFT, TPOT,
    tokens/s, tokens per joule and $ per million tokens; the parts that cannot, with memory figures."""
    import json

    from pydantic import ValidationError

    from app.cli.plan import _rates
    from app.contracts import ServingRequest
    from app.planner import serving
    from app.planner.serving_table import render

    try:
        request = ServingRequest.model_validate(
            {
                "workload": model,
                "shape": json.loads(shape) if shape else None,
                "prompt_tokens": prompt,
                "output_tokens": output,
                "concurrency": concurrency,
                "request_rate_per_s": request_rate,
                "ttft_slo_ms": ttft_ms,
                "tpot_slo_ms": tpot_ms,
                "precisions": precision or None,
                "hardware": hardware or None,
                "include_cpus": cpus,
                "objective": objective,
                "power_budget_w": power_budget,
                "system_power_budget_w": system_budget,
                "max_price_usd": max_price,
                "costs": {
                    "period_years": years,
                    "electricity_usd_per_kwh": usd_per_kwh,
                    "utilisation": utilisation,
                    "cloud_usd_per_device_hour": _rates(cloud or []),
                },
                "cluster": {"devices_per_system": per_system, "max_devices": max_devices},
                "limit": limit,
            }
        )
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"--shape is not JSON: {exc}") from exc
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        raise typer.BadParameter(f"{where}: {error['msg']}" if where else str(error["msg"])) from exc
    with database().reading() as session:
        answer = serving.plan(session, request)
    typer.echo(answer.model_dump_json(indent=1) if as_json else render(answer))
