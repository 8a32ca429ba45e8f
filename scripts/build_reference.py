"""Build a reference run (app/catalog/data/reference/) from the database exports of a GPU machine's runs.

    python scripts/build_reference.py EXPORT.jsonl [EXPORT.jsonl ...] --out app/catalog/data/reference

Each export is what `hwadvisor db export` wrote on the machine after benchmarks/gpu_truth.sh (kept in
benchmarks/data/gpu_truth/). The reference holds the machine's spec, every run with how the engine
measured then (HARNESS), and every result. Each run had a machine of its own, or the machine of a run
before it minutes later (the agent, stopped at a session's time, left its job to the next run): every
run's settled result of a config stands (the recommender states the part's figure as their median, the
band how far runs of the part measured apart); where one run measured a config twice, its later result
stands and the earlier is kept but not settled. A result is settled when it was measured with the GPU
minimums (app/bench/measure.py) or its median step came after the first quarter second of the config
(SETTLE_S: the H200's clock had dropped to its power-capped level by then, benchmarks/gpu_clocks.py).
Energy measured before the NVML meter read the counter's steps is dropped (its regions were shorter
than one step of the counter).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.contracts import MachineSpec, PowerSource, Result, ResultStatus
from app.contracts.catalog import ReferenceResult, ReferenceRun, ReferenceRunInfo

SETTLE_S = 0.25
WARMUP_STEPS = 10
"""The warm-up the first run's harness ended after (two windows of five steps that agreed)."""
HARNESS = {
    "gpu_truth": "0.4 s warm-up and sampling budgets, before the GPU minimums: warm-up ended when two windows of "
    "five steps agreed; energy dropped (its regions were shorter than one 100 ms step of NVML's counter)",
    "gpu_recheck": "at least 1 s of warm-up and 1 s of sampling on the GPU; energy from the rate between the "
    "NVML counter's steps",
    "gpu_reference": "at least 0.5 s of warm-up and 0.5 s of sampling on the GPU; energy from the rate between the "
    "NVML counter's steps",
    "gpu_batches": "gpu_reference's harness, at the batches between its own (benchmarks/gpu_batches.toml)",
    "gpu_batches_recheck": "gpu_reference's harness: inference at batch 32 again (benchmarks/gpu_batches_recheck.toml)",
    "gpu_batch1_recheck": "gpu_reference's harness: inference at batch 1 again (benchmarks/gpu_batch1_recheck.toml)",
    "gpu_second_machine": "gpu_reference's harness on another machine: inference at batch 1 again, then the batches "
    "between (benchmarks/gpu_second_machine.toml)",
}
NOTES = [
    "Measured by hwadvisor's own agent path on a lent machine (server, agent, job, upload; benchmarks/gpu_truth.sh), "
    "random weights, torch eager unless the runtime says otherwise.",
]
GRAPH_RUNTIMES_MISSING = (
    "onnxruntime-cuda and tensorrt are recorded unsupported: their libraries (onnxruntime-gpu, TensorRT) were not "
    "on the machine and could not be carried to it."
)
INT8_LAYOUT = (
    "int8 GEMM through torch._int_mm: {row} TOP/s with B row-major, {nt} with B transposed (gemm_8192_nt), the "
    "layout cuBLASLt's int8 kernels take."
)
MACHINES_DIFFER = (
    "Each run had a machine of its own (the GPUs' UUIDs differ), of the same kind: figures the host's CPU "
    "bounds (batch 1) differ between them, BERT-base fp32 at batch 1 by a third."
)
MACHINES_MEASURED = (
    "{machines}. Of the eager model configs two runs measured with the GPU minimums, the faster "
    "over the slower: {spread}. Where the host's CPU bounds the step (small batches), the machine moves the figure far "
    "more than the measurement's interval says: the part's figure is the median of its runs'."
)
OWN_MACHINES = "Each run had a machine of its own (the GPUs' UUIDs differ), of the same kind"
SHARED_MACHINES = (
    "{runs} runs on {machines} machines (GPU UUIDs): a run whose agent was stopped at the session's time left its job "
    "to the next run on the same machine, which measured its first configs again; the machines of the same kind"
)

ABOVE_LIMIT = (
    "{n} settled results read a mean power above the board's {limit:.0f} W limit, up to {most:.0f} W: NVML's energy "
    "counter steps every 100 ms, so a half-second region spans about five steps and the rate between them can read "
    "a few percent high; the limit holds as an average over a longer window."
)


