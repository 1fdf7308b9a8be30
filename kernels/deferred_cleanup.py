"""Per-key totals through a dense accumulator, with its clearing done in the call or deferred.

    y[i] = gain[keys[i]] * sum(values[j] for j with keys[j] == keys[i])

over K events whose keys lie in [0, V) (a few hot keys and a long tail, as
user or item ids are), float32 values, and a per-key gain of V entries. The
shape is (K, S), with V = K * S: S key slots per event, the key space's size
over a call's events (16384 for 1024 events among 16M ids). The
totals are summed into a dense V-entry accumulator, which must be zero when a
call starts: V is millions, so the accumulator is megabytes while a call
touches only K of its entries.

Modelled bytes per call (each access counted once, 4-byte elements):

    synchronous  4*(7*K + V)   read keys, values (2K), add into the accumulator
                               (read and write, 2K), read it back and the gains
                               (2K), write y (K), then zero all V entries
    deferred     4*7*K         the same without the zeroing: the call returns as
                               soon as y is written

The deferred variant does not remove the V-entry write, it moves it: a
persistent helper thread zeroes the accumulator after the call returns, in a
Numba `nogil` loop, so it runs while the caller goes on with the rest of its
request, and it competes with that work for the core and for the caches (the
zeroing streams V*4 bytes through them). The next call waits for the helper
before it touches the accumulator, so the two never race; in a request that
does other work between calls, the helper is long done by then.

The helper follows its caller's CPU affinity: where each request is pinned
to one core (`scoring_step_one_core`, a CPU server with one request per
core), the helper shares that core with the request that handed it the work,
as a per-request cleanup thread on such a server does.
"""

from __future__ import annotations

import functools
import math
import os
import threading
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from perfdsl.kernel import AppContext, Application, Reference, Shape, Variant

HOT_KEYS = 64
"""Half the events fall on this many keys: totals over a hot key sum many values."""

_SIG_TOTALS = "void(int32[::1], {dtype}[::1], {dtype}[::1], {dtype}[::1], {dtype}[::1])"
_SIG_CLEAR = "void({dtype}[::1])"


@numba.njit(nogil=True)
def group_totals(keys, values, gain, accumulator, y):
    """Scatter-add the values by key, then read each event's key total back, scaled."""
    for i in range(keys.size):
        accumulator[keys[i]] += values[i]
    for i in range(keys.size):
        k = keys[i]
        y[i] = gain[k] * accumulator[k]


@numba.njit(nogil=True)
def clear(accumulator):
    """Zero the whole accumulator: V entries written, whatever K touched."""
    zero = accumulator.dtype.type(0)
    for i in range(accumulator.size):
        accumulator[i] = zero


@functools.lru_cache(maxsize=8)
def _accumulator(owner: str, entries: int, dtype: np.dtype) -> np.ndarray:
    # Zero once, when allocated: each variant leaves it zero (or hands it to the
    # helper, which does) when a call ends. An evicted one is simply made again.
    return np.zeros(entries, dtype)


def accumulator(owner: str, entries: int, dtype: Any) -> np.ndarray:
    """The variant's accumulator, kept across calls: allocating one per call would time page faults."""
    return _accumulator(owner, int(entries), np.dtype(dtype))


