"""Copy, y = x: the device-memory roof, measured in the same run as a study's kernels.

The element count is the product of every shape symbol, so the roof can be
measured at any study's shape: 1-D, n = prod(shape). Modelled bytes and launches:

    copy   bytes 8*n   launches 1      (n = N for a reduction, M*N for RMSNorm, R*C for transpose)

Access width, cuda: 4-byte scalar loads and stores, `ILP` = 4 independent
loads in flight per thread, each a coalesced warp-wide access: the width of the
best kernels here (RMSNorm's row sweeps and the reduction's four chains), so a
fraction of this roof measures a kernel's structure, not Numba's load width.
cpu: one parallel loop that LLVM vectorises to the CPU's widest loads and
stores, the same width as the fastmath RMSNorm loops.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numba import cuda, prange

from perfdsl.kernel import Reference, Shape, Variant

BLOCK = 256
ILP = 4

_SIG = "void({dtype}[::1], {dtype}[::1])"


@cuda.jit
def copy_kernel(x, y):
    """Block b copies elements [b*ILP*BLOCK, (b+1)*ILP*BLOCK): ILP loads first, then the stores."""
    step = cuda.blockDim.x
    i = cuda.blockIdx.x * ILP * step + cuda.threadIdx.x
    n = x.size
    if i + 3 * step < n:
        v0 = x[i]
        v1 = x[i + step]
        v2 = x[i + 2 * step]
        v3 = x[i + 3 * step]
        y[i] = v0
        y[i + step] = v1
        y[i + 2 * step] = v2
        y[i + 3 * step] = v3
    else:
        while i < n:
            y[i] = x[i]
            i += step


def _copy_cuda(stream: Any, x: Any, y: Any) -> None:
    copy_kernel[-(-x.size // (ILP * BLOCK)), BLOCK, stream](x, y)


@numba.njit(parallel=True, nogil=True)
def copy_cpu(x, y):
    """y = x over all cores."""
    for i in prange(x.size):
        y[i] = x[i]


def _inputs(shape: Shape, rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    return {"x": rng.standard_normal(math.prod(shape.values())).astype(dtype)}


def _outputs(shape: Shape) -> dict[str, tuple[int, ...]]:
    return {"y": (math.prod(shape.values()),)}


def _compute(x: np.ndarray) -> dict[str, np.ndarray]:
    return {"y": x.copy()}


reference = Reference(name="copy", inputs=_inputs, outputs=_outputs, compute=_compute)

copy = Variant(
    name="copy",
    cpu=copy_cpu,
    cuda=_copy_cuda,
    cuda_kernels=((copy_kernel, _SIG),),
    cpu_kernels=((copy_cpu, _SIG),),
)
