"""The block-wide sum shared by the CUDA kernels: a tree in shared memory.

Warp shuffles would save the last five `syncthreads` steps, but Numba's CUDA
simulator has no warp-level operations, and the simulator is how these kernels
are checked on machines without a GPU; shared memory works on both.

Device functions are declared `inline="always"` so that Numba inlines them into
the kernel before compiling: `numba.cuda.compile_ptx` then needs no GPU (a call
to a separately compiled device function asks the driver for the current
device), and a shared array passed to a helper keeps its shared address space.
"""

from __future__ import annotations

from typing import Any

import numba
from numba import cuda

MAX_THREADS = 256
"""The most threads a block using `block_sum_*` may have; the count must be a power of two."""


def _make_block_sum(accumulator: Any) -> Any:
    """A device function summing one value per thread over the block, in `accumulator` precision."""

    @cuda.jit(device=True, inline="always")
    def block_sum(value):
        partial = cuda.shared.array(MAX_THREADS, accumulator)
        t = cuda.threadIdx.x
        partial[t] = value
        cuda.syncthreads()
        half = cuda.blockDim.x // 2
        while half > 0:
            if t < half:
                partial[t] += partial[t + half]
            cuda.syncthreads()
            half //= 2
        total = partial[0]
        # Every thread must read the total before a second call reuses the array.
        cuda.syncthreads()
        return total

    return block_sum


block_sum_f32 = _make_block_sum(numba.float32)
"""Sum over the block in float32; every thread gets the total."""

block_sum_f64 = _make_block_sum(numba.float64)
"""Sum over the block in float64; every thread gets the total."""
