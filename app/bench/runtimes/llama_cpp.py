"""llama.cpp through its Python binding (llama-cpp-python), on a GGUF the project writes from its own
random weights (app/bench/gguf_export.py): the runtime people serve language models with on CPUs.

Prefill and decode of the Llama-style family, one sequence (the binding's ``Llama`` holds one):

- prefill: the prompt's ``context`` token ids evaluated from position 0 in one batch (the KV cache
  cleared first), the last position's logits out: what the time to first token is made of;
- decode: the KV cache filled with ``context`` tokens once; each step evaluates one token at position
  ``context`` and the next step overwrites it, so every timed step is one output token at that context.

No tokeniser runs (token ids go in, as in the torch runtimes) and no sampling: the step ends with the
logits. fp32, fp16 and bf16 store the linear weights in that type (llama.cpp computes in what the CPU
offers: F16 weights are widened on a CPU without fp16 arithmetic); int8 and int4 are llama.cpp's Q8_0
and Q4_0, weight-only 8 and 4 bits (the activations stay floating point), which the torch runtimes do
not offer. The KV cache is llama.cpp's default F16.

On a CPU where llama.cpp turns on its AMX kernels (``AMX_INT8 = 1`` in its system info: Sapphire
Rapids and later), the model loads without llama.cpp's extra buffer types (the AMX and repacked
weight layouts): with them, llama-cpp-python 0.3.36 crashes (a segmentation fault in the first
evaluation) on every Q8_0 and Q4_0 model, at the tests' tiny size and at 135M parameters alike; the
weights are then read in the GGUF's own layout, as on a CPU without AMX.

CPU only: this build of the binding is the CPU one (a CUDA build needs ``CMAKE_ARGS=-DGGML_CUDA=on``
at install).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from app.bench.config import BenchConfig
from app.bench.runtimes.base import Prepared, Runtime, RuntimeInfo, runtimes
from app.bench.workloads.base import Size, Workload
from app.bench.workloads.llama import LlmWorkload
from app.contracts import MachineSpec, Precision, Task
from app.registry import Need

LLAMA_INSTALL = (
    "pip install 'llama-cpp-python==0.3.*' 'gguf==0.19.*' (it compiles llama.cpp: a few minutes), "
    "or ./scripts/setup on Linux x86-64"
)
PRECISIONS = (Precision.fp32, Precision.fp16, Precision.bf16, Precision.int8, Precision.int4)


@runtimes.register
class LlamaCpp(Runtime):
    info = RuntimeInfo(
        name="llama-cpp",
        description=(
            "llama.cpp (llama-cpp-python) on a GGUF of the zoo's language models with their random weights; "
            "prefill and decode of one sequence; fp32, fp16, bf16; int8 = Q8_0 and int4 = Q4_0, weight-only"
        ),
        tasks=(Task.prefill.value, Task.decode.value),
        precisions=tuple(p.value for p in PRECISIONS),
        needs=(
            Need("llama_cpp", "llama-cpp-python", install=LLAMA_INSTALL),
            Need("gguf", "gguf", install=LLAMA_INSTALL),
        ),
        devices=("cpu",),
        variant_kinds=(),
    )

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        if config.device != "cpu":
            return "llama-cpp is installed as the CPU build here (a CUDA build needs CMAKE_ARGS=-DGGML_CUDA=on)"
        if config.task not in (Task.prefill, Task.decode):
            return (
                f"llama-cpp measures the language models' prefill and decode, not {config.task and config.task.value}"
            )
        if config.batch_size != 1:
            return (
                "llama-cpp runs one sequence at a time here (llama-cpp-python's Llama holds one): use batch 1; "
                "batched decode is the torch runtimes'"
            )
        if config.precision not in PRECISIONS:
            return f"llama-cpp stores weights in {', '.join(p.value for p in PRECISIONS)}, not {config.precision.value}"
        return None

    def prepare(self, config: BenchConfig, workload: Workload, size: Size) -> Prepared:
        import llama_cpp

        from app.bench.gguf_export import KV_BYTES, gguf_path

        if not isinstance(workload, LlmWorkload):
            raise ValueError(f"llama-cpp runs the Llama-style family, not {workload.info.name}")
        assert config.task is not None
        workload.use_context(config.context)
        context = workload.context_length(size)
        shape = workload.shape(size)
        decode = config.task is Task.decode
        length = context + decode
        with _without_extra_buffers(_amx()):
            model = llama_cpp.Llama(
                str(gguf_path(workload, size, config.precision)),
                n_ctx=length,
                n_batch=max(length, 32),
                n_ubatch=max(length, 32),
                n_threads=config.threads,
                n_threads_batch=config.threads,
                logits_all=False,
                verbose=False,
            )
        ids = [3 + (i * 7919) % (shape.vocabulary - 3) for i in range(length)]  # past the special pieces
        if decode:
            model.eval(ids[:context])

        def step() -> None:
            model.n_tokens = context if decode else 0  # eval clears the cache from here on
            model.eval(ids[context:] if decode else ids)

        return Prepared(
            step=step,
            close=model.close,
            tokens_per_step=1 if decode else context,
            context=context,
            kv_cache_bytes=int(shape.kv_cache_bytes(length, 1, KV_BYTES)),
        )


def _amx() -> bool:
    """Whether llama.cpp runs its AMX kernels on this CPU (its own system info says so)."""
    import llama_cpp

    return "AMX_INT8 = 1" in llama_cpp.llama_print_system_info().decode(errors="replace")


@contextmanager
def _without_extra_buffers(active: bool) -> Iterator[None]:
    """Models loaded inside take ``use_extra_bufts = False`` when ``active`` (see the module docstring):
    llama-cpp-python's ``Llama`` does not expose the field, and reads the defaults it starts from here."""
    if not active:
        yield
        return
    import llama_cpp.llama_cpp as bindings

    defaults = bindings.llama_model_default_params

    def without() -> Any:
        params = defaults()
        params.use_extra_bufts = False
        return params

    bindings.llama_model_default_params = without
    try:
        yield
    finally:
        bindings.llama_model_default_params = defaults
