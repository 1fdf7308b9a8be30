"""End-to-end applications: the studied operation among the work that surrounds it.

Each application calls its operation only through `ctx.op`, so the harness can
swap baseline for change (or the float64 reference) and time the operation's
share. The surrounding work is written once over `_HostOps` (numpy, on "cpu")
or `_DeviceOps` (Numba CUDA kernels, on "cuda" and "cudasim"), in the context's
dtype, so the same application also runs in float64 for model-level comparison.

    decoder_step         RMSNorm (`rmsnorm` shapes M, N) before each of two
                         residual MLP layers and once at the end: 3 calls
    decoder_step_one_core  the same, each request on the one thread that calls
                         it (a CPU server with one request per core): 3 calls
    transpose_pipeline   scale+tanh along rows, transpose (R, C), scale+tanh: 1 call
    reduction_pipeline   prediction, squared error, sum (N), mean: 1 call

On CUDA the application's kernels go to the default stream. The op runs on the
harness's stream; Numba's `cuda.stream()` creates blocking streams, which the
legacy default stream orders against, so the two stay in program order.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import cuda

from perfdsl.kernel import AppContext, Application

LAYERS = 2
GEMM_TILE = 16
BLOCK_2D = (32, 8)


# CUDA kernels of the applications' own work (generic in dtype: compiled lazily).


@cuda.jit
def gemm_kernel(a, b, c):
    """c = a @ b through GEMM_TILE-square shared tiles; accumulates in float64 for any dtype."""
    a_tile = cuda.shared.array((GEMM_TILE, GEMM_TILE), a.dtype)
    b_tile = cuda.shared.array((GEMM_TILE, GEMM_TILE), b.dtype)
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    row = cuda.blockIdx.y * GEMM_TILE + ty
    col = cuda.blockIdx.x * GEMM_TILE + tx
    inner = a.shape[1]
    acc = 0.0
    for k0 in range(0, inner, GEMM_TILE):
        # Out-of-range tile entries are zero, so they add nothing to the dot product.
        if row < a.shape[0] and k0 + tx < inner:
            a_tile[ty, tx] = a[row, k0 + tx]
        else:
            a_tile[ty, tx] = 0
        if k0 + ty < inner and col < b.shape[1]:
            b_tile[ty, tx] = b[k0 + ty, col]
        else:
            b_tile[ty, tx] = 0
        cuda.syncthreads()
        for k in range(GEMM_TILE):
            acc += a_tile[ty, k] * b_tile[k, tx]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


@cuda.jit
def scale_tanh_kernel(src, gain, dst):
    """dst[i, j] = tanh(src[i, j] * gain[j])."""
    j, i = cuda.grid(2)
    if i < dst.shape[0] and j < dst.shape[1]:
        dst[i, j] = math.tanh(src[i, j] * gain[j])


@cuda.jit
def add_kernel(a, b, out):
    """out = a + b."""
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        out[i, j] = a[i, j] + b[i, j]


@cuda.jit
def squared_error_kernel(prediction, target, out):
    """out = (prediction - target)^2."""
    j, i = cuda.grid(2)
    if i < out.shape[0] and j < out.shape[1]:
        d = prediction[i, j] - target[i, j]
        out[i, j] = d * d


def _grid(shape: tuple[int, int], block: tuple[int, int]) -> tuple[int, int]:
    """Blocks covering a (rows, cols) array with x along cols, so warps read rows."""
    return -(-shape[1] // block[0]), -(-shape[0] // block[1])


class _DeviceOps:
    """The applications' own work as CUDA kernels on the default stream."""

    def put(self, host: np.ndarray) -> Any:
        return cuda.to_device(host)

    def empty(self, shape: tuple[int, ...], dtype: Any) -> Any:
        return cuda.device_array(shape, dtype)

    def assign(self, dst: Any, src: Any) -> None:
        dst.copy_to_device(src)

    def matmul(self, a: Any, b: Any, out: Any) -> None:
        gemm_kernel[_grid(out.shape, (GEMM_TILE, GEMM_TILE)), (GEMM_TILE, GEMM_TILE)](a, b, out)

    def scale_tanh(self, src: Any, gain: Any, dst: Any) -> None:
        scale_tanh_kernel[_grid(dst.shape, BLOCK_2D), BLOCK_2D](src, gain, dst)

    def add(self, a: Any, b: Any, out: Any) -> None:
        add_kernel[_grid(out.shape, BLOCK_2D), BLOCK_2D](a, b, out)

    def squared_error(self, prediction: Any, target: Any, out: Any) -> None:
        squared_error_kernel[_grid(out.shape, BLOCK_2D), BLOCK_2D](prediction, target, out)

    def fetch(self, array: Any) -> np.ndarray:
        cuda.synchronize()
        return array.copy_to_host()


