"""Batch normalisation at inference, y = (x - mean) * (1 / sqrt(var + eps)) * gamma + beta, float32.

The statistics are the trained ones (per feature j of x (M, N)), so the operation
is elementwise over x. The baseline is what a NumPy user writes: four ufunc
passes over the M x N array, in place in y so that no temporary is allocated
(an allocation per call would time page faults instead of traffic). The change
folds the statistics into a scale and a shift and makes one Numba sweep: each
element is read, scaled, shifted and written once. Both run on one thread, so
the only physical difference is the number of sweeps over memory.

Modelled memory bytes per call, each read and write counted once (x and y are
M x N, the four statistics N each; write-allocate and N-sized temporaries not
counted):

    numpy   bytes 4*(8*M*N + 5*N)   launches 7
            1/std:    read var (three N-sized ufuncs)           N
            subtract: read x and mean, write y                  2*M*N + N
            multiply: read y and 1/std, write y; then gamma     4*M*N + 2*N
            add:      read y and beta, write y                  2*M*N + N
    fused   bytes 4*(2*M*N + 4*N)   launches 1
            fold the statistics into scale and shift (N-sized, they stay in L1),
            then read x once and write y once

On the CPU a "launch" is one call into compiled code: a ufunc, or the Numba function.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from perfdsl.kernel import AppContext, Application, Reference, Shape, Variant

EPS = 1e-5

_SIG_FUSED = "void({dtype}[:, ::1], {dtype}[::1], {dtype}[::1], {dtype}[::1], {dtype}[::1], {dtype}[:, ::1])"


def _numpy_cpu(
    x: np.ndarray, mean: np.ndarray, var: np.ndarray, gamma: np.ndarray, beta: np.ndarray, y: np.ndarray
) -> None:
    """Four NumPy passes over y: the idiomatic expression, minus its temporaries."""
    inv_std = 1.0 / np.sqrt(var + y.dtype.type(EPS))
    np.subtract(x, mean, out=y)
    np.multiply(y, inv_std, out=y)
    np.multiply(y, gamma, out=y)
    np.add(y, beta, out=y)


@numba.njit(fastmath=True, nogil=True)
def batchnorm_fused_cpu(x, mean, var, gamma, beta, y):
    """One sweep over x: each element is read once, scaled, shifted and written once.

    The statistics are first folded into y = x * scale + shift: N-sized vectors
    that stay in L1, so the sweep does one multiply-add per element instead of a
    square root and a division that would make it compute-bound.
    """
    n = x.shape[1]
    scale = np.empty(n, x.dtype)
    shift = np.empty(n, x.dtype)
    for j in range(n):
        scale[j] = gamma[j] / np.sqrt(var[j] + x.dtype.type(EPS))
        shift[j] = beta[j] - mean[j] * scale[j]
    for i in range(x.shape[0]):
        for j in range(n):
            y[i, j] = x[i, j] * scale[j] + shift[j]


def _inputs(shape: Shape, rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    m, n = shape["M"], shape["N"]
    return {
        "x": rng.standard_normal((m, n)).astype(dtype),
        "mean": rng.uniform(-0.5, 0.5, n).astype(dtype),
        "var": rng.uniform(0.5, 2.0, n).astype(dtype),
        "gamma": rng.uniform(0.5, 1.5, n).astype(dtype),
        "beta": rng.uniform(-0.5, 0.5, n).astype(dtype),
    }


def _outputs(shape: Shape) -> dict[str, tuple[int, ...]]:
    return {"y": (shape["M"], shape["N"])}


def _compute(
    x: np.ndarray, mean: np.ndarray, var: np.ndarray, gamma: np.ndarray, beta: np.ndarray
) -> dict[str, np.ndarray]:
    return {"y": (x - mean) / np.sqrt(var + EPS) * gamma + beta}


reference = Reference(name="batchnorm", inputs=_inputs, outputs=_outputs, compute=_compute)

numpy_passes = Variant(
    name="numpy_passes",
    cpu=_numpy_cpu,
    # Four passes, three of them over y in place: y is written and read again within the call.
    scratch_bytes=lambda shape: 4 * shape["M"] * shape["N"],
)
"""A plain Python callable: no compiled kernel to archive, so no `cpu_kernels`."""

fused = Variant(
    name="fused",
    cpu=batchnorm_fused_cpu,
    cpu_kernels=((batchnorm_fused_cpu, _SIG_FUSED),),
)


def _prepare_classifier_head(ctx: AppContext) -> Callable[[], np.ndarray]:
    """A classifier head over M examples: linear layer to N features, batch norm, ReLU, logits."""
    m, n = ctx.shape["M"], ctx.shape["N"]
    classes = 16
    rng, dtype = ctx.rng, ctx.dtype
    features = rng.standard_normal((m, 64)).astype(dtype)
    w_in = (rng.standard_normal((64, n)) / 8.0).astype(dtype)
    stats = {key: value for key, value in _inputs(ctx.shape, rng, dtype).items() if key != "x"}
    w_out = (rng.standard_normal((n, classes)) / np.sqrt(n)).astype(dtype)
    hidden, normed = np.empty((m, n), dtype), np.empty((m, n), dtype)
    logits = np.empty((m, classes), dtype)

    def request() -> np.ndarray:
        np.matmul(features, w_in, out=hidden)
        ctx.op(x=hidden, y=normed, **stats)
        np.maximum(normed, 0, out=normed)
        np.matmul(normed, w_out, out=logits)
        return logits.copy()

    return request


classifier_head = Application(name="classifier_head", prepare=_prepare_classifier_head)