def notes(runs: list[ReferenceRunInfo], results: list[ReferenceResult], limit_w: float | None) -> list[str]:
    """What a reader of the run should know, said only where the run shows it."""
    said = list(NOTES)
    if any(
        r.result.runtime in ("onnxruntime-cuda", "tensorrt") and r.result.status is not ResultStatus.ok for r in results
    ):
        said.append(GRAPH_RUNTIMES_MISSING)
    int8 = {
        r.result.workload: r.result.achieved_tflops
        for r in results
        if r.settled and r.result.precision.value == "int8" and r.result.achieved_tflops
    }
    if {"gemm_8192", "gemm_8192_nt"} <= int8.keys():
        said.append(INT8_LAYOUT.format(row=round(int8["gemm_8192"]), nt=round(int8["gemm_8192_nt"])))
    uuids = len({r.gpu_uuid for r in runs})
    if uuids > 1:
        spread = machine_spread(runs, results)
        machines = OWN_MACHINES if uuids == len(runs) else SHARED_MACHINES.format(runs=len(runs), machines=uuids)
        said.append(MACHINES_MEASURED.format(machines=machines, spread=spread) if spread else MACHINES_DIFFER)
    above = [
        r.result.mean_power_w or 0.0 for r in results if r.settled and (r.result.mean_power_w or 0.0) > (limit_w or 1e9)
    ]
    if above and limit_w:
        said.append(ABOVE_LIMIT.format(n=len(above), limit=limit_w, most=max(above)))
    return said


def machine_spread(runs: list[ReferenceRunInfo], results: list[ReferenceResult]) -> str:
    """Per task and batch, how far two runs' measurements of one config differ (median and most), over the
    configs measured with the GPU minimums by more than one run; empty with none."""
    minimums = {r.id for r in runs if r.suite != "gpu_truth"}
    by_config: dict[tuple[str, int, tuple[object, ...]], list[float]] = {}
    for entry in results:
        r = entry.result
        if entry.run in minimums and r.task is not None and r.runtime == "torch-eager" and r.throughput_samples_per_s:
            by_config.setdefault((r.task.value, r.batch_size, key(r)), []).append(r.throughput_samples_per_s)
    ratios: dict[tuple[str, int], list[float]] = {}
    for (task, batch, _), measured in by_config.items():
        if len(measured) > 1:
            ratios.setdefault((task, batch), []).append(max(measured) / min(measured))
    return "; ".join(
        f"{task} batch {batch}, {len(found)} configs: {statistics.median(found):.2f}x median, up to {max(found):.2f}x"
        for (task, batch), found in sorted(ratios.items())
    )


def rows(path: Path, table: str) -> list[dict[str, Any]]:
    found = []
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        if entry.get("table") == table:
            found.append(entry["row"])
    return found


def key(result: Result) -> tuple[object, ...]:
    return (result.workload, result.task, result.runtime, result.precision, result.batch_size, result.context_tokens)


def build(exports: list[Path]) -> ReferenceRun:
    runs: list[ReferenceRunInfo] = []
    measured: list[tuple[str, Result, bool]] = []
    machines: list[MachineSpec] = []
    for export in exports:
        snapshots = {row["id"]: MachineSpec.model_validate(row["spec"]) for row in rows(export, "spec_snapshots")}
        for run in sorted(rows(export, "runs"), key=lambda r: r["started_at"]):
            spec = snapshots[run["spec_snapshot_id"]]
            machines.append(spec)
            gpu = spec.device("cuda:0")
            uuid = gpu.nvidia.uuid if gpu is not None and gpu.nvidia is not None else None
            runs.append(
                ReferenceRunInfo(id=run["id"], suite=run["suite"], harness=HARNESS[run["suite"]], gpu_uuid=uuid)
            )
            minimums = run["suite"] != "gpu_truth"
            for row in rows(export, "results"):
                if row["run_id"] != run["id"]:
                    continue
                result = Result.model_validate({k: v for k, v in row.items() if k in Result.model_fields})
                if not minimums:
                    result = result.model_copy(
                        update={
                            "mean_power_w": None,
                            "energy_per_sample_j": None,
                            "energy_per_token_j": None,
                            "power_source": PowerSource.none,
                        }
                    )
                settled = minimums or (
                    result.iterations is not None
                    and result.latency_p50_ms is not None
                    and (WARMUP_STEPS + result.iterations / 2) * result.latency_p50_ms / 1000 >= SETTLE_S
                )
                measured.append((run["id"], result, settled))
    machine = machines[0]
    latest = {(run, key(result)): index for index, (run, result, _) in enumerate(measured)}
    results = [
        ReferenceResult(run=run, result=result, settled=settled and latest[(run, key(result))] == index)
        for index, (run, result, settled) in enumerate(measured)
    ]
    gpu = machine.device("cuda:0")
    assert gpu is not None and gpu.catalog_id, "the machine's GPU matched no catalog entry"
    started = min(run["started_at"] for run in rows(exports[0], "runs"))[:10]
    return ReferenceRun(
        source=f"reference:hwadvisor-{gpu.catalog_id}",
        captured=started,
        hardware_id=gpu.catalog_id,
        machine=machine,
        runs=runs,
        results=results,
        notes=notes(runs, results, gpu.nvidia.power_limit_w if gpu.nvidia is not None else None),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("exports", type=Path, nargs="+")
    parser.add_argument("--out", type=Path, default=Path("app/catalog/data/reference"))
    args = parser.parse_args()
    reference = build(args.exports)
    target = args.out / f"{reference.hardware_id}-{reference.captured}.json"
    target.write_text(reference.model_dump_json(indent=1, exclude_none=True) + "\n")
    settled = sum(r.settled for r in reference.results)
    print(f"wrote {target}: {len(reference.results)} results from {len(reference.runs)} runs, {settled} settled")


if __name__ == "__main__":
    main()
