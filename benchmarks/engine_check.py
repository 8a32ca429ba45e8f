"""The engine's figure against an independent measurement of the same work, side by side.

    .venv/bin/python -m benchmarks.engine_check [--rounds 3] [--runtime onnxruntime-cpu]
    python -m benchmarks.engine_check --device cuda:0 [--rounds 3]     # on a machine with a GPU

For five configs and a language model's prefill and decode, the engine (hwadvisor's harness and
runtime) and two independent measurements of the same work (a model, a KV cache and inputs built
here, timed by a plain perf_counter loop, and by torch.utils.benchmark's ``Timer.blocked_autorange``)
take turns, ``rounds`` times each, so that drift on a shared machine hits all alike. The ONNX Runtime
configs (one not torch: the same exported file, fp32 and statically quantised int8, in a session opened
here with the same thread settings) check the harness on a runtime that is not torch. The figures are the ratios of the
medians; the goal is within 5%. (blocked_autorange reports the median of block means, which an
occasional slow step pulls up; the plain loop's median of single steps is the like-for-like
comparison.)

On a GPU (``--device cuda:0``) the configs are GEMMs and models at a small and a large batch,
inference and training steps, each precision's kind of kernel. The plain loop there times each step
with its own pair of CUDA events after draining the queue, as the engine does, written here again;
torch.utils.benchmark's blocks synchronise only at their ends, so at a small batch, where the host
launching kernels is the bottleneck, its figure shows how much the queue would overlap steps.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections.abc import Callable

import torch
from torch.utils import benchmark

from app.bench.config import BenchConfig
from app.bench.measure import GPU_WARMUP_MIN_S
from app.bench.runner import run_config
from app.bench.workloads import get_workload
from app.contracts import MeasureSpec, Precision, Task
from app.probes import probe_machine


def configs(threads: int, only: str | None = None, device: str = "cpu") -> list[BenchConfig]:
    found = cuda_configs(device) if device != "cpu" else cpu_configs(threads)
    return [c for c in found if only is None or only in c.label()]


def cuda_configs(device: str) -> list[BenchConfig]:
    return [
        BenchConfig("gemm_8192", None, "torch-eager", device, Precision.bf16, 1),
        BenchConfig("gemm_8192", None, "torch-eager", device, Precision.fp32, 1),
        BenchConfig("resnet50", Task.infer, "torch-eager", device, Precision.fp32, 1),
        BenchConfig("resnet50", Task.infer, "torch-eager", device, Precision.bf16, 256),
        BenchConfig("bert_base", Task.infer, "torch-eager", device, Precision.fp16, 32),
        BenchConfig("resnet50", Task.train, "torch-eager", device, Precision.tf32, 64),
        BenchConfig("bert_base", Task.train, "torch-eager", device, Precision.bf16, 32),
        BenchConfig("lstm", Task.infer, "torch-eager", device, Precision.fp32, 32),
    ]


def cpu_configs(threads: int) -> list[BenchConfig]:
    return [
        BenchConfig("gemm_1024", Task.infer, "torch-eager", "cpu", Precision.fp32, 1, threads),
        BenchConfig("resnet50", Task.infer, "torch-eager", "cpu", Precision.fp32, 1, threads),
        BenchConfig("lstm", Task.infer, "torch-eager", "cpu", Precision.fp32, 16, threads),
        BenchConfig("llama_135m", Task.prefill, "torch-eager", "cpu", Precision.fp32, 1, threads, context=128),
        BenchConfig("llama_135m", Task.decode, "torch-eager", "cpu", Precision.fp32, 4, threads, context=512),
        BenchConfig("llama_135m", Task.decode, "torch-eager", "cpu", Precision.bf16, 1, threads, context=512),
        BenchConfig("resnet50", Task.infer, "onnxruntime-cpu", "cpu", Precision.fp32, 1, threads),
        BenchConfig(
            "resnet50", Task.infer, "onnxruntime-cpu", "cpu", Precision.int8, 1, threads, variant="int8-static"
        ),
    ]


def generation_step(config: BenchConfig) -> Callable[[], object]:
    """Prefill or decode written plainly from the architecture: the model built in the dtype, a KV
    cache of the context (decode: filled, plus the new token's slot), greedy next token."""
    from app.bench.models.llama import KvCache, LlamaModel
    from app.contracts import LLM_PRESETS

    assert config.context is not None and config.task is not None
    shape = LLM_PRESETS[config.workload].shape
    dtype = torch.bfloat16 if config.precision is Precision.bf16 else torch.float32
    model = LlamaModel(shape, dtype=dtype).eval()
    decode = config.task is Task.decode
    cache = KvCache.allocate(shape, config.batch_size, config.context + decode, dtype=dtype)
    for tensor in cache.keys + cache.values:
        tensor.normal_()
    ids = torch.randint(0, shape.vocabulary, (config.batch_size, 1 if decode else config.context))
    start = config.context if decode else 0

    def step() -> object:
        with torch.inference_mode():
            return model(ids, cache=cache, start=start).argmax(-1)

    return step


def onnxruntime_step(config: BenchConfig) -> Callable[[], object]:
    """The exported file in a plain ONNX Runtime session: the threads as the runtime sets them, nothing else."""
    import onnxruntime

    from app.bench.onnx_export import model_path
    from app.bench.variants import workload_for

    workload = workload_for(config.workload, config.variant)
    quantised = (
        ("static" if config.variant == "int8-static" else "dynamic") if config.precision is Precision.int8 else None
    )
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = config.threads or 0
    options.inter_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        str(model_path(workload, quantised=quantised)), sess_options=options, providers=["CPUExecutionProvider"]
    )
    feed = {
        name: x.numpy() for name, x in zip(workload.info.input_names, workload.inputs(config.batch_size), strict=True)
    }
    return lambda: session.run(None, feed)


