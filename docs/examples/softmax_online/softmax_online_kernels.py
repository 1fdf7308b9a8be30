"""Row-wise softmax over a float32 matrix x (M, N): three passes against the online two.

The baseline is the safe softmax: one pass for each row's max, one for the sum of
exp(x - max), one to write y = exp(x - max) / sum. The change (online softmax,
Milakov and Gimelshein 2018) keeps a running max and rescales the running sum
whenever the max grows, so the max and the sum come from one pass: two passes
over x instead of three.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from perfdsl.kernel import AppContext, Application, Reference, Shape, Variant

_SIG = "void({dtype}[:, ::1], {dtype}[:, ::1])"


@numba.njit(nogil=True)
def _write_row(row, out, m, s):
    """The last pass of both: out = exp(row - max) / sum."""
    inv = 1.0 / s
    for j in range(row.size):
        out[j] = math.exp(row[j] - m) * inv


@numba.njit(parallel=True, nogil=True)
def three_pass_cpu(x, y):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        m = row[0]
        for j in range(1, row.size):
            m = max(m, row[j])
        s = 0.0
        for j in range(row.size):
            s += math.exp(row[j] - m)
        _write_row(row, y[i], m, s)


@numba.njit(parallel=True, nogil=True)
def online_cpu(x, y):
    for i in numba.prange(x.shape[0]):
        row = x[i]
        m = row[0]
        s = 0.0
        for j in range(row.size):
            v = row[j]
            if v > m:
                s = s * math.exp(m - v) + 1.0
                m = v
            else:
                s += math.exp(v - m)
        _write_row(row, y[i], m, s)


@numba.njit(parallel=True, nogil=True)
def copy_cpu(x, y):
    for i in numba.prange(x.shape[0]):
        for j in range(x.shape[1]):
            y[i, j] = x[i, j]


def _inputs(shape: Shape, rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    # Logits of a few units' spread, never zeros: each seed sees fresh data.
    return {"x": (3.0 * rng.standard_normal((shape["M"], shape["N"]))).astype(dtype)}


def _outputs(shape: Shape) -> dict[str, tuple[int, ...]]:
    return {"y": (shape["M"], shape["N"])}


def _compute(x: np.ndarray) -> dict[str, np.ndarray]:
    z = np.exp(x - x.max(axis=1, keepdims=True))
    return {"y": z / z.sum(axis=1, keepdims=True)}


def _copy_compute(x: np.ndarray) -> dict[str, np.ndarray]:
    return {"y": x.copy()}


reference = Reference(name="softmax", inputs=_inputs, outputs=_outputs, compute=_compute)
copy_reference = Reference(name="copy", inputs=_inputs, outputs=_outputs, compute=_copy_compute)

three_pass = Variant(name="three_pass", cpu=three_pass_cpu, cpu_kernels=((three_pass_cpu, _SIG),))
online = Variant(name="online", cpu=online_cpu, cpu_kernels=((online_cpu, _SIG),))
copy = Variant(name="copy", cpu=copy_cpu, cpu_kernels=((copy_cpu, _SIG),))


def _prepare_attention(ctx: AppContext) -> Callable[[], np.ndarray]:
    """One request: attention scores q k^T, their softmax (the operation), then p v."""
    m, n = ctx.shape["M"], ctx.shape["N"]
    q = ctx.rng.standard_normal((m, 64)).astype(ctx.dtype)
    k = ctx.rng.standard_normal((n, 64)).astype(ctx.dtype)
    v = ctx.rng.standard_normal((n, 64)).astype(ctx.dtype)
    scores = np.empty((m, n), ctx.dtype)
    p = np.empty((m, n), ctx.dtype)

    def request() -> np.ndarray:
        np.matmul(q, k.T, out=scores)
        np.multiply(scores, 0.125, out=scores)
        ctx.op(x=scores, y=p)
        return p @ v

    return request


attention = Application(name="attention", prepare=_prepare_attention)