class Cleaner:
    """A persistent thread that clears a workspace after the call that used it has returned.

    One job at a time: `wait()` before using the workspace again, `hand_off()`
    after. The thread runs `clear` (a `nogil` Numba function) without the GIL,
    so it overlaps whatever the caller does next.
    """

    def __init__(self, clear_fn: Callable[[np.ndarray], None]) -> None:
        self._clear = clear_fn
        self._ready = threading.Condition()
        self._job: np.ndarray | None = None
        self._idle = threading.Event()
        self._idle.set()
        self._thread: threading.Thread | None = None
        self._affinity: set[int] | None = None

    @property
    def pending(self) -> bool:
        """Whether handed-off work has not finished yet."""
        return not self._idle.is_set()

    def wait(self) -> None:
        """Block until the last handed-off workspace is clear."""
        self._idle.wait()

    def hand_off(self, workspace: np.ndarray) -> None:
        """Clear `workspace` on the helper thread, on the CPUs the caller may run on (after `wait()`)."""
        self._start()
        self._follow_caller()
        self._idle.clear()
        with self._ready:
            self._job = workspace
            self._ready.notify()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="deferred-cleanup", daemon=True)
            self._thread.start()

    def _follow_caller(self) -> None:
        """Give the helper the caller's CPU set (Linux): a request pinned to a core clears on that core."""
        if not hasattr(os, "sched_setaffinity") or self._thread is None or self._thread.native_id is None:
            return
        allowed = os.sched_getaffinity(0)
        if allowed != self._affinity:
            os.sched_setaffinity(self._thread.native_id, allowed)
            self._affinity = allowed

    def _loop(self) -> None:
        while True:
            with self._ready:
                while self._job is None:
                    self._ready.wait()
                job, self._job = self._job, None
            self._clear(job)
            self._idle.set()


CLEANER = Cleaner(clear)
"""The deferred variant's helper: one thread, started on its first call."""

_SYNCHRONOUS_LOCK = threading.Lock()
_DEFERRED_LOCK = threading.Lock()
# Each variant's accumulator is one buffer per size: calls that overlap (a load
# test's worker left running past a drain) take turns instead of mixing totals.


def _synchronous_cpu(keys: np.ndarray, values: np.ndarray, gain: np.ndarray, y: np.ndarray) -> None:
    acc = accumulator("synchronous", gain.size, values.dtype)
    with _SYNCHRONOUS_LOCK:
        group_totals(keys, values, gain, acc, y)
        clear(acc)


def deferred_call(
    cleaner: Cleaner, keys: np.ndarray, values: np.ndarray, gain: np.ndarray, y: np.ndarray
) -> None:
    """The change with its helper named: wait for the last clearing, total, hand the clearing on."""
    acc = accumulator("deferred", gain.size, values.dtype)
    with _DEFERRED_LOCK:
        cleaner.wait()
        group_totals(keys, values, gain, acc, y)
        cleaner.hand_off(acc)


def _deferred_cpu(keys: np.ndarray, values: np.ndarray, gain: np.ndarray, y: np.ndarray) -> None:
    deferred_call(CLEANER, keys, values, gain, y)


# The operation.


def draw_keys(k: int, v: int, rng: np.random.Generator) -> np.ndarray:
    """K keys in [0, V): half on the first HOT_KEYS keys, half uniform over all V."""
    keys = rng.integers(0, v, k)
    hot = rng.random(k) < 0.5
    keys[hot] %= min(v, HOT_KEYS)
    return keys.astype(np.int32)


def key_space(shape: Shape) -> int:
    """V, the accumulator's entries: S slots for each of the K events."""
    return shape["K"] * shape["S"]


def _inputs(shape: Shape, rng: np.random.Generator, dtype: Any) -> dict[str, np.ndarray]:
    k, v = shape["K"], key_space(shape)
    return {
        "keys": draw_keys(k, v, rng),
        "values": rng.standard_normal(k).astype(dtype),
        "gain": rng.uniform(0.5, 1.5, v).astype(dtype),
    }


def _outputs(shape: Shape) -> dict[str, tuple[int, ...]]:
    return {"y": (shape["K"],)}


def _compute(keys: np.ndarray, values: np.ndarray, gain: np.ndarray) -> dict[str, np.ndarray]:
    index = keys.astype(np.int64)
    totals = np.bincount(index, weights=values, minlength=gain.size)
    return {"y": gain[index] * totals[index]}


reference = Reference(name="group_totals", inputs=_inputs, outputs=_outputs, compute=_compute)

