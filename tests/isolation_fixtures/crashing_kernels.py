"""Planted failures for the worker isolation: each change kills, hangs or exhausts its worker.

The operation is y = 2 * x. `good` and `good_again` are right; every other
variant is right in what it computes but fails the way real kernels fail:

* `segfault`: a Numba CPU kernel (no bounds checks) writes a terabyte past its
  output, which the operating system answers with SIGSEGV;
* `abort`: the process calls abort(), as a failed C assertion does (SIGABRT);
* `hang`: a nopython loop that never ends and never releases the GIL, so
  no thread of the process can stop it;
* `exhaust`: keeps allocating and touching memory, as a leak does, up to
  EXHAUST_CAP_BYTES (a cap so that a broken memory limit cannot take the machine
  down: the limit must stop it well before);
* `late_segfault`: right for its first LATE_CALLS calls in a process (enough for
  the calibration calls and the correctness check), then the segfault: it ends
  its worker while the shape is being timed;
* `unguarded` (CUDA): the kernel lacks its bounds guard, so the threads of the
  last, partial block index past the end; the simulator raises for them;
* the application's request: right when called to be timed, the segfault when
  a load probe serves it (told by the load generator's thread name), so that it
  ends its worker after the request time and the share are measured.

Not under kernels/: these exist only to be caught by perfdsl's tests.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from typing import Any

import numba
import numpy as np
from numba import cuda

from perfdsl.kernel import AppContext, Application, Reference, Shape, Variant

FAR = 1 << 40
"""Elements past the output: far outside any mapping of the process."""
EXHAUST_CAP_BYTES = 12 * 1024**3
CHUNK_BYTES = 256 * 1024**2
LATE_CALLS = 16
"""Calibration's 4 calls, correctness's 8 (4 cases, each run twice), and a margin; timing makes dozens."""
BLOCK = 256
_calls = {"late": 0}


@numba.njit
def scale(x, y):
    for i in range(x.size):
        y[i] = 2 * x[i]


@numba.njit
def scale_far(x, y, offset):
    """y = 2x, written `offset` elements past y's end: an out-of-bounds write."""
    for i in range(x.size):
        y[i + offset] = 2 * x[i]


@numba.njit
def spin(x, y):
    """Never returns: the loop's condition holds for any finite x[0], and the GIL stays held."""
    while x[0] == x[0]:
        y[0] += 1.0


@cuda.jit
def scale_kernel(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] = 2 * x[i]


@cuda.jit
def scale_unguarded(x, y):
    """The planted bug: no `if i < x.size`, so a partial last block writes past the end."""
    i = cuda.grid(1)
    y[i] = 2 * x[i]


def _launch(kernel: Any) -> Callable[..., None]:
    def run(stream: Any, x: Any, y: Any) -> None:
        kernel[-(-x.size // BLOCK), BLOCK, stream](x, y)

    return run


def _good(x: np.ndarray, y: np.ndarray) -> None:
    scale(x, y)


def _segfault(x: np.ndarray, y: np.ndarray) -> None:
    scale_far(x, y, FAR)


def _abort(x: np.ndarray, y: np.ndarray) -> None:
    os.abort()


def _hang(x: np.ndarray, y: np.ndarray) -> None:
    spin(x, y)


def _exhaust(x: np.ndarray, y: np.ndarray) -> None:
    held = []
    while len(held) * CHUNK_BYTES < EXHAUST_CAP_BYTES:
        held.append(np.ones(CHUNK_BYTES, dtype=np.uint8))
    scale(x, y)


def _late_segfault(x: np.ndarray, y: np.ndarray) -> None:
    _calls["late"] += 1
    scale_far(x, y, FAR if _calls["late"] > LATE_CALLS else 0)


def _variant(name: str, cpu: Callable[..., None]) -> Variant:
    return Variant(name=name, cpu=cpu)


def _cuda_variant(name: str, kernel: Any) -> Variant:
    return Variant(
        name=name, cuda=_launch(kernel), cuda_kernels=((kernel, "void({dtype}[::1], {dtype}[::1])"),)
    )


def _inputs(shape: Shape, rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    return {"x": rng.standard_normal(shape["N"]).astype(dtype)}


def _outputs(shape: Shape) -> dict[str, tuple[int, ...]]:
    return {"y": (shape["N"],)}


def _compute(x: np.ndarray) -> dict[str, np.ndarray]:
    return {"y": 2 * x}


LOAD_THREADS = "perfdsl-load-"
"""The names of the threads that serve a load probe's requests (`perfdsl.runtime.load_generator`)."""


def _prepare(ctx: AppContext) -> Callable[[], np.ndarray]:
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
        if threading.current_thread().name.startswith(LOAD_THREADS):
            os.kill(os.getpid(), signal.SIGSEGV)
        ctx.op(x=x, y=y)
        return fetch()

    return request


reference = Reference(name="scale", inputs=_inputs, outputs=_outputs, compute=_compute)
good = _variant("good", _good)
good_again = _variant("good_again", _good)
segfault = _variant("segfault", _segfault)
abort = _variant("abort", _abort)
hang = _variant("hang", _hang)
exhaust = _variant("exhaust", _exhaust)
late_segfault = _variant("late_segfault", _late_segfault)
good_cuda = _cuda_variant("good_cuda", scale_kernel)
unguarded = _cuda_variant("unguarded", scale_unguarded)
application = Application(name="scale_app", prepare=_prepare)
