"""The p99 check over serially correlated latencies: calibrated at a true p99 just above the SLO."""

import numpy as np
import pytest
from scipy import stats
from scipy.signal import lfilter

from perfdsl.stats.load import dependent_p99_check, p99_check, tail_dependence

N = 1_000
MISS_RATE = 0.0105
"""A true p99 just above the SLO: 1.05 % of requests miss it."""


def _ar1_latencies(seed: int, phi: float) -> np.ndarray:
    """Log-normal latencies whose logs are a stationary AR(1) with lag-1 autocorrelation phi."""
    rng = np.random.default_rng(seed)
    start = rng.normal()
    shocks = rng.normal(0.0, np.sqrt(1.0 - phi**2), N)
    return np.exp(lfilter([1.0], [1.0, -phi], shocks, zi=[phi * start])[0])


def _false_passes(check, phi: float, seeds: int = 400) -> float:
    slo = float(np.exp(stats.norm.ppf(1.0 - MISS_RATE)))
    passed = 0
    for seed in range(seeds):
        latency = _ar1_latencies(seed, phi)
        passed += check(latency, int(np.sum(latency > slo)))
    return passed / seeds


def _with_dependence(latency: np.ndarray, misses: int) -> bool:
    return dependent_p99_check(latency.size, misses, tail_dependence(latency))


def _as_if_independent(latency: np.ndarray, misses: int) -> bool:
    return p99_check(latency.size, misses)


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9, 0.99])
def test_the_false_pass_rate_holds_its_stated_one_percent(phi: float) -> None:
    # 400 seeded probes: at most 1 % of them, plus two binomial standard errors (0.5 %).
    assert _false_passes(_with_dependence, phi) <= 0.02


def test_requests_taken_as_independent_pass_far_too_often() -> None:
    """The planted fault, the check this one replaced: 14.8 % false passes at phi = 0.9."""
    assert _false_passes(_as_if_independent, 0.9) > 0.10


def test_independent_requests_lose_nothing() -> None:
    rng = np.random.default_rng(1)
    latency = rng.lognormal(0.0, 0.3, N)
    assert tail_dependence(latency) < 1.3
    assert dependent_p99_check(N, 0, tail_dependence(latency))
    # Identical latencies (read back from nanoseconds as float seconds) are no tail at all.
    assert tail_dependence(np.full(500, 1e-3) + np.arange(500) * 1e-19) == 1.0


def test_a_probe_whose_misses_come_in_runs_counts_each_run_about_once() -> None:
    latency = np.full(N, 1.0)
    latency[::100] = 2.0  # ten slow requests, spread out: independent-looking
    assert tail_dependence(latency) == pytest.approx(1.0, abs=0.05)
    clustered = np.full(N, 1.0)
    clustered[:100] = 2.0  # a hundred, in one run
    assert tail_dependence(clustered) > 20