synchronous = Variant(
    name="synchronous",
    cpu=_synchronous_cpu,
    cpu_kernels=((group_totals, _SIG_TOTALS), (clear, _SIG_CLEAR)),
    # Reads: keys, values, the accumulator twice, gains (5K); writes: the accumulator,
    # y and the V zeroes (2K + V), which dominate at V >> K.
    read_share=0.1,
    scratch_bytes=lambda shape: 4 * key_space(shape),
    # `gain` holds V entries, and a call reads the K its keys name: its 64 MiB is no traffic a
    # call must move, and the byte model (7K streams) is right not to count it (PQ010).
    sparse_inputs=("gain",),
)

deferred = Variant(
    name="deferred",
    cpu=_deferred_cpu,
    cpu_kernels=((group_totals, _SIG_TOTALS),),
    scratch_bytes=lambda shape: 4 * key_space(shape),
    sparse_inputs=("gain",),
)


# The application: a scoring step on one core.

ROWS = 128
"""Events per request row: the K events' totals form a (ROWS, K / ROWS) feature block."""
WIDTH = 256
LAYERS_AFTER = 1
"""Residual layers after the totals: the rest of the request, during which the helper clears."""


def _prepare_scoring_step(ctx: AppContext) -> Callable[[], np.ndarray]:
    """Score ROWS items: embed them, total their K events by key, then LAYERS_AFTER residual layers.

    The totals are a feature of the layers after them, so the operation sits in
    the middle of the request: what it leaves to do, the rest of the request
    runs beside.
    """
    k, v = ctx.shape["K"], key_space(ctx.shape)
    per_row = max(1, k // ROWS)
    events = ROWS * per_row
    rng, dtype = ctx.rng, ctx.dtype

    def draw(array: np.ndarray) -> np.ndarray:
        return np.ascontiguousarray(array.astype(dtype))

    x0 = draw(rng.standard_normal((ROWS, WIDTH)))
    w_in = draw(rng.standard_normal((WIDTH, per_row)) / math.sqrt(WIDTH))
    keys = draw_keys(events, v, rng)
    gain = draw(rng.uniform(0.5, 1.5, v))
    w_mid = draw(rng.standard_normal((per_row, WIDTH)) / math.sqrt(per_row))
    layers = [
        (
            draw(rng.standard_normal((WIDTH, WIDTH)) / math.sqrt(WIDTH)),
            draw(rng.standard_normal((WIDTH, WIDTH)) / math.sqrt(WIDTH)),
        )
        for _ in range(LAYERS_AFTER)
    ]
    u = np.empty((ROWS, per_row), dtype)
    totals = np.empty(events, dtype)
    h = np.empty((ROWS, WIDTH), dtype)
    t = np.empty((ROWS, WIDTH), dtype)
    delta = np.empty((ROWS, WIDTH), dtype)

    def request() -> np.ndarray:
        np.matmul(x0, w_in, out=u)
        np.tanh(u, out=u)
        ctx.op(keys=keys, values=u.reshape(events), gain=gain, y=totals)
        np.matmul(totals.reshape(ROWS, per_row), w_mid, out=h)
        np.tanh(h, out=h)
        for a, b in layers:
            np.matmul(h, a, out=t)
            np.tanh(t, out=t)
            np.matmul(t, b, out=delta)
            np.add(h, delta, out=h)
        return h.copy()

    return request


def _prepare_scoring_step_one_core(ctx: AppContext) -> Callable[[], np.ndarray]:
    """The scoring step as a CPU server runs it with one request per core: the request pinned to one CPU.

    Pinned for the request's length and released after it (Linux; elsewhere the
    request runs unpinned), so the harness's own thread is left as it was. The
    deferred variant's helper follows the caller's CPU set, so here it shares
    the request's core, as it would on a server whose other cores serve other
    requests.
    """
    request = _prepare_scoring_step(ctx)
    if not hasattr(os, "sched_setaffinity"):
        return request

    def one_core_request() -> np.ndarray:
        allowed = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(allowed)})
        try:
            return request()
        finally:
            os.sched_setaffinity(0, allowed)

    return one_core_request


scoring_step = Application(name="scoring_step", prepare=_prepare_scoring_step)
scoring_step_one_core = Application(name="scoring_step_one_core", prepare=_prepare_scoring_step_one_core)
