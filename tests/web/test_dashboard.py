"""The dashboard in real headless Chromium against a real server process: log in, the fleet, a
machine's charts drawn, the recommend form answered, a training job planned, a job scheduled and
cancelled, the catalog edited; read-only keys see but cannot change; the menu and the forms'
choices read from the registry; screenshots of every page in artifacts/dashboard/."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import httpx
from playwright.sync_api import expect

from testkit.factories import Api, result, run_report
from testkit.lab import cpu_machine, measured
from testkit.processes import ADMIN, ADMIN_HEADERS, ServerProcess

NOT_MEASURED = (
    "throughput_samples_per_s",
    "latency_p50_ms",
    "latency_p90_ms",
    "latency_p99_ms",
    "latency_mean_ms",
    "latency_ci95_low_ms",
    "latency_ci95_high_ms",
    "cv",
    "iterations",
    "stable",
    "peak_memory_mb",
    "mean_power_w",
    "energy_per_sample_j",
)


def open_page(browser: Any, server: ServerProcess, token: str = ADMIN) -> Any:
    page = browser.new_page(viewport={"width": 1500, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.errors = errors
    page.goto(server.url + "/")
    page.fill("#token", token)
    page.click("#login button[type=submit]")
    page.wait_for_selector("body[data-ready=fleet]")
    return page


def wait_ready(page: Any, name: str) -> None:
    page.wait_for_selector(f"body[data-ready={name}]", timeout=15_000)


COUNT_POINTS = """(sel) => {
    const canvas = document.querySelector(sel + ' canvas');
    const chart = canvas && window.Chart.getChart(canvas);
    if (!chart) return -1;
    return chart.data.datasets.reduce((n, d) => n + d.data.filter((v) => v !== null).length, 0);
}"""


def chart_points(page: Any, selector: str) -> int:
    """How many data points Chart.js drew on the canvas under ``selector``."""
    return int(page.evaluate(COUNT_POINTS, selector))


def test_fleet_machine_recommend_jobs_catalog(browser: Any, server: ServerProcess, screenshots: Path) -> None:
    page = open_page(browser, server)
    rows = page.locator("tr[data-machine]")
    assert rows.count() == 5
    assert "NVIDIA H100 80GB HBM3" in page.inner_text("main")
    page.click("#new-enrollment")
    command = page.inner_text("#enrol-command pre")
    assert command.startswith(f"hwadvisor agent enroll --server {server.url} --token hwa_enrollment_")
    page.screenshot(path=str(screenshots / "1-fleet.png"), full_page=True)

    page.click("text=node-h100")
    wait_ready(page, "machine")
    assert chart_points(page, "#chart-by-workload") >= 2
    assert chart_points(page, "#chart-vs-batch") >= 3
    assert chart_points(page, "#chart-power") >= 3
    page.select_option("#results select[name=precision]", "fp32")
    expect(page.locator("#results tbody tr")).to_have_count(1)
    page.screenshot(path=str(screenshots / "2-machine.png"), full_page=True)

    page.click("#nav a[data-page=recommend]")
    wait_ready(page, "recommend")
    page.fill("input[name=power_budget_w]", "400")
    page.fill("input[name=batch_size]", "64")
    page.check("input[name=precision][value=bf16]")
    page.check("#recommend-form input[name=device_kind][value=cuda]")
    page.check("input[name=scope][value=owned]")
    page.click("#recommend-submit")
    page.wait_for_selector("#recommend-result tr.candidate")
    first = page.locator("#recommend-result tr.candidate").first.inner_text()
    assert "node-h100" in first and "predicted" in first and "capped" in first
    ranked = [r.split("\t")[2] for r in page.locator("#recommend-result tr.candidate").all_inner_texts()]
    assert [where.split()[0] for where in ranked] == ["node-h100", "node-a100", "node-a100-slow", "node-l4"]
    assert "draws 610 W at batch 64, budget 400 W" in page.inner_text("#rejected")
    assert chart_points(page, "#chart-pareto") >= 4 + 3
    rest = page.inner_text("#rest-query")
    assert f"{server.url}/api/v1/recommendations" in rest and '"power_budget_w":400' in rest
    assert '"device_kinds":["cuda"]' in rest  # "which GPU": the kind of device is asked, not implied
    page.screenshot(path=str(screenshots / "3-recommend.png"), full_page=True)

    # ranked by the low end of each band: the figure it ranks by is shown under each one
    page.select_option("#recommend-form select[name=objective]", "assured_throughput")
    page.click("#recommend-submit")
    page.wait_for_selector("#recommend-result tr.candidate .low-end")
    lows = [float(t.split()[-1].replace(",", "")) for t in page.locator("#recommend-result .low-end").all_inner_texts()]
    assert len(lows) == 4 and lows == sorted(lows, reverse=True), lows

    page.click("#nav a[data-page=compare]")
    wait_ready(page, "compare")
    machines = page.locator("#compare-pick option").all()
    values = [o.get_attribute("value") for o in machines]
    h100 = next(o.get_attribute("value") for o in machines if "node-h100" in o.inner_text())
    a100 = next(o.get_attribute("value") for o in machines if "node-a100 " in o.inner_text() + " ")
    assert "c:h200-sxm-141gb" in values
    page.select_option("#compare-pick", [h100, a100, "c:h200-sxm-141gb"])
    page.click("#compare-form button[type=submit]")
    page.wait_for_selector("#compare-result table")
    table = page.inner_text("#compare-result table")
    assert "measured" in table and "predicted" in table
    # the catalog H200 is measured by hwadvisor's own reference run, badged apart from the lab's
    reference = page.locator("#compare-result table .badge.reference")
    assert reference.count() >= 1 and "reference:hwadvisor-h200-sxm-141gb" in table
    assert chart_points(page, "#chart-compare") >= 3
    page.screenshot(path=str(screenshots / "4-compare.png"), full_page=True)

    page.click("#nav a[data-page=jobs]")
    wait_ready(page, "jobs")
    page.select_option("#job-form select[name=suite]", "standard")
    page.select_option(
        "#job-form select[name=machine_id]",
        label=page.locator("#job-form select[name=machine_id] option", has_text="node-l4").inner_text(),
    )
    page.click("#job-form button[type=submit]")
    page.wait_for_selector("tr[data-job] >> text=queued")
    page.screenshot(path=str(screenshots / "5-jobs.png"), full_page=True)
    page.click("tr[data-job] >> text=Cancel")
    page.wait_for_selector("tr[data-job] >> text=cancelled")

    page.click("#nav a[data-page=catalog]")
    wait_ready(page, "catalog")
    page.fill("#catalog-filters input[name=q]", "l4")  # one page of many hundreds: find it first
    found = catalog_total(server, q="l4")
    expect(page.locator("#catalog-count")).to_have_text(f"{found} of {found} shown")
    page.fill("input[name=price-l4]", "2500")
    page.click("tr[data-entry=l4] button")
    page.wait_for_selector("tr[data-entry=l4] >> text=saved")
    assert page.inner_text("tr[data-entry=l4] .price-note").startswith("lab's price, ")
    page.screenshot(path=str(screenshots / "6-catalog.png"), full_page=True)
    entry = httpx.get(f"{server.url}/api/v1/catalog/l4", headers={"Authorization": f"Bearer {ADMIN}"}).json()
    assert entry["price_usd"] == 2500 and entry["price"]["basis"] == "lab"
    assert page.errors == []


def test_a_read_only_key_sees_everything_and_changes_nothing(browser: Any, server: ServerProcess) -> None:
    issued = httpx.post(
        f"{server.url}/api/v1/tokens", json={"kind": "readonly"}, headers={"Authorization": f"Bearer {ADMIN}"}
    )
    page = open_page(browser, server, issued.json()["token"])
    assert page.inner_text("#who").startswith("read-only")
    assert page.locator("#new-enrollment").count() == 0
    page.click("#nav a[data-page=catalog]")
    wait_ready(page, "catalog")
    page.fill("#catalog-filters input[name=q]", "l4")
    found = catalog_total(server, q="l4")
    expect(page.locator("#catalog-count")).to_have_text(f"{found} of {found} shown")
    assert page.locator("tr[data-entry=l4] button").is_disabled()
    # the server refuses it even when the page is bypassed, with a valid CSRF header
    status = page.evaluate(
        """async () => { const csrf = document.cookie.split('; ').find((c) => c.startsWith('hwa_csrf=')).slice(9);
            const r = await fetch('/api/v1/catalog/l4', {method: 'PUT', headers: {'Content-Type': 'application/json',
            'X-CSRF-Token': csrf}, body: JSON.stringify({price_usd: 1})}); return r.status; }"""
    )
    assert status == 403


def test_a_cookie_without_the_csrf_header_changes_nothing(browser: Any, server: ServerProcess) -> None:
    page = open_page(browser, server)
    status = page.evaluate(
        """async () => (await fetch('/api/v1/catalog/l4', {method: 'PUT', headers: {'Content-Type': 'application/json'},
            body: JSON.stringify({price_usd: 1})})).status"""
    )
    assert status == 403
    cookies = {c["name"]: c for c in page.context.cookies()}
    assert cookies["hwa_session"]["httpOnly"] and cookies["hwa_session"]["sameSite"] == "Strict"


def test_the_page_carries_security_headers_and_refuses_machine_tokens(server: ServerProcess) -> None:
    response = httpx.get(server.url + "/")
    csp = response.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "frame-ancestors 'none'" in csp and "unsafe-inline" not in csp
    assert response.headers["x-frame-options"] == "DENY"
    assert response.headers["x-content-type-options"] == "nosniff"
    enrollment = httpx.post(
        f"{server.url}/api/v1/tokens", json={"kind": "enrollment"}, headers={"Authorization": f"Bearer {ADMIN}"}
    ).json()["token"]
    login = httpx.post(f"{server.url}/api/v1/session", json={"token": enrollment})
    assert login.status_code == 403 and "cannot open the dashboard" in login.json()["detail"]
    bad = httpx.post(f"{server.url}/api/v1/session", json={"token": "hwa_admin_nope.nope"})
    assert bad.status_code == 401 and "hwa_session" not in bad.headers.get("set-cookie", "")


def test_a_wrong_token_at_the_login_says_so_on_the_form(browser: Any, server: ServerProcess) -> None:
    page = browser.new_page()
    crashes: list[str] = []
    page.on("pageerror", lambda error: crashes.append(str(error)))
    page.goto(server.url + "/")
    page.fill("#token", "hwa_admin_nope.nope")
    page.click("#login button[type=submit]")
    expect(page.locator("#login-error")).not_to_have_text("")
    assert page.input_value("#token") == "hwa_admin_nope.nope", "the form was replaced: the message went nowhere"
    assert crashes == []


def test_the_menu_and_the_forms_come_from_the_registry(browser: Any, server: ServerProcess) -> None:
    registry = httpx.get(f"{server.url}/api/v1/registry", headers={"Authorization": f"Bearer {ADMIN}"}).json()
    page = open_page(browser, server)
    menu = [a.get_attribute("data-page") for a in page.locator("#nav a").all()]
    # in each page's own order; the machine page has none: it is reached by links
    assert menu == ["fleet", "compare", "runtimes", "recommend", "plan", "serving", "jobs", "catalog"]
    assert {row["name"] for row in registry["families"]["page"]} == {*menu, "machine"}

    page.click("#nav a[data-page=recommend]")
    wait_ready(page, "recommend")
    offered = page.locator("#recommend-form select[name=workload] option").all_inner_texts()
    assert {row["name"] for row in registry["families"]["workload"]} <= set(offered)
    assert "gnmt" in offered  # only published results cover it, and the recommender answers for it
    objectives = page.locator("#recommend-form select[name=objective] option").evaluate_all(
        "(options) => options.map((o) => o.value)"
    )
    assert objectives == [row["name"] for row in registry["families"]["objective"]]
    boxes = page.locator("#recommend-form input[name=precision]")
    precisions = boxes.evaluate_all("(boxes) => boxes.map((b) => b.value)")
    assert precisions == registry["vocabulary"]["precisions"]
    for form in ("#recommend-form",):  # the plan page's boxes: the plan test ticks one
        kinds = page.locator(f"{form} input[name=device_kind]").evaluate_all("(boxes) => boxes.map((b) => b.value)")
        assert kinds == registry["vocabulary"]["device_kinds"] == ["cpu", "cuda"]
    variants = page.locator("#recommend-form input[name=variant]").evaluate_all("(boxes) => boxes.map((b) => b.value)")
    assert variants == [row["name"] for row in registry["families"]["variant"]]

    page.click("#nav a[data-page=jobs]")
    wait_ready(page, "jobs")
    assert page.locator("#job-form select[name=suite] option").all_inner_texts() == registry["vocabulary"]["suites"]
    assert page.errors == []


def test_the_machine_page_says_why_there_is_no_scaling_chart_and_counts_as_its_pager(
    browser: Any, server: ServerProcess
) -> None:
    with httpx.Client(base_url=server.url, timeout=30) as client:
        api = Api(client, ADMIN)
        spec = cpu_machine("node-cpu-one-count")
        machine_id, token = api.enroll(spec)
        cpu = {"device": "cpu", "runtime": "onnxruntime-cpu", "precision": "fp32", "threads": 2}
        failed = {key: None for key in NOT_MEASURED} | {"power_source": "none"}
        results = [
            measured(8, 30, 90, **cpu, power_source="rapl"),
            result(**cpu, **failed, batch_size=512, status="oom", reason="out of memory at batch 512"),
        ]
        assert api.post_run(token, run_report(spec, results=results)).status_code == 201
        pinned = client.put(
            f"/api/v1/machines/{machine_id}/catalog", json={"catalog_id": "epyc-9654"}, headers=api.admin
        )
        assert pinned.status_code == 200, pinned.text

    page = open_page(browser, server)
    page.goto(f"{server.url}/#/machine/{machine_id}")
    wait_ready(page, "machine")
    pin = page.inner_text("#catalog-match [data-device=cpu]")
    assert pin.startswith("cpu: epyc-9654") and "pinned by the server's admin token" in pin
    assert "Measured at 2 threads only" in page.inner_text("#chart-threads")
    assert page.locator("#chart-threads canvas").count() == 0
    assert page.inner_text("#results-heading") == "Results (2)"
    assert page.inner_text("#results .pager span") == "1\N{EN DASH}2 of 2"
    page.select_option("#results select[name=precision]", "fp32")
    page.fill("#results input[name=runtime]", "torch-eager")
    page.press("#results input[name=runtime]", "Enter")
    expect(page.locator("#results-heading")).to_have_text("Results (0)")
    assert page.inner_text("#results .pager span") == "none"
    page.fill("#results input[name=runtime]", "")
    page.press("#results input[name=runtime]", "Enter")
    expect(page.locator("#results-heading")).to_have_text("Results (2)")
    ok_row = page.locator("#results tbody tr", has_text="onnxruntime-cpu").filter(has_not_text="oom")
    assert ok_row.locator("td").nth(7).inner_text() == "30 samples/s"  # the throughput column carries its unit
    assert page.errors == []


def test_the_plan_page_ranks_device_counts_and_breaks_down_the_selected_one(
    browser: Any, server: ServerProcess, screenshots: Path
) -> None:
    page = open_page(browser, server)
    page.click("#nav a[data-page=plan]")
    wait_ready(page, "plan")
    assert page.input_value("#plan-form select[name=workload]") == "resnet50"
    page.select_option("#plan-target", "job")
    assert page.input_value("#plan-form select[name=task]") == "train"  # a training job needs it
    assert page.locator("#plan-form input[name=request_rate_per_s]").is_hidden()
    page.fill("input[name=dataset_samples]", "1281167")
    page.fill("input[name=epochs]", "10")
    page.fill("input[name=deadline_hours]", "1")  # 12.8 M samples in an hour: several devices
    page.fill("input[name=cloud_part]", "h100-sxm5-80gb")
    page.fill("input[name=cloud_usd_per_device_hour]", "3")
    page.check("#plan-form input[name=device_kind][value=cuda]")
    page.click("#plan-submit")
    rows = page.locator("#plan-candidates tr.candidate")
    rows.first.wait_for()

    asked = json.loads(page.inner_text("#plan-rest").split("-d '", 1)[1].rstrip("'"))
    assert asked["target"] == {"job": {"dataset_samples": 1281167, "epochs": 10, "deadline_hours": 1}}
    assert asked["costs"] == {"cloud_usd_per_device_hour": {"h100-sxm5-80gb": 3}}
    assert asked["device_kinds"] == ["cuda"]
    answer = httpx.post(f"{server.url}/api/v1/plans", json=asked, headers=ADMIN_HEADERS, timeout=60)
    assert answer.status_code == 200, answer.text
    plan = answer.json()
    assert {c["hardware"]["kind"] for c in plan["candidates"]} == {"cuda"}
    assert len(plan["candidates"]) >= 2
    assert rows.count() == len(plan["candidates"])
    cells = [row.split("\t") for row in rows.all_inner_texts()]
    assert [c[1].split("\n")[0] for c in cells] == [c["hardware"]["name"] for c in plan["candidates"]]
    assert [int(c[5]) for c in cells] == [c["devices"] for c in plan["candidates"]]
    assert max(int(c[5]) for c in cells) > 1
    assert all(float(c[10]) <= 1 for c in cells), "every plan's time to train meets the deadline"
    first = plan["candidates"][0]
    assert cells[0][16] == f"${first['costs']['total_usd']:,.0f}"
    assert "Assumptions" in page.inner_text("#plan-assumptions") and page.locator("#plan-assumptions li").count() >= 1

    assert chart_points(page, "#chart-cost") >= 2
    assert page.inner_text("#plan-breakdown h2") == f"#1 {first['hardware']['name']}"
    breakdown = page.inner_text("#plan-breakdown")
    assert first["estimate"]["explanation"] in breakdown and "null" not in breakdown
    assert all(note["text"] in breakdown for note in first["notes"])
    page.screenshot(path=str(screenshots / "7-plan.png"), full_page=True)

    second = plan["candidates"][1]
    rows.nth(1).click()
    expect(page.locator("#plan-breakdown h2")).to_have_text(f"#2 {second['hardware']['name']}")
    assert rows.nth(1).get_attribute("aria-current") == "true" and rows.first.get_attribute("aria-current") is None
    caption = page.inner_text("#chart-cost-caption")
    assert caption.startswith(f"{second['hardware']['name']}, {second['devices']} device")
    lines = "(canvas) => window.Chart.getChart(canvas).data.datasets.map((d) => d.data.length)"
    drawn = page.locator("#chart-cost canvas").evaluate(lines)  # the same chart, its lines now the second's
    assert drawn == [sum(p[k] is not None for p in second["cost_over_time"]) for k in ("owned_usd", "cloud_usd")]

    # a declared cluster: its own network and devices per system replace the described ones
    with httpx.Client(base_url=server.url, timeout=30) as client:
        api = Api(client, ADMIN)
        members = [str(api.enroll(cpu_machine(f"node-rack-{i}"))[0]) for i in range(2)]
        body = {"name": "rack-b", "machines": members, "network_gb_s": 12.5, "interconnect": "100 GbE"}
        assert client.post("/api/v1/clusters", json=body, headers=api.admin).status_code == 201
    page.reload()
    wait_ready(page, "plan")
    page.select_option("#plan-cluster", "rack-b")
    assert page.locator("#plan-form input[name=network_gb_s]").is_hidden()
    page.click("#plan-submit")
    expect(page.locator("#plan-assumptions")).to_contain_text("declared cluster rack-b: 2 machines, 100 GbE")
    asked = json.loads(page.inner_text("#plan-rest").split("-d '", 1)[1].rstrip("'"))
    assert asked["cluster"] == {"declared": "rack-b"}

    # a target the task cannot have: the server's words, on the page
    wrong = {"workload": "resnet50", "task": "train", "target": {"serving": {"request_rate_per_s": 100}}}
    page.goto(f"{server.url}/#/plan?" + urlencode({"spec": json.dumps(wrong)}))
    expect(page.locator("#plan-result .error")).to_contain_text("invalid")
    assert "a serving target needs task 'infer'" in page.inner_text("#plan-result")
    assert [e for e in page.errors if "422" not in e] == []


def test_the_serving_page_plans_a_language_model_and_says_what_does_not_fit(
    browser: Any, server: ServerProcess, screenshots: Path
) -> None:
    """The models offered are the registry's language models; the table is the API's answer, and a
    70B model on one card is rejected with its memory figures."""
    registry = httpx.get(f"{server.url}/api/v1/registry", headers={"Authorization": f"Bearer {ADMIN}"}).json()
    page = open_page(browser, server)
    page.click("#nav a[data-page=serving]")
    wait_ready(page, "serving")
    offered = page.locator("#serving-form select[name=workload] option").all_inner_texts()
    assert offered == [w["name"] for w in registry["families"]["workload"] if "decode" in w["tasks"]]
    page.select_option("#serving-form select[name=workload]", "llama3_70b")
    page.fill("#serving-form input[name=load]", "8")
    page.fill("#serving-form input[name=hardware]", "h100-sxm5-80gb, rtx-4090")
    page.fill("#serving-form input[name=max_devices]", "1")
    page.click("#serving-submit")
    page.locator("#serving-rejected").wait_for()
    asked = json.loads(page.inner_text("#serving-rest").split("-d '", 1)[1].rstrip("'"))
    assert asked["workload"] == "llama3_70b" and asked["concurrency"] == 8 and asked["cluster"] == {"max_devices": 1}
    assert page.locator("#serving-candidates tr.candidate").count() == 0
    rejected = page.inner_text("#serving-rejected")
    assert "weights 141.1 GB" in rejected and "has 80 GB" in rejected and "has 24 GB" in rejected

    del asked["cluster"]
    page.goto(f"{server.url}/#/serving?" + urlencode({"spec": json.dumps(asked)}))
    rows = page.locator("#serving-candidates tr.candidate")
    rows.first.wait_for()
    answer = httpx.post(f"{server.url}/api/v1/plans/serving", json=asked, headers=ADMIN_HEADERS, timeout=60).json()
    cells = [row.split("\t") for row in rows.all_inner_texts()]
    assert [c[1] for c in cells] == [c["hardware"]["name"] for c in answer["candidates"]]
    first = answer["candidates"][0]
    assert cells[0][3] == f"{first['tensor_parallel']} \u00d7 {first['replicas']} = {first['devices']}"
    assert first["tensor_parallel"] >= 2
    assert abs(float(cells[0][10].lstrip("$").replace(",", "")) - first["usd_per_million_tokens"]) <= 0.005
    assert all(note["text"] in page.inner_text("#serving-best") for note in first["notes"])
    assert page.locator("#serving-assumptions li").count() >= 3
    page.screenshot(path=str(screenshots / "8-serving.png"), full_page=True)
    assert page.errors == []


def catalog_total(server: ServerProcess, **params: Any) -> int:
    response = httpx.get(
        f"{server.url}/api/v1/catalog", params={**params, "limit": 1}, headers={"Authorization": f"Bearer {ADMIN}"}
    )
    assert response.status_code == 200, response.text
    return int(response.json()["total"])


def test_the_catalog_page_filters_and_pages_on_the_server(browser: Any, server: ServerProcess) -> None:
    total = catalog_total(server)
    assert total > 25, "enough entries to page through"
    page = open_page(browser, server)
    page.click("#nav a[data-page=catalog]")
    wait_ready(page, "catalog")
    rows = page.locator("tr[data-entry]")
    count = page.locator("#catalog-count")
    expect(count).to_have_text(f"{min(50, total)} of {total} shown")
    assert rows.count() == min(50, total), "one page drawn, not the catalog"

    page.select_option("#catalog-filters select[name=limit]", "25")
    expect(count).to_have_text(f"25 of {total} shown")
    first = rows.first.get_attribute("data-entry")
    page.click("#catalog-table .pager button >> text=next")
    expect(page.locator("#catalog-table .pager span")).to_have_text(f"26\N{EN DASH}{min(50, total)} of {total}")
    assert rows.first.get_attribute("data-entry") != first
    assert "offset=25" in page.url and "limit=25" in page.url

    page.select_option("#catalog-filters select[name=kind]", "cpu")
    cpus = catalog_total(server, kind="cpu")
    expect(count).to_have_text(f"{min(25, cpus)} of {cpus} shown")
    assert set(page.locator("tr[data-entry] td:nth-child(2)").all_inner_texts()) == {"cpu"}
    page.select_option("#catalog-filters select[name=vendor]", "Intel")
    page.fill("#catalog-filters input[name=min_year]", "2023")
    page.press("#catalog-filters input[name=min_year]", "Enter")
    recent = catalog_total(server, kind="cpu", vendor="Intel", min_year=2023)
    expect(count).to_have_text(f"{min(25, recent)} of {recent} shown")
    years = [int(y) for y in page.locator("tr[data-entry] td:nth-child(4)").all_inner_texts()]
    assert years and all(y >= 2023 for y in years)

    page.fill("#catalog-filters input[name=q]", "platinum")
    platinum = catalog_total(server, kind="cpu", vendor="Intel", min_year=2023, q="platinum")
    expect(count).to_have_text(f"{min(25, platinum)} of {platinum} shown")
    assert all("platinum" in t.lower() for t in rows.all_inner_texts())
    page.reload()  # the filters live in the address: a reload shows the same page
    wait_ready(page, "catalog")
    expect(count).to_have_text(f"{min(25, platinum)} of {platinum} shown")
    assert page.input_value("#catalog-filters input[name=q]") == "platinum"
    assert page.input_value("#catalog-filters select[name=vendor]") == "Intel"
    assert page.errors == []


def test_a_slow_answer_to_an_earlier_catalog_search_never_draws_over_a_newer_one(
    browser: Any, server: ServerProcess
) -> None:
    page = open_page(browser, server)
    page.click("#nav a[data-page=catalog]")
    wait_ready(page, "catalog")
    held: list[Any] = []

    def hold_the_first_h100_search(route: Any) -> None:
        if "q=h100" in route.request.url and not held:
            held.append(route)  # answered later, after the newer search has drawn
        else:
            route.continue_()

    page.route("**/api/v1/catalog?*", hold_the_first_h100_search)
    page.fill("#catalog-filters input[name=q]", "h100")
    for _ in range(250):  # until the route has the request (Playwright calls it while the test waits)
        if held:
            break
        page.wait_for_timeout(20)
    assert len(held) == 1
    page.fill("#catalog-filters input[name=q]", "a100")
    a100 = catalog_total(server, q="a100")
    expect(page.locator("#catalog-count")).to_have_text(f"{a100} of {a100} shown")
    with page.expect_response(lambda response: "q=h100" in response.url):
        held[0].continue_()
    page.wait_for_timeout(300)  # room for the late answer to be (wrongly) drawn
    assert page.inner_text("#catalog-count") == f"{a100} of {a100} shown"
    assert all("a100" in t.lower() for t in page.locator("tr[data-entry]").all_inner_texts())
    assert page.input_value("#catalog-filters input[name=q]") == "a100"
    assert page.errors == []


def test_one_workload_on_one_machine_every_runtime_precision_and_variant_and_variants_in_recommend(
    browser: Any, server: ServerProcess, screenshots: Path
) -> None:
    """DLBench's view: the runtimes page lists each runtime x precision x variant at one batch against
    the original in fp32 eager, with what could not run and why; the Recommend page offers variants
    only when asked, each with its caveat and what it is relative to the original."""
    with httpx.Client(base_url=server.url, timeout=30) as client:
        api = Api(client, ADMIN)
        spec = cpu_machine("node-runtimes")
        machine_id, token = api.enroll(spec)
        cpu = {"device": "cpu", "threads": 4, "power_source": "rapl"}
        failed = {key: None for key in NOT_MEASURED} | {"power_source": "none"}
        why_not = "LiteRT int8-static of the LSTM is not offered"
        results = [
            measured(8, 10, 100, runtime="torch-eager", precision="fp32", **cpu),
            measured(8, 20, 100, runtime="onnxruntime-cpu", precision="fp32", **cpu),
            measured(8, 31, 100, runtime="openvino", precision="int8", variant="int8-static", **cpu),
            measured(8, 25, 100, runtime="onnxruntime-cpu", precision="fp32", variant="pruned-50", **cpu),
            measured(1, 3, 100, runtime="torch-eager", precision="fp32", **cpu),
            result(**cpu | failed, runtime="litert", precision="int8", variant="int8-static", batch_size=8,
                   status="unsupported", reason=why_not),
        ]  # fmt: skip
        assert api.post_run(token, run_report(spec, results=results)).status_code == 201

    page = open_page(browser, server)
    page.goto(f"{server.url}/#/runtimes?machine={machine_id}&workload=resnet50&task=infer")
    wait_ready(page, "runtimes")
    assert page.input_value("#runtimes-batch") == "8"  # the batch with the most configs measured
    rows = page.locator("#runtimes-result tr.config")
    expect(rows).to_have_count(5)
    assert [r.get_attribute("data-config") for r in rows.all()] == [
        "openvino int8 int8-static",
        "onnxruntime-cpu fp32 pruned-50",
        "onnxruntime-cpu fp32 none",
        "torch-eager fp32 none",
        "litert int8 int8-static",
    ]
    first = rows.first.inner_text()
    assert "3.1x" in first and "speed only; check accuracy on your data" in first
    assert why_not in rows.last.inner_text()
    assert chart_points(page, "#chart-runtimes") == 4
    page.screenshot(path=str(screenshots / "9-runtimes.png"), full_page=True)

    spec_json = json.dumps({"workload": "resnet50", "task": "infer", "batch_size": 8, "scope": "owned",
                            "constraints": {"runtimes": ["openvino", "onnxruntime-cpu", "torch-eager"]}})  # fmt: skip
    page.goto(f"{server.url}/#/recommend?" + urlencode({"spec": spec_json}))
    wait_ready(page, "recommend")
    page.wait_for_selector("#recommend-result tr.candidate")
    assert "int8-static" not in page.inner_text("#recommend-result table")
    assert "allow_variants offers them" in page.inner_text("#notes")
    page.check("input[name=allow_variants]")
    page.check("input[name=variant][value=int8-static]")
    page.click("#recommend-submit")
    page.wait_for_selector("#recommend-result tr.candidate >> text=int8-static")
    variant_rows = page.locator("#recommend-result tr.candidate", has_text="int8-static")
    expect(variant_rows).to_have_count(1)
    text = variant_rows.first.inner_text()
    assert "speed only; check accuracy on your data" in text and "3.1x the fp32 torch-eager throughput" in text
    assert "pruned-50" not in page.inner_text("#recommend-result table")
    page.screenshot(path=str(screenshots / "10-recommend-variants.png"), full_page=True)
    assert page.errors == []
