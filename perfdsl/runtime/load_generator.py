"""Open-loop load: requests arrive on a Poisson schedule whatever the server does.

Modelled on MLPerf LoadGen's server scenario and wrk2. A closed-loop client
sends the next request only after the last reply, so a stall produces fewer
samples and the tail disappears (coordinated omission, Gil Tene). Here the
arrival times are drawn up front from a seeded Poisson process, the same seed
gives the same schedule for baseline and change, and latency is measured from
the *scheduled* arrival, so requests queued behind a stall carry its cost.

Threads. The calling thread is the dispatcher: it sleeps until each scheduled
time (the last `spin_s` busy-waited, because `time.sleep` overshoots by tens of
microseconds), records the issue time and puts the request on a queue. A pool
of `workers` threads (default 1: one execution slot, like a single-stream
server) takes requests off the queue and calls `request()`. The queue in front
of the workers is the server's queue, so queueing shows as started - scheduled,
while the issue lag (issued - scheduled) is the generator's own lateness. The
GIL is shared: a `request()` whose heavy work releases it (numpy, numba with
`nogil`, CUDA synchronisation, sleeping) leaves the dispatcher on time; one
that holds it in pure Python delays the dispatcher by up to the interpreter's
switch interval (5 ms), which the issue lag records and `stats.load` judges.

A probe may stop at a window boundary (`stop`): a monitor thread, beside the
dispatcher, waits until the first k windows of measured requests have all
completed, asks `stop` about them, and when it answers yes the dispatcher
issues nothing more. The request in service finishes and is recorded; those
still queued are never begun, and the record ends before the first of them, so
it is the schedule's prefix of requests served. Serving the queue out would add
nothing to the decided question and costs most of an overloaded probe: at three
times a server's capacity, a probe decided after its first 100 requests had
queued 1,000 more, and drained them for 2.5 s. The question depends only on the
decided prefix, never on how far the dispatcher had got, so the evaluation asks
it again over the recorded requests and gets the same answer.

Timestamps are `time.perf_counter_ns()` (monotonic, the finest clock) in
nanoseconds from the run's start.
"""

from __future__ import annotations

import queue
import sys
import threading
import time
from collections.abc import Callable, Collection
from typing import TypeAlias

import attrs
import numpy as np

from perfdsl.runtime.machine_state import pin_thread

GIL_SWITCH_INTERVAL_S = 1e-4
"""The interpreter's GIL switch interval while a load run issues requests."""
NOT_COMPLETED = -1
"""Timestamp of a request that had not started or finished when the drain timed out."""
POLL_S = 1e-3
"""How often the monitor looks for the next window's last completion."""

StopAsk: TypeAlias = Callable[[np.ndarray, np.ndarray, np.ndarray], bool]
"""`stop(scheduled_ns, completed_ns, ok)` over the first k windows of measured requests:
True ends the probe (`run_open_loop`)."""


def poisson_schedule(rate: float, count: int, seed: int) -> np.ndarray:
    """`count` Poisson arrival times (int64 ns from the start) at `rate` per second.

    The unit-rate gaps come from the seed alone and are divided by the rate, so
    one seed gives the same arrivals at a given rate and time-scaled copies of
    them at other rates: baseline and change see identical traffic.
    """
    if not rate > 0 or count < 0:
        raise ValueError(f"need rate > 0 and count >= 0, got rate={rate}, count={count}")
    gaps = np.random.default_rng(seed).exponential(1.0, count)
    return np.round(np.cumsum(gaps) * (1e9 / rate)).astype(np.int64)


