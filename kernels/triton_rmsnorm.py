"""RMSNorm fused in Triton: the same operation as kernels.rmsnorm, written beyond Numba.

y[i, j] = x[i, j] * w[j] / sqrt(mean_j(x[i, :]^2) + eps), float32, one program per
row sweeping it in chunks of BLOCK columns twice (sum of squares, then scale), so
any row length works; the second sweep rereads the row from L1/L2, as the Numba
fused kernel does. Modelled bytes and launches are kernels.rmsnorm's `fused`:
4*(2*M*N + N) bytes, one launch.

How it meets perfdsl's contract (`perfdsl.kernel`, `Variant.cuda_bind`): the binding
compiles the kernel ahead (perfdsl.foreign.triton) for the GPU it runs on and
launches that compiled binary on perfdsl's stream with the arrays' raw pointers,
once bound per buffer set. Two specialisations exist, under two names so that the
archive and Nsight Compute tell them apart: `rmsnorm_triton_aligned_kernel` where
N is a multiple of 16 (rows start 64-byte aligned, so loads vectorise to 128
bits) and `rmsnorm_triton_kernel` otherwise. `cuda_code` hands both over.

Needs Triton (the `triton` extra) to be imported; `perfdsl check` never imports it.
"""

from __future__ import annotations

import functools
from typing import Any

import triton
import triton.language as tl

from kernels.rmsnorm import EPS
from perfdsl.foreign.triton import compile_kernel, data_pointer, kernel_code, launcher
from perfdsl.kernel import CudaStream, KernelCode, Variant

BLOCK = 1024
"""Columns per chunk: 128 threads (4 warps) x 8 floats, two 128-bit loads a thread."""
NUM_WARPS = 4
_SIGNATURE = {"x_ptr": "*fp32", "w_ptr": "*fp32", "y_ptr": "*fp32", "n_cols": "i32", "eps": "fp32"}
_POINTERS = ("x_ptr", "w_ptr", "y_ptr")


@triton.jit
def _rmsnorm_row(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0)
        acc += x * x
    inv_rms = 1.0 / tl.sqrt_rn(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0)
        tl.store(y_row + cols, x * w * inv_rms, mask=mask)


@triton.jit
def rmsnorm_triton_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    _rmsnorm_row(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK)


@triton.jit
def rmsnorm_triton_aligned_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    _rmsnorm_row(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK)


@functools.cache
def _compiled(aligned: bool, cc: tuple[int, int]) -> Any:
    """One specialisation for one GPU, compiled once per process (bindings share it)."""
    kernel = rmsnorm_triton_aligned_kernel if aligned else rmsnorm_triton_kernel
    promised = _POINTERS + (("n_cols",) if aligned else ())
    return compile_kernel(kernel, _SIGNATURE, {"BLOCK": BLOCK}, cc=cc, aligned=promised, num_warps=NUM_WARPS)


def _code(dtype: str, cc: tuple[int, int]) -> tuple[KernelCode, ...]:
    if dtype != "float32":
        raise ValueError(f"the Triton RMSNorm is float32 only, not {dtype}")
    return tuple(kernel_code(_compiled(aligned, cc)) for aligned in (False, True))


def _bind(stream: CudaStream, x: Any, w: Any, y: Any) -> Any:
    from numba import cuda

    cc = tuple(cuda.get_current_device().compute_capability)
    for name, array in (("x", x), ("w", w), ("y", y)):
        if data_pointer(array) % 16:
            raise ValueError(f"`{name}` is not 16-byte aligned: the kernels are compiled for aligned ones")
    m, n = x.shape
    launch = launcher(_compiled(n % 16 == 0, cc), (m, 1, 1), stream)
    args = (data_pointer(x), data_pointer(w), data_pointer(y), n, float(EPS), BLOCK)
    return lambda: launch(*args)


fused = Variant(name="triton_fused", cuda_bind=_bind, cuda_code=_code)
