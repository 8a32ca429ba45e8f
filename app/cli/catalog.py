"""`hwadvisor catalog ...`: the hardware catalog as the recommender sees it, and the lab's overrides."""

from __future__ import annotations

from typing import Annotated, Literal, cast

import typer

from app.catalog.listing import MAX_PAGE, CatalogPage
from app.cli.common import database

group = typer.Typer(no_args_is_help=True, help="The hardware catalog: specs, prices, the lab's overrides.")


@group.command("list")
def list_(
    vendor: Annotated[str | None, typer.Option(help="Only this vendor (any case), e.g. NVIDIA.")] = None,
    kind: Annotated[str | None, typer.Option(help="gpu or cpu.")] = None,
    year: Annotated[int | None, typer.Option(min=1970, max=2100, help="Released that year.")] = None,
    since: Annotated[int | None, typer.Option(min=1970, max=2100, help="Released that year or later.")] = None,
    min_memory: Annotated[float | None, typer.Option(min=0, help="At least this many GB of memory.")] = None,
    search: Annotated[str | None, typer.Option(help="Part of the id or the name (any case).")] = None,
    limit: Annotated[int, typer.Option(min=1, max=MAX_PAGE, help="Entries per page.")] = 50,
    page: Annotated[int, typer.Option(min=1, help="Which page, from 1.")] = 1,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the page as JSON (GET /api/v1/catalog's answer).")
    ] = False,
) -> None:
    """The catalog as the recommender sees it (the lab's overrides applied), filtered and paged like
    GET /api/v1/catalog; every price says how it is known (a dated quote, the lab's, a release price)."""
    from app.catalog.listing import CatalogFilter, year_range
    from app.db import catalog

    if kind not in (None, "gpu", "cpu"):
        raise typer.BadParameter("kind is gpu or cpu", param_hint="--kind")
    if year is not None and since is not None:
        raise typer.BadParameter("give --year or --since, not both", param_hint="--year")
    low, high = year_range(year, since, None)
    where = CatalogFilter(
        vendor=vendor,
        kind=cast(Literal["gpu", "cpu"] | None, kind),
        min_year=low,
        max_year=high,
        min_memory_gb=min_memory,
        q=search,
    )
    with database().reading() as session:
        found = catalog.page(session, where, limit=limit, offset=(page - 1) * limit)
    if as_json:
        typer.echo(found.model_dump_json(indent=1))
        return
    typer.echo(render(found))
    if vendor and found.total == 0 and vendor.casefold() not in {v.casefold() for v in found.vendors}:
        typer.echo(f"no vendor {vendor!r} in the catalog; its vendors: {', '.join(found.vendors)}", err=True)


def _figure(value: float | None, digits: int = 0) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def render(found: CatalogPage) -> str:
    """The page as a table: the figures the recommender uses, the price with how it is known, and
    how many of how many entries it shows."""
    from app.catalog.price import price_text

    header = (
        f"{'id':<26} {'name':<34} {'kind':<4} {'vendor':<8} {'year':>4} {'mem GB':>7} {'GB/s':>7} "
        f"{'bf16 TF':>8} {'fp16 TF':>8} {'TDP W':>6}  price"
    )
    lines = [header, "-" * len(header)]
    for e in found.items:
        lines.append(
            f"{_cut(e.id, 26):<26} {_cut(e.name, 34):<34} {e.kind:<4} {_cut(e.vendor, 8):<8} "
            f"{e.release_year or '-':>4} {_figure(e.memory_gb):>7} {_figure(e.memory_bandwidth_gb_s):>7} "
            f"{_figure(e.peak_bf16_tflops, 1):>8} {_figure(e.peak_fp16_tflops, 1):>8} {_figure(e.tdp_w):>6}  "
            f"{price_text(e.price)}"
        )
    first = found.offset + 1 if found.items else 0
    shown = f"{len(found.items)} of {found.total} shown"
    if found.items and len(found.items) < found.total:
        page = found.offset // found.limit + 1
        shown += f" ({first}-{found.offset + len(found.items)}, page {page}; --page {page + 1} for more)"
    lines.append(shown)
    return "\n".join(lines)


@group.command("set")
def set_(
    catalog_id: str,
    field: Annotated[list[str], typer.Argument(help="FIELD=VALUE, e.g. price_usd=28000")],
) -> None:
    """Override fields of an entry (your own price quote), or add an entry (kind=, vendor=, name= needed)."""
    from app.contracts import CatalogPatch
    from app.db import catalog

    values = dict(f.split("=", 1) for f in field if "=" in f)
    if len(values) != len(field):
        raise typer.BadParameter("give each field as FIELD=VALUE")
    patch = CatalogPatch.model_validate(values, strict=False)
    with database().writing() as session:
        entry = catalog.apply(session, catalog_id, patch)
    typer.echo(entry.model_dump_json(indent=1))


@group.command("match")
def match(
    name: Annotated[
        str, typer.Argument(help='A device name as NVML or lscpu reports it, e.g. "NVIDIA H100 80GB HBM3".')
    ],
    kind: Annotated[str | None, typer.Option(help="gpu or cpu; unset, both are tried.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the CatalogMatch as JSON.")] = False,
) -> None:
    """What a device name matches in the catalog (the lab's aliases included), and why."""
    from app.db import catalog

    if kind not in (None, "gpu", "cpu"):
        raise typer.BadParameter("kind is gpu or cpu")
    with database().reading() as session:
        found = catalog.match(session, name, kind)  # type: ignore[arg-type]
    if as_json:
        typer.echo(found.model_dump_json(indent=1))
    else:
        typer.echo(f"{found.catalog_id or 'no match'} ({found.code}): {found.note}")


@group.command("show")
def show(
    catalog_id: Annotated[str, typer.Argument(help="The entry's id, e.g. h100-sxm5-80gb.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print GET /api/v1/catalog/ID's answer.")] = False,
) -> None:
    """One entry as the recommender sees it (the lab's overrides applied): every known figure with
    its source, and why a figure is missing where a source says so."""
    from app.catalog.listing import read
    from app.db import catalog

    with database().reading() as session:
        entry = read(catalog.entry(session, catalog_id))
    if as_json:
        typer.echo(entry.model_dump_json(indent=1))
        return
    fields = entry.model_dump(exclude={"sources", "price"}, exclude_none=True)
    for field, value in fields.items():
        source = entry.sources.get(field)
        typer.echo(f"{field}: {value}" + (f"  [{source}]" if source else ""))
    for field, reason in entry.sources.items():
        if field not in fields:
            typer.echo(f"{field}: -  [{reason}]")
