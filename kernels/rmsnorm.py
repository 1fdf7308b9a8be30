"""RMSNorm, y[i, j] = x[i, j] * w[j] / sqrt(mean_j(x[i, :]^2) + eps), float32.

Modelled device-memory bytes (compulsory traffic, each read and write counted
once) and launches, over x (M, N) and w (N,); the same on "cuda" and "cpu" (on
the CPU a launch is one parallel Numba call):

    unfused   bytes 4*(5*M*N + 2*M + N)   launches 3
              1. square: read x, write an M x N workspace of x^2     2*M*N
              2. reduce: read the workspace, write 1/rms per row      M*N + M
              3. scale:  read x, w and 1/rms, write y                 2*M*N + M + N
    fused     bytes 4*(2*M*N + N)          launches 1
              read x and w, write y; the second sweep over a row rereads
              it from L1/L2 (one row is at most N*4 bytes), not from DRAM

Launch geometry (cuda): one block per row for every kernel, so the two
variants differ only in what the study is about (bytes and launches). A
block has `_row_block(N)` threads, a power of two from 32 to 256; each thread
keeps `ILP` = 4 independent 4-byte loads in flight (Numba emits scalar loads,
so per-thread ILP is what lets a row sweep approach the copy roof; `copy`
uses the same width). The row sum is a float32 tree in shared memory.
"""

from __future__ import annotations

import math
from typing import Any

import numba
import numpy as np
from numba import cuda, prange

from kernels.block_reduce import MAX_THREADS, block_sum_f32
from kernels.workspace import device_scratch, host_scratch
from perfdsl.kernel import Reference, Shape, Variant

EPS = np.float32(1e-6)
ILP = 4
WARP = 32

_SIG_SQUARE = "void(float32[:, ::1], float32[:, ::1])"
_SIG_REDUCE = "void(float32[:, ::1], float32[::1])"
_SIG_SCALE = "void(float32[:, ::1], float32[::1], float32[::1], float32[:, ::1])"
_SIG_FUSED = "void(float32[:, ::1], float32[::1], float32[:, ::1])"


# Element functions shared by the CUDA kernels and the CPU functions.


@numba.njit(inline="always")
def square(v):
    """x^2: what the fused kernel sums and the unfused one materialises."""
    return v * v


@numba.njit(inline="always")
def same(v):
    """The workspace's elements as they are: the unfused reduction sums squares already made."""
    return v


@numba.njit(inline="always")
def inv_rms(sum_of_squares, n):
    """1 / sqrt(mean + eps), kept in float32 (a float64 constant would promote the row)."""
    return np.float32(1.0) / math.sqrt(sum_of_squares / np.float32(n) + EPS)


@numba.njit(inline="always")
def scale(v, inv, weight):
    """One output element: x * (1 / rms) * w."""
    return v * inv * weight


# CUDA: per-thread row sweeps, ILP elements in flight, `blockDim.x` apart so
# that each of the ILP loads of a warp is coalesced.


def _make_thread_sum(element: Any) -> Any:
    """A device function: this thread's share of sum(element(row[j]))."""

    @cuda.jit(device=True, inline="always")
    def thread_sum(row):
        step = cuda.blockDim.x
        n = row.size
        j = cuda.threadIdx.x
        acc0 = acc1 = acc2 = acc3 = np.float32(0.0)
        while j + 3 * step < n:
            acc0 += element(row[j])
            acc1 += element(row[j + step])
            acc2 += element(row[j + 2 * step])
            acc3 += element(row[j + 3 * step])
            j += ILP * step
        while j < n:
            acc0 += element(row[j])
            j += step
        return (acc0 + acc1) + (acc2 + acc3)

    return thread_sum


_thread_sum_of_squares = _make_thread_sum(square)
_thread_sum = _make_thread_sum(same)


