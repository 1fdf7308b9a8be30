"""The open-loop load generator: schedule, records, queueing, and coordinated omission.

Service times are `time.sleep`, which releases the GIL as the application's
numpy/numba work does. Assertions are on structure and on planted effects many
times larger than scheduler noise, never on this machine's speed.
"""

import threading
import time

import numpy as np
import pytest

from perfdsl.runtime.load_generator import NOT_COMPLETED, poisson_schedule, run_open_loop
from perfdsl.stats.load import summarize_rate


def test_schedule_is_seeded_poisson_and_scales_with_rate():
    one = poisson_schedule(1_000.0, 5_000, seed=3)
    assert np.array_equal(one, poisson_schedule(1_000.0, 5_000, seed=3))
    assert not np.array_equal(one, poisson_schedule(1_000.0, 5_000, seed=4))
    assert np.all(np.diff(one) >= 0) and one.dtype == np.int64
    gaps = np.diff(one) / 1e9
    assert gaps.mean() == pytest.approx(1e-3, rel=0.05)
    assert gaps.std() == pytest.approx(1e-3, rel=0.1)  # exponential: sd = mean
    half = poisson_schedule(500.0, 5_000, seed=3)
    assert np.allclose(half, 2 * one, atol=2)


def test_records_have_the_run_structure():
    calls = []
    run = run_open_loop(lambda: calls.append(1), 500.0, count=40, duration_s=5.0, warmup=10, seed=1)
    assert len(calls) == 50  # warm-up requests are issued, then discarded
    assert run.scheduled_ns.size == 40 and run.ok.all() and not run.truncated
    assert np.array_equal(run.scheduled_ns, poisson_schedule(500.0, 50, seed=1)[10:])
    assert np.all(run.issued_ns >= run.scheduled_ns)
    assert np.all(run.started_ns >= run.issued_ns)
    assert np.all(run.completed_ns >= run.started_ns)
    assert run.first_error is None
    with pytest.raises(ValueError):
        run.completed_ns[0] = 0  # the record is read-only
    seconds = run.seconds()
    assert len(seconds) == 4
    assert np.allclose(seconds[3], run.completed_ns / 1e9)


def test_duration_bounds_the_run():
    run = run_open_loop(lambda: None, 1_000.0, count=100_000, duration_s=0.05, seed=2)
    assert run.truncated
    assert 0 < run.scheduled_ns.size < 1_000
    assert run.scheduled_ns.max() <= 50_000_000


def test_each_request_served_is_heard_after_its_completion_time():
    # A probe at a low rate outlasts the harness's time limit (1,404 requests at 12.5 rps took
    # two minutes and ended the application's worker): each request served is its progress.
    served: list[int] = []
    run = run_open_loop(
        lambda: time.sleep(0.001),
        400.0,
        count=40,
        warmup=5,
        duration_s=5.0,
        seed=1,
        on_served=lambda: served.append(1),
    )
    assert len(served) == 45 == run.completed_ns.size + run.warmup
    assert np.all(run.completed_ns >= 0)


def test_failures_and_unfinished_requests_are_recorded():
    count = iter(range(100))

    def sometimes_fails():
        if next(count) % 4 == 0:
            raise RuntimeError("backend unavailable")

    run = run_open_loop(sometimes_fails, 1_000.0, count=20, duration_s=5.0, seed=5)
    assert int((~run.ok).sum()) == 5
    assert run.first_error == "RuntimeError('backend unavailable')"

    release = threading.Event()
    hung = run_open_loop(lambda: release.wait(5.0), 1_000.0, count=3, duration_s=5.0, drain_timeout_s=0.05)
    release.set()
    assert not hung.ok.any()
    assert np.all(hung.completed_ns == NOT_COMPLETED)


def test_p99_rises_with_offered_load():
    """A 2 ms single-slot server: capacity about 500/s, so 1000/s builds a queue."""

    def serve():
        time.sleep(0.002)

    summaries = []
    for rate, count in ((50.0, 30), (1_000.0, 150)):
        run = run_open_loop(serve, rate, count=count, duration_s=5.0, seed=11)
        scheduled, issued, _, completed = run.seconds()
        summaries.append(summarize_rate(rate, scheduled, issued, completed, slo=0.05, ok=run.ok))
    light, heavy = summaries
    assert heavy.p99 > 5 * light.p99
    assert heavy.p99 > 0.05  # the backlog at overload reaches tens of milliseconds
    assert not heavy.throughput_ok


def test_latency_from_schedule_catches_a_stall_that_send_time_hides():
    """Coordinated omission: one 200 ms stall delays every request queued behind it."""
    calls = iter(range(1_000))

    def serve():
        time.sleep(0.2 if next(calls) == 10 else 0.001)

    run = run_open_loop(serve, 200.0, count=100, duration_s=5.0, seed=7)
    from_schedule = (run.completed_ns - run.scheduled_ns) / 1e9
    from_send = (run.completed_ns - run.started_ns) / 1e9
    slow_from_schedule = int(np.sum(from_schedule > 0.05))
    slow_from_send = int(np.sum(from_send > 0.05))
    assert slow_from_send == 1  # only the stalled request itself looks slow
    assert slow_from_schedule >= 15  # about 0.2 s x 200/s requests arrived during the stall
    assert np.max(from_schedule) >= 0.2
    assert np.quantile(from_schedule, 0.9) > 10 * np.quantile(from_send, 0.9)


def test_a_schedule_faster_than_the_dispatcher_is_generator_limited():
    """Two million arrivals a second: 0.5 us apart, less than one pass of the dispatch loop.

    The planted fault is the schedule, not a mock: the real dispatcher issues as fast
    as it can, each request later than the last, and the probe is judged the generator's.
    """
    run = run_open_loop(lambda: None, 2e6, count=20_000, duration_s=5.0, seed=3)
    scheduled, issued, _, completed = run.seconds()
    result = summarize_rate(2e6, scheduled, issued, completed, slo=0.025, ok=run.ok)
    assert result.generator.verdict == "behind" and result.generator_limited
    assert result.generator.backlog_growth > result.generator.limit
    assert not result.passed
