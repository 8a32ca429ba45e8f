"""C = A @ B with n x n matrices, per precision; int8 through torch._int_mm (CUDA only).

The ``_nt`` sizes multiply by B transposed (B stored row-major, read as its transpose: the layout of
a linear layer's weight), which BLAS libraries take as a flag rather than a copy; a figure well
below the plain product's says the library's transposed kernels are the slower ones."""

from __future__ import annotations

from typing import ClassVar

from app.bench.config import BenchConfig
from app.bench.primitives.base import PreparedPrimitive, Primitive, PrimitiveInfo, primitives
from app.contracts import MATH_PRECISIONS, MachineSpec, Precision

PRECISIONS = tuple(p.value for p in MATH_PRECISIONS)


class Gemm(Primitive):
    n: ClassVar[int]
    transposed: ClassVar[bool] = False

    def unsupported(self, config: BenchConfig, machine: MachineSpec) -> str | None:
        from app.bench.torch_support import precision_unsupported

        if config.device == "cpu" and config.precision is Precision.int8:
            return "int8 GEMM is measured on CUDA (torch._int_mm); the CPU has no such kernel in torch"
        return precision_unsupported(config, machine)

    def prepare(self, config: BenchConfig) -> PreparedPrimitive:
        import torch

        from app.bench.torch_support import device_sync, tensor_float32, use_threads

        dtypes = {
            Precision.fp32: torch.float32,
            Precision.tf32: torch.float32,
            Precision.bf16: torch.bfloat16,
            Precision.fp16: torch.float16,
        }
        device = torch.device(config.device)
        use_threads(config, device)
        generator = torch.Generator(device="cpu").manual_seed(0)
        if config.precision is Precision.int8:
            a = torch.randint(-128, 127, (self.n, self.n), dtype=torch.int8, generator=generator).to(device)
            b = torch.randint(-128, 127, (self.n, self.n), dtype=torch.int8, generator=generator).to(device)
            b = b.t() if self.transposed else b

            def step() -> object:
                return torch._int_mm(a, b)

        else:
            dtype = dtypes[config.precision]
            a = torch.randn(self.n, self.n, generator=generator).to(device=device, dtype=dtype)
            b = torch.randn(self.n, self.n, generator=generator).to(device=device, dtype=dtype)
            b = b.t() if self.transposed else b

            def step() -> object:
                return a @ b

        tf32 = tensor_float32(config.precision is Precision.tf32)
        tf32.__enter__()

        def close() -> None:
            tf32.__exit__(None, None, None)

        sync, timer = device_sync(device)
        return PreparedPrimitive(step, sync, timer, 2.0 * self.n**3, "flop", close, device)


def _info(n: int, *, transposed: bool = False) -> PrimitiveInfo:
    return PrimitiveInfo(
        name=f"gemm_{n}_nt" if transposed else f"gemm_{n}",
        description=f"{n}x{n} matrix multiply" + (", B transposed" if transposed else ""),
        precisions=PRECISIONS,
        unit="TFLOP/s",
    )


@primitives.register
class Gemm1024(Gemm):
    info, n = _info(1024), 1024


@primitives.register
class Gemm2048(Gemm):
    info, n = _info(2048), 2048


@primitives.register
class Gemm4096(Gemm):
    info, n = _info(4096), 4096


@primitives.register
class Gemm8192(Gemm):
    info, n = _info(8192), 8192


@primitives.register
class Gemm8192Transposed(Gemm):
    info, n, transposed = _info(8192, transposed=True), 8192, True
