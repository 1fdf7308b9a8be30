"""Wake-up jitter against a generator falling behind its schedule, on planted issue lags."""

import numpy as np
import pytest

from perfdsl.stats.generator_lag import generator_lag
from perfdsl.stats.load import summarize_rate

SLO = 0.025  # a 1.25 ms lag budget
RATE = 500.0


def schedule(n: int = 2_000, seed: int = 0) -> np.ndarray:
    return np.cumsum(np.random.default_rng(seed).exponential(1 / RATE, n))


def dispatcher(sched: np.ndarray, cost: float) -> np.ndarray:
    """Issue times of a dispatcher that needs `cost` seconds per issue and is never early."""
    issued = np.empty_like(sched)
    ready = 0.0
    for i, t in enumerate(sched):
        issued[i] = max(t, ready)
        ready = issued[i] + cost
    return issued


def test_a_schedule_the_generator_cannot_keep_is_behind():
    sched = schedule()
    # 2.2 ms per issue against a 2 ms mean gap: each request inherits the last one's lateness.
    issued = dispatcher(sched, cost=2.2e-3)
    lag = generator_lag(sched, issued, SLO)
    assert lag.verdict == "behind"
    assert lag.backlog_growth > 10 * lag.limit  # about 0.1 s per second, over 4 s
    assert lag.backlog_slope == pytest.approx(RATE * 2.2e-3 - 1, abs=0.05)
    done = issued + 1e-3
    result = summarize_rate(RATE, sched, issued, done, SLO)
    assert result.generator_limited and not result.lag_ok and not result.passed


def test_large_jitter_without_a_growing_backlog_is_not_behind():
    sched = schedule()
    rng = np.random.default_rng(1)
    # Late wake-ups of 2 ms on average, some of 10 ms: the p99 is far over the budget.
    issued = sched + rng.exponential(2e-3, sched.size)
    lag = generator_lag(sched, issued, SLO)
    assert lag.p99 > 5 * lag.limit and lag.p50 > lag.limit / 2
    assert lag.verdict == "jitter"
    assert abs(lag.backlog_growth) < lag.limit
    result = summarize_rate(RATE, sched, issued, issued + 1e-3, SLO)
    assert result.lag_ok and not result.generator_limited


def test_jitter_that_grows_as_the_machine_gets_busier_is_not_a_backlog():
    # At 150 rps over 13 s the wake-up delay rises from about 1 ms to about 5 ms as other
    # work arrives: the lag's level moves by far more than the budget, at 0.05 % a second.
    sched = np.cumsum(np.random.default_rng(2).exponential(1 / 150, 2_000))
    rng = np.random.default_rng(3)
    level = np.where(sched < sched[-1] / 2, 1e-3, 5e-3)
    issued = sched + rng.exponential(level)
    lag = generator_lag(sched, issued, SLO)
    assert lag.backlog_growth > 2 * lag.limit and lag.backlog_slope < 0.01
    assert lag.verdict == "jitter"


def test_a_steep_trend_too_small_to_matter_is_not_a_backlog():
    # 40 requests in 20 ms at 2,000 rps, lag rising 5 % a second: 1 ms at the end, under 1.25 ms.
    sched = np.linspace(0.0, 0.02, 40)
    lag = generator_lag(sched, sched * 1.05, SLO)
    assert lag.backlog_slope == pytest.approx(0.05) and lag.backlog_growth < lag.limit
    assert lag.verdict == "on time"


def test_a_single_late_wake_up_at_the_end_is_not_a_backlog():
    sched = schedule()
    issued = sched + 1e-4
    # The dispatcher stalls for 200 ms just before the probe ends: every arrival in
    # that window is issued when it wakes (about 100 requests, lags from 200 ms down).
    stall = sched[-200]
    window = (sched >= stall) & (sched < stall + 0.2)
    issued[window] = stall + 0.2
    lag = generator_lag(sched, issued, SLO)
    assert lag.verdict == "jitter" and abs(lag.backlog_growth) < 1e-6
    # A least-squares trend would follow the stall and call the generator behind.
    ols_growth = np.polyfit(sched, issued - sched, 1)[0] * np.ptp(sched)
    assert ols_growth > lag.limit


def test_a_punctual_generator_is_on_time():
    sched = schedule()
    lag = generator_lag(sched, sched + 5e-5, SLO)
    assert lag.verdict == "on time" and lag.p99 == pytest.approx(5e-5)


def test_too_few_requests_are_refused():
    with pytest.raises(ValueError, match="three requests"):
        generator_lag(np.array([0.0, 1.0]), np.array([0.0, 1.0]), SLO)
