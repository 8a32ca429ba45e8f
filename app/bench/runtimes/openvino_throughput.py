"""OpenVINO with the throughput hint: the batch split over several infer requests in flight at once.

The latency hint (``openvino``) sizes the CPU plug-in for one request at a time; the throughput hint
makes it run several streams, each on its share of the cores, and is what OpenVINO's own
benchmark_app reports as throughput. Here a step is one batch of ``batch_size`` samples, split into
as many equal requests as the plug-in's optimal number of requests allows (a divisor of the batch),
started together on an asynchronous queue and waited for: the result's throughput is samples over
that step, its latency the whole batch's, so it compares with every other runtime's figures at the
same batch. At batch 1 there is one request and the hint buys nothing: measure it at a batch of
several.
"""

from __future__ import annotations

from typing import Any

from app.bench.config import BenchConfig
from app.bench.runtimes.base import Prepared, RuntimeInfo, runtimes
from app.bench.runtimes.openvino import OpenVino, compiled_model
from app.bench.workloads.base import Size, Workload


def requests_for(batch: int, optimal: int) -> int:
    """The most requests, at most ``optimal``, that split ``batch`` into equal parts."""
    return max(n for n in range(1, max(1, min(batch, optimal)) + 1) if batch % n == 0)


@runtimes.register
class OpenVinoThroughput(OpenVino):
    info = RuntimeInfo(
        name="openvino-throughput",
        description=(
            "OpenVINO CPU plug-in on the ONNX export; throughput hint, the batch split over the plug-in's optimal "
            "number of requests in flight; fp32, bf16, int8 (the int8-static variant: NNCF)"
        ),
        tasks=OpenVino.info.tasks,
        precisions=OpenVino.info.precisions,
        needs=OpenVino.info.needs,
        devices=OpenVino.info.devices,
        variant_kinds=OpenVino.info.variant_kinds,
    )

    def compile_config(self, config: BenchConfig) -> dict[str, Any]:
        """Several streams on their share of the cores (the config's threads in all, where given)."""
        return {**super().compile_config(config), "PERFORMANCE_HINT": "THROUGHPUT"}

    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        import openvino

        # the plug-in's optimal count, asked of the model compiled at the whole batch
        whole, inputs = compiled_model(self, config, workload, size, config.batch_size)
        jobs = requests_for(config.batch_size, int(whole.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")))
        per_request = config.batch_size // jobs
        # one request takes the whole batch: the model compiled for it already is the one to run
        compiled = whole if jobs == 1 else compiled_model(self, config, workload, size, per_request)[0]
        del whole
        queue = openvino.AsyncInferQueue(compiled, jobs)
        parts = [
            {
                name: openvino.Tensor(array[i * per_request : (i + 1) * per_request].copy())
                for name, array in inputs.items()
            }
            for i in range(jobs)
        ]

        def step() -> None:
            for part in parts:
                queue.start_async(part, share_inputs=True)
            queue.wait_all()

        return Prepared(step=step)
