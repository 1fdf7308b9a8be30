"""Latency under open-loop load: the p99 check, per-rate summaries and goodput.

Modelled on MLPerf LoadGen's server scenario: latency runs from each request's
*scheduled* arrival (no coordinated omission, as in wrk2), p99 must be within
the SLO with 99 % binomial confidence (LoadGen's early-stopping criterion), and
the peak rate is found by doubling then bisecting (`FindPeakPerformance`), then
confirmed by repeating both ends of the bracket, because the result is not
monotone in the rate. A rate also fails when the load generator fell behind its
schedule (`stats.generator_lag`), which is its own limit, not the system's.

All times are in seconds; rates in requests per second.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

import attrs
import numpy as np
from scipy import stats

from perfdsl.bundle.evaluation.load import RateResult
from perfdsl.stats.generator_lag import generator_lag

MIN_ACHIEVED_FRACTION = 0.98
"""A rate passes only if completions keep up with at least 98 % of the schedule."""


def p99_check(n: int, misses: int, percentile: float = 0.99, confidence: float = 0.99) -> bool:
    """Does a run of n completions with `misses` over the SLO show the percentile <= SLO?

    One-sided binomial test: if the true miss rate were 1 - percentile (p99
    exactly at the SLO), the chance of seeing at most `misses` misses must be
    at most 1 - confidence. With no misses that is 0.99^n <= 0.01, so
    n >= ln 0.01 / ln 0.99 = 458.2: 459 completions pass, 458 do not (LoadGen's
    early stopping gives the same 459).
    """
    if n < 0 or not 0 <= misses <= n:
        raise ValueError(f"need 0 <= misses <= n, got n={n}, misses={misses}")
    return bool(stats.binom.cdf(misses, n, 1.0 - percentile) <= 1.0 - confidence)


def min_completions(misses: int, percentile: float = 0.99, confidence: float = 0.99) -> int:
    """The fewest completions with `misses` misses that pass `p99_check`."""
    # The CDF falls as n grows, so bracket by doubling, then bisect.
    # n = misses always fails (every completion missed: the CDF is 1).
    lo, hi = misses, max(1, 2 * misses)
    while not p99_check(hi, misses, percentile, confidence):
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if p99_check(mid, misses, percentile, confidence):
            hi = mid
        else:
            lo = mid
    return hi


def summarize_rate(
    offered_rate: float,
    scheduled: np.ndarray,
    issued: np.ndarray,
    completed: np.ndarray,
    slo: float,
    ok: np.ndarray | None = None,
) -> RateResult:
    """Summarise one run at one rate from its per-request timestamps (seconds).

    `scheduled` is the intended arrival, `issued` when the generator actually
    issued the request, `completed` when it finished; `ok` marks requests that
    succeeded (failures count as misses and as infinite latency, so an error
    can never improve a percentile).

    The throughput check compares the completion rate with the rate of the
    schedule actually drawn, not the nominal one: a Poisson schedule of a few
    hundred arrivals is several percent off its nominal rate by chance alone.
    The issue lags (issued - scheduled) are judged by `generator_lag`: only a
    growing backlog fails the rate, not wake-up jitter.
    """
    sched = np.asarray(scheduled, dtype=float)
    iss = np.asarray(issued, dtype=float)
    done = np.asarray(completed, dtype=float)
    good = np.ones(sched.size, bool) if ok is None else np.asarray(ok, dtype=bool)
    n = sched.size
    if n < 3 or not (iss.size == done.size == good.size == n):
        raise ValueError("need at least three requests, with one timestamp of each kind per request")
    latency = np.where(good, done - sched, np.inf)
    misses = int(np.sum(latency > slo))
    # "higher" reports an observed latency, never an interpolation, and stays inf-safe.
    p50, p90, p99 = (float(q) for q in np.quantile(latency, [0.5, 0.9, 0.99], method="higher"))
    lag = generator_lag(sched, iss, slo)
    scheduled_rate = (n - 1) / float(np.ptp(sched))
    finished = done[good]
    achieved = (finished.size - 1) / float(np.ptp(finished)) if finished.size > 1 else 0.0
    return RateResult(
        offered_rate=float(offered_rate),
        scheduled_rate=scheduled_rate,
        achieved_rate=achieved,
        n=n,
        misses=misses,
        errors=int(n - np.sum(good)),
        p50=p50,
        p90=p90,
        p99=p99,
        max=float(latency.max()),
        generator=lag,
        slo=float(slo),
        p99_ok=p99_check(n, misses),
        throughput_ok=achieved >= MIN_ACHIEVED_FRACTION * scheduled_rate,
        lag_ok=lag.verdict != "behind",
    )


Phase = Literal["start", "step down", "double", "bisect", "confirm"]


@attrs.frozen
class Probe:
    """One run made by the search: the rate, why it was run, and its result."""

    rate: float
    phase: Phase
    result: RateResult


@attrs.frozen
class GoodputSearch:
    """The highest passing rate, and every probe made to find it (the offered-load curve)."""

    goodput: float
    """The highest rate that passed and was confirmed; 0.0 if no rate passed."""
    confirmed: bool
    """The second pass agreed at both ends of the bracket: the goodput passed again and
    the failing rate above it failed again. False when the budget ran out first or a
    repeat disagreed; `goodput` is then the best unconfirmed candidate and must be
    labelled so."""
    probes: tuple[Probe, ...]


def find_goodput(
    run_rate: Callable[[float], RateResult],
    start_rate: float,
    *,
    rel_tol: float = 0.05,
    confirmations: int = 1,
    max_probes: int = 30,
) -> GoodputSearch:
    """Find the highest rate that passes, as LoadGen's FindPeakPerformance does.

    1. Probe `start_rate`; while it fails, halve it (LoadGen needs a passing start).
    2. Double until a rate fails: the last pass and the first failure bracket the goodput.
    3. Bisect until (fail - pass) / pass <= `rel_tol`.
    4. Repeat the best passing rate `confirmations` times (the research notes
       recommend 3); if any repeat fails, step down by a factor 1 + rel_tol
       and probe and confirm again. Then repeat the failing rate above it as
       often: a bracket whose upper end passes on a second pass is not one.

    A run in which the generator fell behind its schedule is run once more
    before the search moves on: it is no evidence about the system either way.

    At most `max_probes` calls of `run_rate`.
    """
    if start_rate <= 0 or rel_tol <= 0 or max_probes < 1 or confirmations < 0:
        raise ValueError("need start_rate > 0, rel_tol > 0, max_probes >= 1, confirmations >= 0")
    probes: list[Probe] = []

    def probe(rate: float, phase: Phase) -> bool:
        result = run_rate(rate)
        probes.append(Probe(rate=rate, phase=phase, result=result))
        if result.generator_limited and budget():
            # The generator fell behind: the run says nothing about the system, so run it again.
            result = run_rate(rate)
            probes.append(Probe(rate=rate, phase=phase, result=result))
        return result.passed

    def budget() -> bool:
        return len(probes) < max_probes

    rate = start_rate
    phase: Phase = "start"
    while not probe(rate, phase):
        if not budget():
            return GoodputSearch(goodput=0.0, confirmed=False, probes=tuple(probes))
        rate, phase = rate / 2.0, "step down"
    low: float = rate
    high: float | None = None
    while high is None and budget():
        if probe(low * 2.0, "double"):
            low *= 2.0
        else:
            high = low * 2.0
    while high is not None and (high - low) / low > rel_tol and budget():
        mid = (low + high) / 2.0
        if probe(mid, "bisect"):
            low = mid
        else:
            high = mid
    while True:
        for _ in range(confirmations):
            if not budget():
                return GoodputSearch(goodput=low, confirmed=False, probes=tuple(probes))
            if not probe(low, "confirm"):
                break
        else:
            # The pass held; now the failing end must fail again, or the bracket is not known.
            if high is not None:
                for _ in range(confirmations):
                    if not budget() or probe(high, "confirm"):
                        return GoodputSearch(goodput=low, confirmed=False, probes=tuple(probes))
            return GoodputSearch(goodput=low, confirmed=True, probes=tuple(probes))
        # The rate is not reliably passing: it is the new failing end; step down and probe afresh.
        high, candidate = low, low / (1.0 + rel_tol)
        while budget():
            if probe(candidate, "step down"):
                low = candidate
                break
            high, candidate = candidate, candidate / (1.0 + rel_tol)
        else:
            return GoodputSearch(goodput=low, confirmed=False, probes=tuple(probes))


def capacity_change(goodput_baseline: float, goodput_change: float) -> float:
    """Capacity change at the same SLO: goodput(change) / goodput(baseline)."""
    if goodput_baseline <= 0:
        raise ValueError("the baseline has no goodput: capacity change is undefined")
    return goodput_change / goodput_baseline
