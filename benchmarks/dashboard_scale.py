"""Every dashboard page with 1,000 machines and 100,000 results, in real headless Chromium.

    .venv/bin/python -m benchmarks.dashboard_scale [--machines 1000] [--per-machine 100] [--postgres URL]

Seeds the fleet through the API as agents would (enrol, approve, upload one run of ``per-machine``
results each: resnet50, bert_base, lstm, mobilenet_v2 and alexnet inference at several batches,
precisions and runtimes, on H100, A100, L4 and CPU-only machines), then loads each page (fleet,
a machine with its charts, compare, recommend with the whole fleet plus the catalog, jobs, catalog)
``--rounds`` times and reports the median and worst time from navigation to the page drawn
(the page sets body[data-ready] after its last API answer is rendered and its charts drawn).
The figure is the page's own clock: performance.now() when it is drawn, counted from the start
of the navigation (body[data-ready-ms]); the harness's wall time around it adds Playwright's polling
and is printed beside it. The goal is under 1 s per page on loopback.
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlencode

import httpx

from app.contracts import Result
from app.db import migrate
from testkit.browser import launch
from testkit.factories import Api, run_report
from testkit.lab import cpu_machine, gpu_machine, measured
from testkit.processes import ADMIN, ServerProcess

PARTS = ["h100-sxm5-80gb", "a100-sxm4-80gb", "l4", None]
WORKLOADS = ["resnet50/infer", "bert_base/infer", "lstm/infer", "mobilenet_v2/infer", "alexnet/infer"]
ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}


def _results(part: str | None, n: int) -> list[Result]:
    scale = {"h100-sxm5-80gb": 8.0, "a100-sxm4-80gb": 4.5, "l4": 1.0, None: 0.05}[part]
    device = "cpu" if part is None else "cuda:0"
    runtimes = ["onnxruntime-cpu", "torch-eager"] if part is None else ["torch-eager", "torch-compile"]
    precisions = ["fp32", "bf16"] if part is not None else ["fp32", "int8"]
    out: list[Result] = []
    for workload, runtime, precision, batch in itertools.product(WORKLOADS, runtimes, precisions, [1, 4, 16, 64, 256]):
        if len(out) == n:
            break
        throughput = scale * 1000 * (batch / (batch + 8)) * (1.6 if precision != "fp32" else 1.0)
        power = (
            None
            if part is None
            else {"h100-sxm5-80gb": 600, "a100-sxm4-80gb": 380, "l4": 70}[part] * (0.5 + batch / 512)
        )
        extra = {"threads": 8, "power_source": "rapl"} if part is None else {}
        out.append(
            measured(
                batch,
                throughput,
                power or 150.0,
                workload=workload,
                runtime=runtime,
                precision=precision,
                device=device,
                **extra,
            )
        )
    return out


def seed(base: str, machines: int, per_machine: int) -> str:
    with httpx.Client(base_url=base, timeout=60) as http:

        def one(i: int) -> str:
            part = PARTS[i % len(PARTS)]
            name = f"node-{i:04d}"
            spec = cpu_machine(name) if part is None else gpu_machine(part, name)
            with httpx.Client(base_url=base, timeout=60) as client:
                api = Api(client, ADMIN)
                machine_id, token = api.enroll(spec)
                api.post_run(token, run_report(spec, results=_results(part, per_machine))).raise_for_status()
                return str(machine_id)

        with ThreadPoolExecutor(8) as pool:
            ids = list(pool.map(one, range(machines)))
        total = http.get("/api/v1/results?limit=1", headers=ADMIN_HEADERS).json()["total"]
        print(f"seeded {machines} machines, {total} results")
        for i in range(20):
            http.post("/api/v1/jobs", json={"suite": "quick", "machine_id": ids[i]}, headers=ADMIN_HEADERS)
        return ids[0]


ASK = {
    "workload": "resnet50",
    "task": "infer",
    "objective": "throughput",
    "scope": "catalog",
    "constraints": {"power_budget_w": 400},
    "limit": 50,
}


def measure(base: str, machine_id: str, second: str, rounds: int) -> dict[str, list[float]]:
    from playwright.sync_api import sync_playwright

    pages = {
        "fleet": "#/fleet",
        "machine": f"#/machine/{machine_id}",
        "compare": "#/compare?"
        + urlencode({"hw": f"m:{machine_id},m:{second},c:h200-sxm-141gb", "workload": "resnet50", "task": "infer"}),
        "recommend": "#/recommend?" + urlencode({"spec": json.dumps(ASK)}),
        "jobs": "#/jobs",
        "catalog": "#/catalog",
    }
    timings: dict[str, list[float]] = {name: [] for name in pages}
    harness: dict[str, list[float]] = {name: [] for name in pages}
    with sync_playwright() as playwright:
        browser = launch(playwright)
        page = browser.new_page(viewport={"width": 1500, "height": 1000})
        page.goto(base + "/")
        page.fill("#token", ADMIN)
        page.click("#login button[type=submit]")
        page.wait_for_selector("body[data-ready=fleet]")
        for _ in range(rounds):
            for name, fragment in pages.items():
                page.goto("about:blank")
                start = time.perf_counter()
                page.goto(base + "/" + fragment)
                page.wait_for_selector(f"body[data-ready={name}]", timeout=60_000)
                harness[name].append(time.perf_counter() - start)
                timings[name].append(float(page.evaluate("document.body.dataset.readyMs")) / 1000)
        browser.close()
    return {name: timings[name] + [max(harness[name])] for name in pages}


def in_process(url: str, rounds: int) -> dict[str, list[float]]:
    """The recommendation the Recommend page asks for, computed in this process on the same data:
    as shipped (the cyclic garbage collector held while the answer is built), and with it running."""
    from app.contracts import WorkloadSpec
    from app.db.engine import Database
    from app.recommender import engine

    spec = WorkloadSpec.model_validate(ASK)
    db = Database(url)
    times: dict[str, list[float]] = {"collector held": [], "collector running": []}
    try:
        for _ in range(rounds):
            for name, ask in (("collector held", engine.recommend), ("collector running", engine._recommend)):
                with db.reading() as session:
                    started = time.perf_counter()
                    ask(session, spec)
                    times[name].append(time.perf_counter() - started)
    finally:
        db.dispose()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machines", type=int, default=1000)
    parser.add_argument("--per-machine", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--postgres", help="Also on this PostgreSQL database (emptied first).")
    args = parser.parse_args()
    targets = [("sqlite", None)] + ([("postgresql", args.postgres)] if args.postgres else [])
    for backend, url in targets:
        with tempfile.TemporaryDirectory() as tmp:
            data = Path(tmp)
            if url is None:
                url = f"sqlite:///{data / 'hwadvisor.db'}"
            else:
                migrate.downgrade(url, "base")
            migrate.upgrade(url)
            server = ServerProcess(url, data).start()
            try:
                first = seed(server.url, args.machines, args.per_machine)
                machines = httpx.get(f"{server.url}/api/v1/machines?limit=2", headers=ADMIN_HEADERS).json()["items"]
                timings = measure(server.url, first, machines[1]["id"], args.rounds)
            finally:
                server.stop()
            computed = in_process(url, args.rounds)
        print(f"\n{backend}: navigation start to page drawn, {args.rounds} rounds (seconds)")
        for name, values in timings.items():
            drawn, wall = values[:-1], values[-1]
            print(
                f"  {name:<10} median {statistics.median(drawn):.3f}  worst {max(drawn):.3f}"
                f"  (harness wall time, worst: {wall:.3f})"
            )
        print(f"{backend}: the recommendation computed in process, {args.rounds} rounds (seconds)")
        for name, values in computed.items():
            print(f"  {name:<18} median {statistics.median(values):.3f}  best {min(values):.3f}")


if __name__ == "__main__":
    main()