@attrs.frozen(eq=False)
class LoadRun:
    """Raw per-request records of one open-loop run, warm-up already discarded.

    All four timestamps are int64 ns from the run's start; `started` is when
    `request()` was called (the actual send), `issued` when the dispatcher
    queued it. Latency from the scheduled arrival is completed - scheduled.
    """

    rate: float
    seed: int
    workers: int
    warmup: int
    """Requests issued first and discarded."""
    truncated: bool
    """The duration bound cut the schedule short of warm-up + count requests."""
    scheduled_ns: np.ndarray
    issued_ns: np.ndarray
    started_ns: np.ndarray
    completed_ns: np.ndarray
    ok: np.ndarray
    """True where `request()` returned without raising before the drain timeout."""
    first_error: str | None
    """repr of the first exception a request raised, if any."""
    stopped: bool = False
    """`stop` ended the probe at a window boundary before the schedule ran out."""

    def seconds(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(scheduled, issued, started, completed) in seconds, for `stats.load`."""
        return (
            self.scheduled_ns / 1e9,
            self.issued_ns / 1e9,
            self.started_ns / 1e9,
            self.completed_ns / 1e9,
        )


def run_open_loop(
    request: Callable[[], object],
    rate: float,
    *,
    count: int,
    duration_s: float,
    warmup: int = 0,
    seed: int = 0,
    workers: int = 1,
    spin_s: float = 100e-6,
    drain_timeout_s: float = 10.0,
    generator_cores: Collection[int] = (),
    server_cores: Collection[int] = (),
    window: int = 0,
    stop: StopAsk | None = None,
    on_served: Callable[[], None] | None = None,
) -> LoadRun:
    """Issue `warmup + count` requests at Poisson arrivals of `rate` per second.

    Bounded by count and duration: arrivals scheduled after `duration_s` are
    not issued (`truncated` says so). After the last issue, the run waits up to
    `drain_timeout_s` for requests in flight; any still running are recorded as
    not completed (their threads are daemons and are left to finish).
    A late dispatcher never skips or bunches arrivals on purpose: it issues
    at once and the lag is recorded. With `generator_cores`, the dispatcher
    runs on those cores while it issues and the request threads on
    `server_cores` (`runtime.machine_state.choose_pinning`), so the
    generator's spinning never takes a core from the code it measures.
    With `stop` and `window`, a monitor on the generator's cores asks `stop`
    after every `window` measured requests (the module docstring). `on_served`
    hears of each request as it ends, after its completion time is taken: a
    probe at a low rate runs for minutes, and the harness watching the worker
    counts each request served as its progress.
    """
    if workers < 1 or warmup < 0 or count < 0 or duration_s <= 0:
        raise ValueError("need workers >= 1, warmup >= 0, count >= 0, duration_s > 0")
    if stop is not None and window < 1:
        raise ValueError(f"a probe that may stop needs a window of at least one request, got {window}")
    full = poisson_schedule(rate, warmup + count, seed)
    sched = full[full <= int(duration_s * 1e9)]
    n = sched.size
    issued = np.full(n, NOT_COMPLETED, np.int64)
    started = np.full(n, NOT_COMPLETED, np.int64)
    completed = np.full(n, NOT_COMPLETED, np.int64)
    ok = np.zeros(n, bool)
    errors: list[str] = []
    jobs: queue.SimpleQueue[int | None] = queue.SimpleQueue()
    t0 = time.perf_counter_ns() + 1_000_000  # start 1 ms ahead so the first arrival is on time

    def work() -> None:
        pin_thread(server_cores)
        while (i := jobs.get()) is not None:
            if halt.is_set():
                continue  # decided: a request still queued is never begun
            started[i] = time.perf_counter_ns() - t0
            try:
                request()
            except Exception as exc:  # a failed request is data, not a crash of the run
                errors.append(repr(exc))
            else:
                ok[i] = True
            completed[i] = time.perf_counter_ns() - t0
            if on_served is not None:
                on_served()

    halt = threading.Event()
    issuing = threading.Event()
    issuing.set()

    def monitor() -> None:
        """Ask `stop` about each whole window of measured requests, in order, once all completed."""
        pin_thread(generator_cores)
        done, end = warmup, warmup + window
        while end <= n and issuing.is_set():
            while done < end and completed[done] >= 0:
                done += 1
            if done < end:
                time.sleep(POLL_S)
                continue
            if stop(sched[warmup:end].copy(), completed[warmup:end].copy(), ok[warmup:end].copy()):
                halt.set()
                return
            end += window

    pool = [threading.Thread(target=work, name=f"perfdsl-load-{k}", daemon=True) for k in range(workers)]
    if stop is not None:
        pool.append(threading.Thread(target=monitor, name="perfdsl-load-monitor", daemon=True))
    for thread in pool:
        thread.start()
    spin_ns = int(spin_s * 1e9)
    # A worker running Python code keeps the GIL for up to the switch interval
    # (5 ms by default) before the waking scheduler may take it, and that wait
    # would be recorded as the generator's own issue lag. A short interval hands
    # the GIL over in about 0.1 ms; it is restored when the run ends.
    switch_interval = sys.getswitchinterval()
    sys.setswitchinterval(GIL_SWITCH_INTERVAL_S)
    before = pin_thread(generator_cores)
    sent = 0
    try:
        while sent < n and not halt.is_set():
            _wait_until(t0 + int(sched[sent]), spin_ns)
            issued[sent] = time.perf_counter_ns() - t0
            jobs.put(sent)
            sent += 1
    finally:  # even on KeyboardInterrupt, let every worker finish and exit
        issuing.clear()
        sys.setswitchinterval(switch_interval)
        if before is not None:
            pin_thread(before)
        for _ in range(workers):
            jobs.put(None)
    deadline = time.monotonic() + drain_timeout_s
    for thread in pool:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))

    # Copy, so a request still running after the drain cannot change the record;
    # requests never issued, or never begun once the probe stopped, are no part of it.
    end = _served_prefix(started, warmup, sent) if halt.is_set() else sent
    keep = slice(min(warmup, end), end)
    records = [a[keep].copy() for a in (sched, issued, started, completed, ok)]
    records[4] &= records[3] >= 0
    for a in records:
        a.flags.writeable = False
    return LoadRun(
        rate=float(rate),
        seed=seed,
        workers=workers,
        warmup=warmup,
        truncated=n < full.size,
        stopped=sent < n,
        scheduled_ns=records[0],
        issued_ns=records[1],
        started_ns=records[2],
        completed_ns=records[3],
        ok=records[4],
        first_error=errors[0] if errors else None,
    )


def _served_prefix(started: np.ndarray, warmup: int, sent: int) -> int:
    """Where the record of a stopped probe ends: at the first issued request never begun.

    With one worker, the requests begun are a prefix of those issued. With several, one
    may have begun a later request than another skipped; it was served after the decision,
    and the record ends before the gap rather than count the skipped one as a miss.
    """
    unbegun = np.flatnonzero(started[warmup:sent] < 0)
    return warmup + int(unbegun[0]) if unbegun.size else sent


def _wait_until(target_ns: int, spin_ns: int) -> None:
    """Sleep until `target_ns` on perf_counter_ns, busy-waiting the last `spin_ns`."""
    remaining = target_ns - time.perf_counter_ns()
    if remaining > spin_ns:
        time.sleep((remaining - spin_ns) / 1e9)
    while time.perf_counter_ns() < target_ns:
        pass
