"""A user's kernels module outside kernels/, with a planted bug, for `perfdsl run`'s failure path.

The operation is y = 2 * x over a vector. Both variants walk x in blocks of
BLOCK elements. `good` covers the tail with a partial last block; `off_by_one`
sizes its grid with floor instead of ceiling division, so the last partial
block is never launched and the last N % BLOCK elements of y are never
written: right on every length that is a multiple of BLOCK, wrong on any
other. The study in this folder checks it on such a length, so the run must
record the failure (shape and seed) and not time the variant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import cuda, prange

from perfdsl.kernel import AppContext, Application, Reference, Shape, Variant

BLOCK = 256
_SIG = "void({dtype}[::1], {dtype}[::1])"


@cuda.jit
def scale_kernel(x, y):
    """One thread per element; the bounds check covers a partial last block."""
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < x.size:
        y[i] = 2 * x[i]


@numba.njit(parallel=True)
def scale_blocks_cpu(x, y, blocks):
    """Blocks of BLOCK elements over all cores; the last block may be partial."""
    for b in prange(blocks):
        for i in range(b * BLOCK, min((b + 1) * BLOCK, x.size)):
            y[i] = 2 * x[i]


def _good_blocks(n: int) -> int:
    return -(-n // BLOCK)


def _short_blocks(n: int) -> int:
    """The planted bug: floor division drops the last, partial block."""
    return n // BLOCK


def _variant(name: str, blocks: Callable[[int], int]) -> Variant:
    def cpu(x: np.ndarray, y: np.ndarray) -> None:
        scale_blocks_cpu(x, y, blocks(x.size))

    def run_cuda(stream: Any, x: Any, y: Any) -> None:
        grid = blocks(x.size)
        if grid:
            scale_kernel[grid, BLOCK, stream](x, y)

    return Variant(
        name=name,
        cpu=cpu,
        cuda=run_cuda,
        cuda_kernels=((scale_kernel, _SIG),),
        cpu_kernels=((scale_blocks_cpu, "void({dtype}[::1], {dtype}[::1], int64)"),),
    )


def _inputs(shape: Shape, rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    return {"x": rng.standard_normal(shape["N"]).astype(dtype)}


def _outputs(shape: Shape) -> dict[str, tuple[int, ...]]:
    return {"y": (shape["N"],)}


def _compute(x: np.ndarray) -> dict[str, np.ndarray]:
    return {"y": 2 * x}


def _prepare(ctx: AppContext) -> Callable[[], np.ndarray]:
    """One scale of a fixed vector per request, on the host or the device."""
    host = ctx.rng.standard_normal(ctx.shape["N"]).astype(ctx.dtype)
    if ctx.target == "cpu":
        x, y = host, np.empty_like(host)

        def fetch() -> np.ndarray:
            return y.copy()
    else:
        x, y = cuda.to_device(host), cuda.device_array_like(host)

        def fetch() -> np.ndarray:
            return y.copy_to_host()

    def request() -> np.ndarray:
        ctx.op(x=x, y=y)
        return fetch()

    return request


reference = Reference(name="scale", inputs=_inputs, outputs=_outputs, compute=_compute)
good = _variant("good_scale", _good_blocks)
off_by_one = _variant("off_by_one_scale", _short_blocks)
application = Application(name="scale_app", prepare=_prepare)
