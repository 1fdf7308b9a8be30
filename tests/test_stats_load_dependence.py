"""The p99 check over serially correlated latencies: calibrated at a true p99 just above the SLO."""

import numpy as np
import pytest
from scipy import stats
from scipy.signal import lfilter

from perfdsl.bundle.stopping import MIN_STRETCHES_TO_PASS
from perfdsl.stats import load
from perfdsl.stats.dependence import independent_stretches, tail_dependence
from perfdsl.stats.load import dependent_p99_check, fixed_p99_check, p99_check

N = 1_000
MISS_RATE = 0.0105
"""A true p99 just above the SLO: 1.05 % of requests miss it."""


def _ar1_latencies(seed: int, phi: float) -> np.ndarray:
    """Log-normal latencies whose logs are a stationary AR(1) with lag-1 autocorrelation phi."""
    rng = np.random.default_rng(seed)
    start = rng.normal()
    shocks = rng.normal(0.0, np.sqrt(1.0 - phi**2), N)
    return np.exp(lfilter([1.0], [1.0, -phi], shocks, zi=[phi * start])[0])


SLO = float(np.exp(stats.norm.ppf(1.0 - MISS_RATE)))


def _false_passes(check, phi: float, seeds: int = 400) -> float:
    passed = 0
    for seed in range(seeds):
        latency = _ar1_latencies(seed, phi)
        passed += check(latency, int(np.sum(latency > SLO)))
    return passed / seeds


def _with_dependence(latency: np.ndarray, misses: int) -> bool:
    """The fixed probe's verdict: the effective sample's test, with enough independent stretches."""
    return fixed_p99_check(latency, SLO, 0.99)[0]


def _as_if_independent(latency: np.ndarray, misses: int) -> bool:
    return p99_check(latency.size, misses)


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_the_false_pass_rate_holds_its_stated_one_percent(phi: float) -> None:
    # 400 seeded probes: at most 1 % of them, plus two binomial standard errors (0.5 %).
    assert _false_passes(_with_dependence, phi) <= 0.02


def test_requests_taken_as_independent_pass_far_too_often() -> None:
    """The planted fault, the check this one replaced: 14.8 % false passes at phi = 0.9."""
    assert _false_passes(_as_if_independent, 0.9) > 0.10


def test_independent_requests_lose_nothing() -> None:
    rng = np.random.default_rng(1)
    latency = rng.lognormal(0.0, 0.3, N)
    assert tail_dependence(latency, 2.0) < 1.3
    assert dependent_p99_check(N, 0, tail_dependence(latency, 2.0))
    # Identical latencies (read back from nanoseconds as float seconds) are no tail at all.
    assert tail_dependence(np.full(500, 1e-3) + np.arange(500) * 1e-19, 0.025) == 1.0


def test_slowly_drifting_service_times_far_below_the_slo_are_no_tail() -> None:
    """At a low rate every latency is a service time far under the SLO; their slow drift (the
    machine's clock and other work) must not make the check demand more requests than exist."""
    drift = 1e-3 * (1 + 0.1 * np.sin(np.arange(N) / 50))
    assert tail_dependence(drift, 0.025) == 1.0
    assert tail_dependence(drift, 0.0015) > 10  # the same drift near the SLO does cluster


def test_a_probe_whose_misses_come_in_runs_counts_each_run_about_once() -> None:
    latency = np.full(N, 1.0)
    latency[::100] = 2.0  # ten slow requests, spread out: independent-looking
    assert tail_dependence(latency, 2.5) == pytest.approx(1.0, abs=0.05)
    clustered = np.full(N, 1.0)
    clustered[:100] = 2.0  # a hundred, in one run
    assert tail_dependence(clustered, 2.5) > 20


