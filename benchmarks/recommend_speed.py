"""How fast a recommendation answers over the whole catalog, 1,000 lab machines and 100,000 results.

    .venv/bin/python -m benchmarks.recommend_speed [--machines 1000] [--per-machine 100] [--rounds 20]
                                                   [--db PATH] [--profile]

Seeds a fleet through a real server process as agents would (benchmarks.dashboard_scale.seed: H100,
A100, L4 and CPU-only machines, 100 results each, on SQLite), then asks each recommendation below
``--rounds`` times through `POST /api/v1/recommendations` on that server, and again in this process
(app.recommender.engine.recommend on the same database), and prints the median and p95 of each;
then, in process, each ask's first answer after every cache is emptied (the table built, as after
any change to what it reads); then ``--together`` threads asking the first ask at once after its table
is dropped (as after a new result: the model's predictions kept), each thread's answer timed: one
table built for all of them, since session 40, or one per thread before.
The goal (issue "Performance model"): p95 under 100 ms. With ``--db PATH`` the seeded database is
kept there and reused by the next run (seeding takes minutes); ``--profile`` prints where the
in-process time of the first ask's first answer goes (its table built: until session 39 it profiled an
answer from the built table, which says nothing of the build).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import statistics
import tempfile
import threading
import time
from pathlib import Path

import httpx

from app.contracts import WorkloadSpec
from app.db import migrate
from app.db.engine import Database
from app.perfmodel.predict import forget
from app.recommender import engine
from benchmarks.dashboard_scale import seed
from testkit.processes import ADMIN, ServerProcess

ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}
ASKS: dict[str, dict[str, object]] = {
    "resnet50 infer, catalog, 300 W": {
        "workload": "resnet50",
        "task": "infer",
        "objective": "throughput",
        "scope": "catalog",
        "constraints": {"power_budget_w": 300},
        "limit": 50,
    },
    "bert_base infer, catalog, cost": {
        "workload": "bert_base",
        "task": "infer",
        "objective": "cost_per_million_samples",
        "scope": "catalog",
        "limit": 50,
    },
    "resnet50 train, catalog": {
        "workload": "resnet50",
        "task": "train",
        "objective": "throughput",
        "scope": "catalog",
        "limit": 50,
    },
    "resnet50 train, catalog, 8 devices": {
        "workload": "resnet50",
        "task": "train",
        "objective": "throughput",
        "scope": "catalog",
        "constraints": {"device_count": 8, "min_throughput_samples_per_s": 20000},
        "limit": 50,
    },
    "custom, catalog": {
        "task": "infer",
        "objective": "throughput",
        "scope": "catalog",
        "custom": {"name": "my-net", "flops_per_sample": 8e9, "bytes_per_sample": 4e8, "parameters": 25_000_000},
        "limit": 50,
    },
    "resnet50 infer, owned fleet": {
        "workload": "resnet50",
        "task": "infer",
        "objective": "throughput",
        "scope": "owned",
        "limit": 50,
    },
}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def over_http(base: str, rounds: int) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in ASKS}
    with httpx.Client(base_url=base, timeout=60, headers=ADMIN_HEADERS) as http:
        for name, ask in ASKS.items():
            warm = http.post("/api/v1/recommendations", json=ask)  # the catalog and profiles read once
            if warm.status_code != 200:
                raise SystemExit(f"{name}: {warm.status_code} {warm.text}")
            for _ in range(rounds):
                started = time.perf_counter()
                http.post("/api/v1/recommendations", json=ask).raise_for_status()
                times[name].append(time.perf_counter() - started)
    return times


def in_process(url: str, rounds: int, profile: bool) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each ask's answers with its table built (``rounds`` times), and its first answer, which builds
    the table as after any change to what it reads (three times, every cache emptied before each)."""
    db = Database(url)
    times: dict[str, list[float]] = {name: [] for name in ASKS}
    builds: dict[str, list[float]] = {name: [] for name in ASKS}
    try:
        for name, ask in ASKS.items():
            spec = WorkloadSpec.model_validate(ask)
            for _ in range(3):
                engine.tables.clear()
                forget()
                with db.reading() as session:
                    started = time.perf_counter()
                    engine.recommend(session, spec)
                    builds[name].append(time.perf_counter() - started)
            if profile:  # the first ask's first answer, its table built, as after any change to what it reads
                engine.tables.clear()
                forget()
                with db.reading() as session:
                    profiler = cProfile.Profile()
                    profiler.runcall(engine.recommend, session, spec)
                print(f"\nprofile: {name}, its table built")
                pstats.Stats(profiler).sort_stats("cumulative").print_stats(25)
                profile = False
            for _ in range(rounds):
                with db.reading() as session:
                    started = time.perf_counter()
                    answer = engine.recommend(session, spec)
                    times[name].append(time.perf_counter() - started)
            print(f"  {name}: {len(answer.candidates)} listed, {len(answer.rejected)} rejected")
    finally:
        db.dispose()
    return times, builds


def together(url: str, askers: int, rounds: int = 3) -> dict[str, list[float]]:
    """Each thread's answer to the first ask, ``askers`` threads asking at once after the table is dropped
    (its predictions kept, as after a new result), ``rounds`` times."""
    name = next(iter(ASKS))
    spec = WorkloadSpec.model_validate(ASKS[name])
    db = Database(url)
    times: list[float] = []
    try:
        with db.reading() as session:
            engine.recommend(session, spec)  # the model's predictions made and kept

        def ask(start: threading.Barrier) -> None:
            with db.reading() as session:
                start.wait()
                started = time.perf_counter()
                engine.recommend(session, spec)
                times.append(time.perf_counter() - started)

        for _ in range(rounds):
            engine.tables.clear()
            start = threading.Barrier(askers)
            threads = [threading.Thread(target=ask, args=(start,)) for _ in range(askers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    finally:
        db.dispose()
    return {f"{name}, {askers} at once": times}


def report(title: str, times: dict[str, list[float]]) -> None:
    print(f"\n{title} (milliseconds)")
    print(f"  {'ask':<42} {'median':>8} {'p95':>8}")
    for name, values in times.items():
        print(f"  {name:<42} {1000 * statistics.median(values):8.1f} {1000 * p95(values):8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--machines", type=int, default=1000)
    parser.add_argument("--per-machine", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--db", type=Path, help="Keep the seeded SQLite database here and reuse it next time.")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--together", type=int, default=4, metavar="K", help="threads asking at once after a change")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = args.db or Path(tmp) / "hwadvisor.db"
        url = f"sqlite:///{path}"
        fresh = not path.exists()
        migrate.upgrade(url)
        server = ServerProcess(url, Path(tmp)).start()
        try:
            if fresh:
                seed(server.url, args.machines, args.per_machine)
            http_times = over_http(server.url, args.rounds)
        finally:
            server.stop()
        process_times, builds = in_process(url, args.rounds, args.profile)
        at_once = together(url, args.together) if args.together > 1 else {}
    report(f"POST /api/v1/recommendations on a real server, {args.rounds} rounds", http_times)
    report(f"engine.recommend in process, {args.rounds} rounds", process_times)
    report("engine.recommend in process, first answer after a change (builds the table), 3 rounds", builds)
    if at_once:
        report("engine.recommend in process, askers at once after a new result (each one's answer), 3 rounds", at_once)


if __name__ == "__main__":
    main()
