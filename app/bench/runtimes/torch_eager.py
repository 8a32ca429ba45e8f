"""PyTorch eager: the model as its authors run it, autocast for bf16/fp16, tf32 switched per config."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING

from app.bench.config import BenchConfig
from app.bench.needs import TORCH
from app.bench.runtimes.base import Prepared, Runtime, RuntimeInfo, runtimes
from app.bench.workloads.base import Size, Workload
from app.bench.workloads.llama import LlmWorkload
from app.contracts import MachineSpec, Precision, Task

if TYPE_CHECKING:
    import torch


@runtimes.register
class TorchEager(Runtime):
    info = RuntimeInfo(
        name="torch-eager",
        description="PyTorch eager mode; bf16/fp16 through autocast, tf32 through the matmul switch",
        tasks=(Task.infer.value, Task.train.value, Task.prefill.value, Task.decode.value),
        precisions=("fp32", "tf32", "bf16", "fp16"),
        needs=(TORCH,),
    )

    @classmethod
    def software(cls) -> dict[str, str]:
        facts = super().software()
        if "torch" not in facts:
            return facts
        import torch

        facts["torch.num_threads"] = str(torch.get_num_threads())
        if torch.version.cuda:
            facts["torch.cuda"] = torch.version.cuda
        if torch.backends.cudnn.is_available():
            facts["torch.cudnn"] = str(torch.backends.cudnn.version())
        for backend in ("mkldnn", "mkl", "openmp"):
            facts[f"torch.{backend}"] = str(getattr(torch.backends, backend).is_available()).lower()
        for line in torch.__config__.parallel_info().splitlines():
            key, sep, value = line.partition(":")
            if sep and key.strip() in ("ATen parallel backend", "MKL_NUM_THREADS", "OMP_NUM_THREADS"):
                facts[f"torch.{key.strip().replace(' ', '_')}"] = value.strip()[:200]
        return facts

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        from app.bench.torch_support import precision_unsupported

        if config.precision is Precision.int4 or (
            config.precision is Precision.int8 and config.task in (Task.prefill, Task.decode)
        ):
            from app.bench.gguf_export import STORED

            return (
                f"a language model's {config.precision.value} is llama.cpp's weight-only "
                f"{STORED[config.precision]} here: runtime llama-cpp"
            )
        if config.device == "cpu" and config.precision is Precision.fp16 and config.task is Task.train:
            from app.bench.workloads import workloads

            if config.workload in workloads and workloads.get(config.workload).info.recurrent:
                return (
                    "oneDNN has no fp16 LSTM training primitive on a CPU (torch 2.13 cannot create one, even "
                    "where the CPU has fp16 arithmetic): train the recurrent models in fp32 or bf16 here"
                )
        if config.precision is Precision.int8:
            return (
                "int8 models run in the graph runtimes here: ONNX Runtime's quantization (runtime onnxruntime-cpu), "
                "openvino and litert"
            )
        return precision_unsupported(config, machine)

    def wrap(self, model: torch.nn.Module) -> torch.nn.Module:
        return model

    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        import torch

        from app.bench.torch_support import (
            AUTOCAST_DTYPES,
            device_sync,
            peak_device_memory_mb,
            tensor_float32,
            use_threads,
        )

        device = torch.device(config.device)
        use_threads(config, device)
        if isinstance(workload, LlmWorkload):
            workload.use_context(config.context)
            if config.task in (Task.prefill, Task.decode):
                return self._generation(config, workload, size, device)
        model = workload.make(size).to(device)
        inputs = tuple(x.to(device) for x in workload.inputs(config.batch_size, size))
        dtype = AUTOCAST_DTYPES.get(config.precision)

        def autocast() -> AbstractContextManager[object]:
            return torch.autocast(device.type, dtype=dtype) if dtype is not None else nullcontext()

        tf32 = tensor_float32(config.precision is Precision.tf32)
        tf32.__enter__()
        compiled = self.wrap(model)
        if config.task is Task.train:
            model.train()
            targets = workload.targets(config.batch_size, size).to(device)
            optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
            scaler = torch.amp.GradScaler(device.type, enabled=config.precision is Precision.fp16)

            def step() -> object:
                optimizer.zero_grad(set_to_none=True)
                with autocast():
                    loss = workload.loss(compiled(*inputs), targets)
                scaler.scale(loss).backward()
                scaler.step(optimizer)
                scaler.update()
                return loss

        else:
            model.eval()

            def step() -> object:
                with torch.inference_mode(), autocast():
                    return compiled(*inputs)

        compile_time = self.first_call(step) if compiled is not model else None
        sync, timer = device_sync(device)

        def close() -> None:
            tf32.__exit__(None, None, None)

        llm = isinstance(workload, LlmWorkload)
        context = workload.context_length(size) if isinstance(workload, LlmWorkload) else None
        return Prepared(
            step=step,
            sync=sync,
            timer=timer,
            compile_time_s=compile_time,
            peak_device_memory_mb=lambda: peak_device_memory_mb(device),
            close=close,
            tokens_per_step=config.batch_size * context if llm and context else None,
            context=context,
        )

    def _generation(self, config: BenchConfig, workload: LlmWorkload, size: Size, device: torch.device) -> Prepared:
        """Prefill or decode: the model stored in the precision's dtype (serving keeps bf16/fp16
        weights; autocast would cast every weight on every token), over a static KV cache."""
        import torch

        from app.bench.torch_support import device_sync, peak_device_memory_mb

        assert config.task is not None
        dtype = {Precision.bf16: torch.bfloat16, Precision.fp16: torch.float16}.get(config.precision, torch.float32)
        made = workload.generation(
            config.task, config.batch_size, size=size, dtype=dtype, device=device, wrap=self.wrap
        )
        compiled = type(self).wrap is not TorchEager.wrap
        compile_time = self.first_call(made.step) if compiled else None
        sync, timer = device_sync(device)
        return Prepared(
            step=made.step,
            sync=sync,
            timer=timer,
            compile_time_s=compile_time,
            peak_device_memory_mb=lambda: peak_device_memory_mb(device),
            tokens_per_step=made.tokens_per_step,
            context=made.context,
            kv_cache_bytes=made.kv_cache_bytes,
        )

    @staticmethod
    def first_call(step: Callable[[], object]) -> float:
        import torch

        start = time.perf_counter()
        step()
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return time.perf_counter() - start
