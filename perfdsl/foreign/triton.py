"""Triton kernels in a study: compiled ahead for a named GPU, archived, and launched as compiled.

`compile_kernel` calls Triton's compiler directly (`triton.compile(ASTSource(...),
target=GPUTarget("cuda", 90, 32))`), which needs no GPU, so a machine without one
still archives the PTX and cubin a Hopper GPU would run. On the GPU the study's
binding compiles the same source with the same options for the device's compute
capability and launches that `CompiledKernel` itself (`launcher`): the code
archived is the code timed, with none of the JIT's specialisation on argument
values in between, and every launch goes to the stream perfdsl hands over.

Triton's launcher takes raw device pointers as Python ints, so perfdsl's arrays
are handed to it through `__cuda_array_interface__` (`data_pointer`), with no
PyTorch tensor in between. Imported only by modules that use Triton.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource

from perfdsl.kernel import CudaStream, KernelCode

WARP_SIZE = 32


def compile_kernel(
    fn: Any,
    signature: Mapping[str, str],
    constexprs: Mapping[str, Any] | None = None,
    *,
    cc: tuple[int, int],
    aligned: Iterable[str] = (),
    num_warps: int = 4,
    num_stages: int = 3,
) -> Any:
    """Compile `fn` (a `@triton.jit` function) for compute capability `cc`; no device is touched.

    `signature` gives each runtime argument's Triton type (`"*fp32"`, `"i32"`, `"fp32"`);
    `constexprs` gives the value of each `tl.constexpr` argument. `aligned` names the
    arguments the caller promises are multiples of 16 (pointers: 16-byte aligned
    addresses), as Triton's JIT would find them at a launch: the compiler vectorises
    accesses it can prove aligned. Returns Triton's `CompiledKernel`, whose `asm`
    holds "ptx" and "cubin".
    """
    constexprs = dict(constexprs or {})
    full = {name: ("constexpr" if name in constexprs else signature[name]) for name in fn.arg_names}
    options = {"num_warps": num_warps, "num_stages": num_stages, "enable_fp_fusion": True}
    attributes = {(fn.arg_names.index(name),): [["tt.divisibility", 16]] for name in aligned}
    target = GPUTarget("cuda", cc[0] * 10 + cc[1], WARP_SIZE)
    source = ASTSource(fn, full, constexprs=constexprs, attrs=attributes)
    return triton.compile(source, target=target, options=options)


def kernel_code(compiled: Any) -> KernelCode:
    """A compiled kernel's PTX and cubin, under its entry name, as perfdsl archives them."""
    source = compiled.src
    arguments = ", ".join(
        f"{name}={source.constants[(i,)]!r}"
        if (i,) in source.constants
        else f"{name}: {source.signature[name]}{' (aligned 16)' if (i,) in source.attrs else ''}"
        for i, name in enumerate(source.fn.arg_names)
    )
    metadata = compiled.metadata
    return KernelCode(
        name=compiled.name,
        ptx=compiled.asm.get("ptx"),
        cubin=compiled.asm.get("cubin"),
        signature=f"{source.fn.__name__}({arguments}) num_warps={metadata.num_warps} "
        f"num_stages={metadata.num_stages}",
        compiler=f"triton {triton.__version__}",
    )


def data_pointer(array: Any) -> int:
    """The device address of an array exposing `__cuda_array_interface__`, as Triton's launcher takes it."""
    return int(array.__cuda_array_interface__["data"][0])


def launcher(compiled: Any, grid: tuple[int, int, int], stream: CudaStream) -> Callable[..., None]:
    """`launch(*args)` enqueues one run of `compiled` on `grid` on perfdsl's stream.

    `args` are every argument of the kernel in order, the constexprs included
    (Triton's launcher skips them); pointers as ints (`data_pointer`). Loading the
    module onto the device happens here, at binding, not in the first timed call.
    """
    run = compiled[grid]
    handle = stream.handle
    return lambda *args: run(*args, stream=handle)