DTYPES = {Precision.bf16: torch.bfloat16, Precision.fp16: torch.float16}


def reference_step(config: BenchConfig) -> Callable[[], object]:
    """The same work, written plainly: no hwadvisor runtime involved. On a GPU tf32 is switched on
    for the tf32 configs and left so (the caller restores it), half precision is autocast."""
    if config.task in (Task.prefill, Task.decode):
        return generation_step(config)
    if config.runtime == "onnxruntime-cpu":
        return onnxruntime_step(config)
    device = torch.device(config.device)
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = config.precision is Precision.tf32
    dtype = DTYPES.get(config.precision)
    if config.workload.startswith("gemm_"):
        n = int(config.workload.split("_")[1])
        a, b = (torch.randn(n, n, device=device, dtype=dtype or torch.float32) for _ in range(2))
        return lambda: a @ b
    workload = get_workload(config.workload)
    model = workload.make().to(device)
    inputs = [x.to(device) for x in workload.inputs(config.batch_size)]
    if config.task is Task.train:
        targets = workload.targets(config.batch_size).to(device)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        scaler = torch.amp.GradScaler(device.type, enabled=dtype is torch.float16)

        def train() -> object:
            optimizer.zero_grad(set_to_none=True)
            with torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
                loss = workload.loss(model(*inputs), targets)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            return loss

        return train
    model.eval()

    def step() -> object:
        with torch.inference_mode(), torch.autocast(device.type, dtype=dtype, enabled=dtype is not None):
            return model(*inputs)

    return step


def one_step_s(step: Callable[[], object], device: torch.device) -> float:
    """One step's time: perf_counter on a CPU; on a GPU a pair of CUDA events after draining the queue."""
    if device.type != "cuda":
        start = time.perf_counter()
        step()
        return time.perf_counter() - start
    torch.cuda.synchronize(device)
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    step()
    end.record()
    end.synchronize()
    return begin.elapsed_time(end) / 1000


def reference_medians_ms(config: BenchConfig, seconds: float) -> tuple[float, float]:
    """(median of single steps in a plain loop, torch.utils.benchmark's median of block means)."""
    threads = config.threads or torch.get_num_threads()
    torch.set_num_threads(threads)
    device = torch.device(config.device)
    matmul, cudnn = torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32
    try:
        step = reference_step(config)
        for _ in range(3):
            step()
        settled = time.perf_counter() + (GPU_WARMUP_MIN_S if device.type == "cuda" else 0.0)
        while time.perf_counter() < settled:  # a GPU's clock, as the engine lets it settle
            step()
        times = []
        gc.collect()
        gc.disable()  # as the engine and timeit time steps: no collector pause inside one
        try:
            deadline = time.perf_counter() + seconds
            while time.perf_counter() < deadline or len(times) < 10:
                times.append(one_step_s(step, device))
        finally:
            gc.enable()
        timer = benchmark.Timer(stmt="step()", globals={"step": step}, num_threads=threads)
        blocked = float(timer.blocked_autorange(min_run_time=seconds).median)
    finally:
        torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = matmul, cudnn
    return statistics.median(times) * 1000, blocked * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=4.0, help="time budget per measurement")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--only", help="configs whose label contains this (llama_135m: the language model's)")
    parser.add_argument("--runtime", help="only the configs of this runtime (torch-eager, onnxruntime-cpu)")
    parser.add_argument("--device", default="cpu", help="cpu, or a GPU (cuda:0): its GEMM and model configs")
    args = parser.parse_args()
    machine = probe_machine()
    measure = MeasureSpec(time_budget_s=args.seconds, warmup_budget_s=1.0)
    print(f"{'config':<72} {'engine':>8} {'loop':>8} {'ratio':>6} {'t.u.b':>8} {'ratio':>6}  (median ms)")
    for config in configs(args.threads, args.only, args.device):
        if args.runtime and config.runtime != args.runtime:
            continue
        engine, loop, blocked = [], [], []
        for _ in range(args.rounds):
            result = run_config(config, machine, measure)
            assert result.latency_p50_ms is not None, result.reason
            engine.append(result.latency_p50_ms)
            plain, tub = reference_medians_ms(config, args.seconds)
            loop.append(plain)
            blocked.append(tub)
        ours, plain, tub = statistics.median(engine), statistics.median(loop), statistics.median(blocked)
        print(f"{config.label():<72} {ours:>8.2f} {plain:>8.2f} {ours / plain:>6.3f} {tub:>8.2f} {ours / tub:>6.3f}")


if __name__ == "__main__":
    main()