class _HostOps:
    """The applications' own work in numpy, in the arrays' dtype."""

    def put(self, host: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(host)

    def empty(self, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
        return np.empty(shape, dtype)

    def assign(self, dst: np.ndarray, src: np.ndarray) -> None:
        np.copyto(dst, src)

    def matmul(self, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
        np.matmul(a, b, out=out)

    def scale_tanh(self, src: np.ndarray, gain: np.ndarray, dst: np.ndarray) -> None:
        np.multiply(src, gain, out=dst)
        np.tanh(dst, out=dst)

    def add(self, a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
        np.add(a, b, out=out)

    def squared_error(self, prediction: np.ndarray, target: np.ndarray, out: np.ndarray) -> None:
        np.subtract(prediction, target, out=out)
        np.square(out, out=out)

    def fetch(self, array: np.ndarray) -> np.ndarray:
        return array.copy()


def _ops(target: str) -> _HostOps | _DeviceOps:
    if target == "cpu":
        return _HostOps()
    if target in ("cuda", "cudasim"):
        return _DeviceOps()
    raise ValueError(f"unknown target {target!r}: expected 'cpu', 'cuda' or 'cudasim'")


# The applications.


def _prepare_decoder_step(ctx: AppContext) -> Callable[[], np.ndarray]:
    """A residual MLP stack of width N over M tokens, normalised before each layer and at the end."""
    m, n = ctx.shape["M"], ctx.shape["N"]
    hidden = max(1, n // 4)
    ops, rng, dtype = _ops(ctx.target), ctx.rng, ctx.dtype

    def draw(array: np.ndarray) -> Any:
        return ops.put(array.astype(dtype))

    x0 = draw(rng.standard_normal((m, n)))
    layers = [
        (
            draw(rng.uniform(0.5, 1.5, n)),
            draw(rng.standard_normal((n, hidden)) / math.sqrt(n)),
            draw(rng.uniform(0.5, 1.5, hidden)),
            draw(rng.standard_normal((hidden, n)) / math.sqrt(hidden)),
        )
        for _ in range(LAYERS)
    ]
    final_weight = draw(rng.uniform(0.5, 1.5, n))
    h, normed, delta, out = (ops.empty((m, n), dtype) for _ in range(4))
    u = ops.empty((m, hidden), dtype)

    def request() -> np.ndarray:
        ops.assign(h, x0)
        for norm_weight, w_in, gain, w_out in layers:
            ctx.op(x=h, w=norm_weight, y=normed)
            ops.matmul(normed, w_in, u)
            ops.scale_tanh(u, gain, u)
            ops.matmul(u, w_out, delta)
            ops.add(h, delta, h)
        ctx.op(x=h, w=final_weight, y=out)
        return ops.fetch(out)

    return request


def _prepare_decoder_step_one_core(ctx: AppContext) -> Callable[[], np.ndarray]:
    """decoder_step as a CPU inference server runs it with one request per core.

    Such a server gives each request one thread for all of its work: `perfdsl
    run` already keeps BLAS to one thread, and this keeps Numba's parallel
    loops to the calling thread too. With two threads, every parallel call of
    the operation waits for the other core; on a machine running other work
    that wait grew with the machine's load, and the operation's share of a
    request with it (9-34 % across runs). Numba's thread count is a setting of
    the calling thread, and the load generator calls each request from a
    worker thread of its own, so every request sets it (under a microsecond).
    On a GPU target it changes nothing: the operation's work is on the device.
    """
    request = _prepare_decoder_step(ctx)

    def one_core_request() -> np.ndarray:
        numba.set_num_threads(1)
        return request()

    return one_core_request


def _prepare_transpose_pipeline(ctx: AppContext) -> Callable[[], np.ndarray]:
    """Work along the rows of x (R, C), transpose, then work along the rows of x.T."""
    r, c = ctx.shape["R"], ctx.shape["C"]
    ops, rng, dtype = _ops(ctx.target), ctx.rng, ctx.dtype
    x = ops.put(rng.standard_normal((r, c)).astype(dtype))
    column_gain = ops.put(rng.uniform(0.5, 1.5, c).astype(dtype))
    row_gain = ops.put(rng.uniform(0.5, 1.5, r).astype(dtype))
    staged = ops.empty((r, c), dtype)
    transposed, out = ops.empty((c, r), dtype), ops.empty((c, r), dtype)

    def request() -> np.ndarray:
        ops.scale_tanh(x, column_gain, staged)
        ctx.op(x=staged, out=transposed)
        ops.scale_tanh(transposed, row_gain, out)
        return ops.fetch(out)

    return request


def _prepare_reduction_pipeline(ctx: AppContext) -> Callable[[], np.ndarray]:
    """Mean squared error of N predictions: predict, square the errors, sum them, divide."""
    n = ctx.shape["N"]
    ops, rng, dtype = _ops(ctx.target), ctx.rng, ctx.dtype
    features = ops.put(rng.standard_normal((1, n)).astype(dtype))
    gain = ops.put(rng.uniform(0.5, 1.5, n).astype(dtype))
    target = ops.put(rng.uniform(-1.0, 1.0, (1, n)).astype(dtype))
    prediction = ops.empty((1, n), dtype)
    errors = ops.empty((n,), dtype)
    total = ops.empty((1,), dtype)

    def request() -> np.ndarray:
        ops.scale_tanh(features, gain, prediction)
        ops.squared_error(prediction, target, errors.reshape(1, n))
        ctx.op(x=errors, total=total)
        return ops.fetch(total) / n

    return request


decoder_step = Application(name="decoder_step", prepare=_prepare_decoder_step)
decoder_step_one_core = Application(name="decoder_step_one_core", prepare=_prepare_decoder_step_one_core)
transpose_pipeline = Application(name="transpose_pipeline", prepare=_prepare_transpose_pipeline)
reduction_pipeline = Application(name="reduction_pipeline", prepare=_prepare_reduction_pipeline)