@cuda.jit(device=True, inline="always")
def _square_row(row, out):
    step = cuda.blockDim.x
    n = row.size
    j = cuda.threadIdx.x
    while j + 3 * step < n:
        v0 = row[j]
        v1 = row[j + step]
        v2 = row[j + 2 * step]
        v3 = row[j + 3 * step]
        out[j] = square(v0)
        out[j + step] = square(v1)
        out[j + 2 * step] = square(v2)
        out[j + 3 * step] = square(v3)
        j += ILP * step
    while j < n:
        out[j] = square(row[j])
        j += step


@cuda.jit(device=True, inline="always")
def _scale_row(row, w, inv, out):
    step = cuda.blockDim.x
    n = row.size
    j = cuda.threadIdx.x
    while j + 3 * step < n:
        # All loads before any store: `out` may alias `row` as far as the compiler knows.
        v0 = row[j]
        v1 = row[j + step]
        v2 = row[j + 2 * step]
        v3 = row[j + 3 * step]
        w0 = w[j]
        w1 = w[j + step]
        w2 = w[j + 2 * step]
        w3 = w[j + 3 * step]
        out[j] = scale(v0, inv, w0)
        out[j + step] = scale(v1, inv, w1)
        out[j + 2 * step] = scale(v2, inv, w2)
        out[j + 3 * step] = scale(v3, inv, w3)
        j += ILP * step
    while j < n:
        out[j] = scale(row[j], inv, w[j])
        j += step


@cuda.jit
def rmsnorm_square_kernel(x, workspace):
    """Unfused launch 1: workspace = x^2, materialised in device memory."""
    row = cuda.blockIdx.x
    if row < x.shape[0]:
        _square_row(x[row], workspace[row])


@cuda.jit
def rmsnorm_reduce_kernel(workspace, inv):
    """Unfused launch 2: inv[i] = 1 / rms of row i, reread from the workspace."""
    row = cuda.blockIdx.x
    if row < workspace.shape[0]:
        total = block_sum_f32(_thread_sum(workspace[row]))
        if cuda.threadIdx.x == 0:
            inv[row] = inv_rms(total, workspace.shape[1])


@cuda.jit
def rmsnorm_scale_kernel(x, w, inv, y):
    """Unfused launch 3: y = x * inv * w, rereading x from device memory."""
    row = cuda.blockIdx.x
    if row < x.shape[0]:
        _scale_row(x[row], w, inv[row], y[row])


@cuda.jit
def rmsnorm_fused_kernel(x, w, y):
    """One block per row: sum of squares on chip, then scale the row the block just read."""
    row = cuda.blockIdx.x
    if row < x.shape[0]:
        total = block_sum_f32(_thread_sum_of_squares(x[row]))
        _scale_row(x[row], w, inv_rms(total, x.shape[1]), y[row])


