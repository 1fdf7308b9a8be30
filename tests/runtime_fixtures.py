"""Tiny operations for the runtime tests: one reference, good and broken CPU variants.

The operation is `out[i, j] = x[i, j] * w[j] + 1` over an (M, N) shape, small
enough for the CUDA simulator. Each broken variant fails one specific check.
"""

from __future__ import annotations

import itertools
import threading
import time

import numpy as np

from perfdsl.kernel import AppContext, Application, Reference, Variant


def _inputs(shape, rng, dtype):
    return {
        "x": rng.standard_normal((shape["M"], shape["N"])).astype(dtype),
        "w": rng.uniform(0.5, 1.5, shape["N"]).astype(dtype),
    }


def _outputs(shape):
    return {"out": (shape["M"], shape["N"])}


def _compute(x, w):
    return {"out": x * w + 1.0}


reference = Reference("scale_shift", _inputs, _outputs, _compute)


def good_cpu(x, w, out):
    np.multiply(x, w, out=out)
    out += 1


def off_by_one_cpu(x, w, out):
    """Skips the last element: the classic bounds bug."""
    flat = out.reshape(-1)
    full = (x * w + 1).reshape(-1)
    flat[:-1] = full[:-1]


def nan_cpu(x, w, out):
    good_cpu(x, w, out)
    out.reshape(-1)[0] = np.nan


def garbage_cpu(x, w, out):
    out[...] = x * w + 2


_noisy_calls = itertools.count()


def noisy_cpu(x, w, out):
    """Claims determinism but differs from one call to the next (like an atomic reduction)."""
    good_cpu(x, w, out)
    out += 1e-5 * (next(_noisy_calls) % 2 + 1)


def raising_cpu(x, w, out):
    raise RuntimeError("kernel exploded")


release_hang = threading.Event()


def hanging_cpu(x, w, out):
    """Sleeps (releasing the GIL) until the test lets it go."""
    while not release_hang.wait(0.01):
        time.sleep(0.01)


good = Variant("good", cpu=good_cpu)
good_twin = Variant("good_twin", cpu=good_cpu)
off_by_one = Variant("off_by_one", cpu=off_by_one_cpu)
nan_writer = Variant("nan_writer", cpu=nan_cpu)
garbage = Variant("garbage", cpu=garbage_cpu)
noisy = Variant("noisy", cpu=noisy_cpu)
noisy_declared = Variant("noisy_declared", cpu=noisy_cpu, deterministic=False)
raising = Variant("raising", cpu=raising_cpu)
hanging = Variant("hanging", cpu=hanging_cpu)


def _prepare(ctx: AppContext):
    """An application: the operation, then a row sum, as in a model's layer."""
    m, n = ctx.shape["M"], ctx.shape["N"]
    x = ctx.rng.standard_normal((m, n)).astype(ctx.dtype)
    w = ctx.rng.uniform(0.5, 1.5, n).astype(ctx.dtype)
    if ctx.target == "cpu":
        out = np.empty((m, n), dtype=ctx.dtype)

        def request():
            ctx.op(x=x, w=w, out=out)
            return out.sum(axis=1)

        return request
    from numba import cuda

    dx, dw = cuda.to_device(x), cuda.to_device(w)
    dout = cuda.device_array((m, n), dtype=ctx.dtype)

    def request_cuda():
        ctx.op(x=dx, w=dw, out=dout)
        cuda.synchronize()
        return dout.copy_to_host().sum(axis=1)

    return request_cuda


application = Application("row_sum_app", _prepare)
