"""`hwadvisor catalog list`, `catalog match` and `machines set-catalog / clear-catalog` as a user runs
them: a real process on the test database, its exit status and its words."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from testkit import ROOT
from testkit.factories import Api, machine_spec


@pytest.fixture
def run(api: Api, database_url: str, tmp_path: Path) -> Any:
    """hwadvisor against the test database (emptied after the test, like the api fixture's)."""
    env = {**os.environ, "HWADVISOR_DATABASE_URL": database_url, "HWADVISOR_DATA_DIR": str(tmp_path)}

    def hwadvisor(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "app", *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120
        )

    return hwadvisor


def total(api: Api, **params: Any) -> int:
    response = api.client.get("/api/v1/catalog", params={**params, "limit": 1}, headers=api.admin)
    assert response.status_code == 200, response.text
    return int(response.json()["total"])


def test_catalog_list_filters_pages_and_says_how_many_it_shows(api: Api, run: Any) -> None:
    gpus = total(api, kind="gpu")
    first = run("catalog", "list", "--kind", "gpu", "--limit", "5")
    assert first.returncode == 0, first.stderr
    header, _rule, *rows, shown = first.stdout.strip().splitlines()
    for column in ("id", "name", "kind", "vendor", "year", "mem GB", "GB/s", "bf16 TF", "fp16 TF", "TDP W", "price"):
        assert column in header
    assert len(rows) == 5 and all(" gpu " in r for r in rows)
    assert shown == f"5 of {gpus} shown (1-5, page 1; --page 2 for more)"
    second = run("catalog", "list", "--kind", "gpu", "--limit", "5", "--page", "2")
    assert second.returncode == 0 and set(second.stdout.splitlines()[2:7]).isdisjoint(rows)

    assert run("catalog", "set", "l4", "price_usd=2500").returncode == 0
    l4 = run("catalog", "list", "--search", "NVIDIA L4", "--vendor", "nvidia")
    today = datetime.now(UTC).strftime("%Y-%m-%d")
    assert l4.returncode == 0, l4.stderr
    assert f"$2,500 (lab's price, {today})" in l4.stdout.splitlines()[2] and l4.stdout.startswith("id ")

    recent = run("catalog", "list", "--json", "--vendor", "nvidia", "--since", "2023", "--limit", "500")
    page = json.loads(recent.stdout)
    assert page["total"] == total(api, vendor="NVIDIA", min_year=2023) == len(page["items"]) > 0
    assert all(e["vendor"] == "NVIDIA" and e["release_year"] >= 2023 for e in page["items"])
    nothing = run("catalog", "list", "--vendor", "Cyrix")
    assert nothing.stdout.strip().endswith("0 of 0 shown")
    assert "no vendor 'Cyrix' in the catalog; its vendors: " in nothing.stderr and "NVIDIA" in nothing.stderr


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--year", "2022", "--since", "2020"], "give --year or --since, not both"),
        (["--kind", "tpu"], "kind is gpu or cpu"),
        (["--limit", "501"], "--limit"),
    ],
)
def test_catalog_list_refuses_what_it_cannot_do(run: Any, args: list[str], says: str) -> None:
    done = run("catalog", "list", *args)
    assert done.returncode == 2 and says in done.stderr and "Traceback" not in done.stderr


def test_a_generic_cpu_is_pinned_and_unpinned_by_an_admin_from_the_command_line(api: Api, run: Any) -> None:
    why = run("catalog", "match", "AMD EPYC")
    assert why.returncode == 0
    assert why.stdout.startswith("no match (generic): the CPU reports a generic model name 'AMD EPYC'")
    assert "hwadvisor machines set-catalog MACHINE_ID CATALOG_ID" in why.stdout

    machine_id, _token = api.enroll(machine_spec())
    pinned = run("machines", "set-catalog", str(machine_id), "xeon-platinum-8480plus")
    assert pinned.returncode == 0, pinned.stderr
    assert pinned.stdout.startswith(f"{machine_id} cpu: pinned to xeon-platinum-8480plus by an admin (")
    detail = api.client.get(f"/api/v1/machines/{machine_id}", headers=api.admin).json()
    (pin,) = detail["catalog_pins"]
    assert pin["device"] == "cpu" and pin["pinned_by"].endswith(" with hwadvisor machines set-catalog")

    unknown = run("machines", "set-catalog", str(machine_id), "nosuch-cpu")
    assert unknown.returncode == 1 and len(unknown.stderr.strip().splitlines()) == 1
    assert "no catalog entry 'nosuch-cpu'" in unknown.stderr and "hwadvisor catalog list --search" in unknown.stderr
    wrong = run("machines", "set-catalog", str(machine_id), "l4", "--device", "cpu")
    assert wrong.returncode == 1 and "l4 is a GPU, and cpu" in wrong.stderr
    assert run("machines", "set-catalog", str(machine_id), "l4", "--device", "gpu0").returncode == 2

    cleared = run("machines", "clear-catalog", str(machine_id))
    assert cleared.returncode == 0, cleared.stderr
    assert cleared.stdout.strip() == f"{machine_id} cpu: unpinned; matched automatically: no catalog entry"
    assert api.client.get(f"/api/v1/machines/{machine_id}", headers=api.admin).json()["catalog_pins"] == []


def test_catalog_show_gives_each_figure_its_source_and_says_why_one_is_missing(run: Any) -> None:
    shown = run("catalog", "show", "l40s")
    assert shown.returncode == 0, shown.stderr
    assert "form_factor: pcie  [derived: " in shown.stdout
    assert "nvlink_gb_s: -  [none: " in shown.stdout
    answer = json.loads(run("catalog", "show", "h100-sxm5-80gb", "--json").stdout)
    assert (answer["nvlink_gb_s"], answer["form_factor"], answer["power_limit_min_w"]) == (900, "sxm", 200)


def test_catalog_commands_work_on_a_fresh_machine_before_any_server_ran(tmp_path: Path) -> None:
    """No database yet: the embedded SQLite file is created at the current schema, not reported lost."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HWADVISOR_")}
    env["HWADVISOR_DATA_DIR"] = str(tmp_path / "fresh")
    shown = subprocess.run(
        [sys.executable, "-m", "app", "catalog", "show", "h100-sxm5-80gb"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )
    assert shown.returncode == 0, shown.stderr
    assert "memory_bandwidth_gb_s: 3350" in shown.stdout or "memory_bandwidth_gb_s: 3360" in shown.stdout
    assert (tmp_path / "fresh" / "hwadvisor.db").is_file()