def _row_block(n: int) -> int:
    """Threads per row: ILP elements each, a power of two (the tree needs one) in [32, 256]."""
    wanted = -(-n // ILP)
    return min(MAX_THREADS, max(WARP, 1 << (wanted - 1).bit_length()))


def _unfused_cuda(stream: Any, x: Any, w: Any, y: Any) -> None:
    m, n = x.shape
    workspace = device_scratch("rmsnorm.workspace", (m, n), np.float32)
    inv = device_scratch("rmsnorm.inv", (m,), np.float32)
    threads = _row_block(n)
    rmsnorm_square_kernel[m, threads, stream](x, workspace)
    rmsnorm_reduce_kernel[m, threads, stream](workspace, inv)
    rmsnorm_scale_kernel[m, threads, stream](x, w, inv, y)


def _fused_cuda(stream: Any, x: Any, w: Any, y: Any) -> None:
    rmsnorm_fused_kernel[x.shape[0], _row_block(x.shape[1]), stream](x, w, y)


# CPU: the same passes. fastmath lets LLVM vectorise every row sum, so that no
# pass is limited by a serial add chain and the variants differ only in bytes.


@numba.njit(inline="always")
def _scale_row_cpu(row, w, inv, out):
    for j in range(row.size):
        out[j] = scale(row[j], inv, w[j])


@numba.njit(parallel=True, fastmath=True, nogil=True)
def rmsnorm_square_cpu(x, workspace):
    """Unfused pass 1: workspace = x^2."""
    for i in prange(x.shape[0]):
        for j in range(x.shape[1]):
            workspace[i, j] = square(x[i, j])


@numba.njit(parallel=True, fastmath=True, nogil=True)
def rmsnorm_reduce_cpu(workspace, inv):
    """Unfused pass 2: inv[i] = 1 / rms of row i, reread from the workspace."""
    for i in prange(workspace.shape[0]):
        total = np.float32(0.0)
        for j in range(workspace.shape[1]):
            total += workspace[i, j]
        inv[i] = inv_rms(total, workspace.shape[1])


@numba.njit(parallel=True, fastmath=True, nogil=True)
def rmsnorm_scale_cpu(x, w, inv, y):
    """Unfused pass 3: y = x * inv * w, rereading x."""
    for i in prange(x.shape[0]):
        _scale_row_cpu(x[i], w, inv[i], y[i])


@numba.njit(parallel=True, fastmath=True, nogil=True)
def rmsnorm_fused_cpu(x, w, y):
    """One pass per row: the row is still in cache when it is scaled."""
    for i in prange(x.shape[0]):
        total = np.float32(0.0)
        for j in range(x.shape[1]):
            total += square(x[i, j])
        _scale_row_cpu(x[i], w, inv_rms(total, x.shape[1]), y[i])


def _unfused_cpu(x: np.ndarray, w: np.ndarray, y: np.ndarray) -> None:
    m, n = x.shape
    workspace = host_scratch("rmsnorm.workspace", (m, n), np.float32)
    inv = host_scratch("rmsnorm.inv", (m,), np.float32)
    rmsnorm_square_cpu(x, workspace)
    rmsnorm_reduce_cpu(workspace, inv)
    rmsnorm_scale_cpu(x, w, inv, y)


# The operation.


def _inputs(shape: Shape, rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    m, n = shape["M"], shape["N"]
    return {
        "x": rng.standard_normal((m, n)).astype(dtype),
        "w": rng.uniform(0.5, 1.5, n).astype(dtype),
    }


def _outputs(shape: Shape) -> dict[str, tuple[int, ...]]:
    return {"y": (shape["M"], shape["N"])}


def _compute(x: np.ndarray, w: np.ndarray) -> dict[str, np.ndarray]:
    mean_square = np.mean(x * x, axis=1, keepdims=True)
    return {"y": x * w / np.sqrt(mean_square + float(EPS))}


reference = Reference(name="rmsnorm", inputs=_inputs, outputs=_outputs, compute=_compute)

unfused = Variant(
    name="unfused",
    cpu=_unfused_cpu,
    cuda=_unfused_cuda,
    cuda_kernels=(
        (rmsnorm_square_kernel, _SIG_SQUARE),
        (rmsnorm_reduce_kernel, _SIG_REDUCE),
        (rmsnorm_scale_kernel, _SIG_SCALE),
    ),
    cpu_kernels=(
        (rmsnorm_square_cpu, _SIG_SQUARE),
        (rmsnorm_reduce_cpu, _SIG_REDUCE),
        (rmsnorm_scale_cpu, _SIG_SCALE),
    ),
    # x -> workspace, workspace -> inv, (x, inv) -> y: three M*N reads for two M*N writes.
    read_share=0.6,
    scratch_bytes=lambda shape: 4 * shape["M"] * shape["N"] + 4 * shape["M"],
)

fused = Variant(
    name="fused",
    cpu=rmsnorm_fused_cpu,
    cuda=_fused_cuda,
    cuda_kernels=((rmsnorm_fused_kernel, _SIG_FUSED),),
    cpu_kernels=((rmsnorm_fused_cpu, _SIG_FUSED),),
)
