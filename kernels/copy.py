"""The memory roofs, measured in the same run as a study's kernels: read, write and copy.

The element count is the product of every shape symbol, so the roofs can be
measured at any study's shape: 1-D, n = prod(shape). Bytes and launches:

    read   s = sum(x)   bytes 4*n (read)              launches 1
    write  y = 1        bytes 4*n (written)           launches 1
    copy   y = x        bytes 8*n (4*n read, 4*n written)

(n = N for a reduction, M*N for RMSNorm, R*C for transpose; 4 bytes per float32.)

Bytes are counted as a kernel's byte model counts them: what the kernel asks
to read and write. On a CPU every written line is first read into the cache
(write-allocate), so a store of 4 bytes moves 8: the write and copy roofs pay
that cost inside their time, exactly as a studied kernel's writes do, and a
kernel is held to the roof for its own read/write mix (`perfdsl.evaluate.roofs`).
Ordinary stores are used on purpose: Numba has no streaming stores, and the
kernels studied here do not use them either.

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
READ_BLOCKS = 2048
"""Blocks of the read roof: enough to fill any current GPU many times over, few enough
that one atomic add per block is nothing beside the reads."""

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


@cuda.jit
def read_kernel(x, s):
    """Each thread sums a grid-strided slice (ILP loads in flight); the block reduces its
    threads' sums in shared memory and adds one value to s: one atomic per block, so the
    atomics (at most READ_BLOCKS of them) are noise beside the reads."""
    partial = cuda.shared.array(BLOCK, numba.float32)
    step = cuda.gridDim.x * cuda.blockDim.x
    t = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + t
    n = x.size
    acc = numba.float32(0)
    while i + 3 * step < n:
        acc += x[i] + x[i + step] + x[i + 2 * step] + x[i + 3 * step]
        i += 4 * step
    while i < n:
        acc += x[i]
        i += step
    partial[t] = acc
    cuda.syncthreads()
    width = BLOCK // 2
    while width > 0:
        if t < width:
            partial[t] += partial[t + width]
        cuda.syncthreads()
        width //= 2
    if t == 0:
        cuda.atomic.add(s, 0, partial[0])


@cuda.jit
def write_kernel(y):
    """Block b writes ones over [b*ILP*BLOCK, (b+1)*ILP*BLOCK): ILP coalesced stores per thread."""
    step = cuda.blockDim.x
    i = cuda.blockIdx.x * ILP * step + cuda.threadIdx.x
    n = y.size
    for _ in range(ILP):
        if i < n:
            y[i] = 1
        i += step


def _read_cuda(stream: Any, x: Any, s: Any) -> None:
    # s accumulates over calls: a roof's result is never read, and resetting it would time a memset.
    blocks = max(1, min(-(-x.size // (ILP * BLOCK)), READ_BLOCKS))
    read_kernel[blocks, BLOCK, stream](x, s)


def _write_cuda(stream: Any, y: Any) -> None:
    write_kernel[-(-y.size // (ILP * BLOCK)), BLOCK, stream](y)


@numba.njit(parallel=True, nogil=True)
def copy_cpu(x, y):
    """y = x over all cores."""
    for i in prange(x.size):
        y[i] = x[i]


@numba.njit(parallel=True, nogil=True, fastmath=True)
def read_cpu(x, s):
    """s[0] = sum(x) over all cores; fastmath lets LLVM vectorise the sum, as it does RMSNorm's."""
    acc = 0.0
    for i in prange(x.size):
        acc += x[i]
    s[0] = acc


@numba.njit(parallel=True, nogil=True)
def write_cpu(y):
    """y = 1 over all cores."""
    for i in prange(y.size):
        y[i] = 1


def _inputs(shape: Shape, rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    return {"x": rng.standard_normal(math.prod(shape.values())).astype(dtype)}


def _outputs(shape: Shape) -> dict[str, tuple[int, ...]]:
    return {"y": (math.prod(shape.values()),)}


def _compute(x: np.ndarray) -> dict[str, np.ndarray]:
    return {"y": x.copy()}


reference = Reference(name="copy", inputs=_inputs, outputs=_outputs, compute=_compute)


def _read_outputs(shape: Shape) -> dict[str, tuple[int, ...]]:
    return {"s": (1,)}


def _read_compute(x: np.ndarray) -> dict[str, np.ndarray]:
    return {"s": np.array([x.astype(np.float64).sum()])}


def _write_inputs(shape: Shape, rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    return {}


def _write_compute() -> dict[str, np.ndarray]:
    # Roofs are timed, never checked against their reference: with no input the
    # expected output has no size to take, and the roof tests check `write` directly.
    raise TypeError("the write roof has no reference output: it is timed, not checked")


read_reference = Reference(name="read", inputs=_inputs, outputs=_read_outputs, compute=_read_compute)
"""The read roof's problem: x in, one scalar out."""

write_reference = Reference(name="write", inputs=_write_inputs, outputs=_outputs, compute=_write_compute)
"""The write roof's problem: nothing in, y out (every element 1)."""

copy = Variant(
    name="copy",
    cpu=copy_cpu,
    cuda=_copy_cuda,
    cuda_kernels=((copy_kernel, _SIG),),
    cpu_kernels=((copy_cpu, _SIG),),
    read_share=0.5,
)

read = Variant(
    name="read",
    cpu=read_cpu,
    cuda=_read_cuda,
    cuda_kernels=((read_kernel, _SIG),),
    cpu_kernels=((read_cpu, _SIG),),
    read_share=1.0,
    # A parallel sum's order depends on the split among threads.
    deterministic=False,
)

write = Variant(
    name="write",
    cpu=write_cpu,
    cuda=_write_cuda,
    cuda_kernels=((write_kernel, "void({dtype}[::1])"),),
    cpu_kernels=((write_cpu, "void({dtype}[::1])"),),
    read_share=0.0,
)

ROOFS = {"read": (read_reference, read), "write": (write_reference, write), "copy": (reference, copy)}
"""Each roof's arm name, problem and kernel: the runtime times all three beside a study's kernels."""