def _mm1(rate: float, mu: float, rng: np.random.Generator, warm: int = 2000) -> np.ndarray:
    """Sojourn times of N requests of an M/M/1 queue, after `warm` (Lindley's recursion)."""
    gaps, service = rng.exponential(1 / rate, N + warm), rng.exponential(1 / mu, N + warm)
    wait = np.zeros(N + warm)
    for i in range(1, N + warm):
        wait[i] = max(0.0, wait[i - 1] + service[i - 1] - gaps[i])
    return (wait + service)[warm:]


def _queue_passes(p99_over_slo: float, seeds: int) -> tuple[float, float]:
    """Shares of M/M/1 probes passed by the plain check and by this one, at a true p99 of
    `p99_over_slo` times the SLO (the sojourn time is exponential: p99 = ln 100 / (mu - rate))."""
    mu, slo = 1000.0, 0.05
    rate = mu - np.log(100) / (slo * p99_over_slo)
    plain = dependent = 0
    for seed in range(seeds):
        latency = _mm1(rate, mu, np.random.default_rng(seed))
        misses = int(np.sum(latency > slo))
        plain += p99_check(N, misses)
        dependent += dependent_p99_check(N, misses, tail_dependence(latency, slo))
    return plain / seeds, dependent / seeds


@pytest.mark.slow
def test_a_queue_near_saturation_holds_the_stated_one_percent() -> None:
    """An M/M/1 at 91 % utilisation whose true p99 is 2 % above the SLO: 1000 requests hold a
    few busy periods. The plain check passes most probes. With the near-SLO level at half the
    SLO (the planted fault: busy periods that stay under it look like no tail) 26 % passed."""
    plain, dependent = _queue_passes(1.02, seeds=200)
    assert plain > 0.8
    assert dependent <= 0.02  # 1 % plus two binomial standard errors over 200 probes


def test_a_queue_well_inside_the_slo_still_passes() -> None:
    """The power the check keeps: at a true p99 of a fifth of the SLO most probes pass."""
    _, dependent = _queue_passes(0.2, seeds=100)
    assert dependent >= 0.5


@pytest.mark.parametrize("phi", [0.99, pytest.param(0.995, marks=pytest.mark.slow)])
def test_a_service_time_drifting_very_slowly_holds_the_stated_one_percent(phi: float) -> None:
    """Log-AR(1) latencies at lag-1 0.99 (0.995) and a true p99 just above the SLO: about five
    (2.5) independent stretches in 1000 requests. None of 300 probes pass; without the
    stretches a pass needs, 2.7 % (12.3 %) did, the plain check 68 %, and the floor at half the
    SLO 27 %."""
    assert _false_passes(_with_dependence, phi, seeds=300) <= 0.01
    assert _false_passes(_as_if_independent, phi, seeds=300) > 0.5


def test_without_the_stretches_the_drifting_service_time_passes_too_often(monkeypatch) -> None:
    """The planted fault: the same probes with no stretches asked of a pass."""
    monkeypatch.setattr(load, "MIN_STRETCHES_TO_PASS", 0.0)
    assert _false_passes(_with_dependence, 0.995, seeds=300) > 0.05


def test_a_probe_counts_the_stretches_of_its_own_drift() -> None:
    rng = np.random.default_rng(3)
    independent = rng.lognormal(0.0, 0.3, N)
    assert independent_stretches(independent, 2.0) > 0.8 * N
    # A quiet stretch of a slow drift: one level shift over the probe is one stretch.
    drifting = _ar1_latencies(5, 0.995)
    assert independent_stretches(drifting, SLO) < MIN_STRETCHES_TO_PASS
    # Latencies equal to the nanosecond, read back as float seconds, hold no drift; ranked
    # without the rounding to a level, their float error alone (it grows with the timestamps)
    # made three stretches of a thousand constant latencies.
    scheduled = np.arange(N) / 100.0
    constant = (scheduled + 0.001) - scheduled
    assert independent_stretches(constant, 0.01) == N
    # Failed requests (infinite latency) are the slowest, not a reason to fail the count.
    with_failures = np.where(np.arange(N) % 50 == 0, np.inf, independent)
    assert independent_stretches(with_failures, 2.0) > 0.8 * N
