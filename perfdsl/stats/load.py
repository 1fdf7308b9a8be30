"""Latency under open-loop load: the p99 check, per-rate summaries and goodput.

Modelled on MLPerf LoadGen's server scenario: latency runs from each request's
*scheduled* arrival (no coordinated omission, as in wrk2), p99 must be within
the SLO with 99 % binomial confidence (LoadGen's early-stopping criterion) over
the requests' effective number, not their count (latencies under load are
serially correlated: `stats.dependence.tail_dependence`), and
the peak rate is found by doubling then bisecting (`FindPeakPerformance`), then
confirmed by a second pass at the goodput, stepping down when the repeat fails,
because on a shared machine the result is not monotone in the rate. A rate
also fails when the load generator fell behind its schedule
(`stats.generator_lag`), which is its own limit, not the system's.

All times are in seconds; rates in requests per second.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Mapping, Sequence
from typing import Literal, TypeVar

import attrs
import numpy as np
from scipy import stats

from perfdsl.bundle.evaluation.load import RateResult
from perfdsl.bundle.stopping import MIN_STRETCHES_TO_PASS, ProbeRule
from perfdsl.stats.dependence import independent_stretches, tail_dependence
from perfdsl.stats.generator_lag import generator_lag
from perfdsl.stats.sequential.proportion import decide, look

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


def dependent_p99_check(n: int, misses: int, dependence: float, percentile: float = 0.99) -> bool:
    """`p99_check` over the effective sample: n / tau requests, misses / tau (rounded up) misses."""
    if dependence < 1.0:
        raise ValueError(f"the dependence is at least 1, got {dependence}")
    effective = max(1, int(n / dependence))
    return p99_check(effective, min(effective, math.ceil(misses / dependence)), percentile)


def fixed_p99_check(latency: np.ndarray, slo: float, percentile: float) -> tuple[bool, float, float]:
    """The fixed probe's verdict on its latencies, with the tail's dependence tau and the
    independent stretches it rests on: `dependent_p99_check` at the SLO's `percentile` (0.95
    for `slo p95`) over their effective number, and only with `MIN_STRETCHES_TO_PASS`
    stretches among them (`stats.dependence.independent_stretches`: a quiet stretch of a
    slowly drifting service time looks like a probe far inside the SLO)."""
    dependence, stretches = tail_dependence(latency, slo), independent_stretches(latency, slo)
    misses = int(np.sum(latency > slo))
    effective_pass = dependent_p99_check(latency.size, misses, dependence, percentile)
    passed = stretches >= MIN_STRETCHES_TO_PASS and effective_pass
    return passed, dependence, stretches


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


def latencies(scheduled: np.ndarray, completed: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Latency from the scheduled arrival (seconds), inf for a failed request.

    The one formula the run's sequential stop and every summary use, so that both
    see the same bits for the same requests.
    """
    return np.where(ok, completed - scheduled, np.inf)


def sequential_stop(slo: float, rule: ProbeRule) -> Callable[[np.ndarray, np.ndarray, np.ndarray], bool]:
    """The load generator's `stop` for a sequential probe: is the look over this prefix decided?"""

    def decided(scheduled_ns: np.ndarray, completed_ns: np.ndarray, ok: np.ndarray) -> bool:
        latency = latencies(scheduled_ns / 1e9, completed_ns / 1e9, ok.astype(bool))
        return look(latency, slo, rule).decision != "open"

    return decided


def summarize_rate(
    offered_rate: float,
    scheduled: np.ndarray,
    issued: np.ndarray,
    completed: np.ndarray,
    slo: float,
    ok: np.ndarray | None = None,
    rule: ProbeRule | None = None,
    percentile: float = 0.99,
) -> RateResult:
    """Summarise one run at one rate from its per-request timestamps (seconds).

    `scheduled` is the intended arrival, `issued` when the generator actually
    issued the request, `completed` when it finished; `ok` marks requests that
    succeeded (failures count as misses and as infinite latency, so an error
    can never improve a percentile).

    The throughput check compares the completion rate with the rate of the
    schedule actually drawn, not the nominal one: a Poisson schedule of a few
    hundred arrivals is several percent off its nominal rate by chance alone.
    The issue lags (issued - scheduled) are judged by `generator_lag`: a growing
    backlog makes the probe the generator's. So does jitter that decides the p99
    check: the requests met the SLO counted from when they were issued, and
    missed it only counted from when they were due. On a machine shared with
    other work the dispatcher, sleeping between arrivals, woke 20-330 ms late
    while the one-core server it fed stayed idle, and such probes sent the goodput
    search to a quarter of the rate the server sustained in quieter probes. Smaller
    jitter stays the system's: latency counts from the schedule, so a late issue
    only makes the system look slower.

    With a sequential `rule` the p99 check is the rule's decision over the
    requests in order (`stats.sequential.proportion.decide`): passed only when
    it decided "pass"; the summaries (percentiles, throughput, lag) keep every
    request recorded, those after the decisive look too.

    The check is of the SLO's own `percentile` (0.95 for `slo p95`; a sequential
    rule carries it, and must agree), and `slo_quantile` reports the latency at it:
    a p95 SLO judged and shown as a p99 one failed probes that met it.
    """
    if rule is not None and rule.percentile != percentile:
        raise ValueError(f"the probe rule is for percentile {rule.percentile}, the SLO's is {percentile}")
    sched = np.asarray(scheduled, dtype=float)
    iss = np.asarray(issued, dtype=float)
    done = np.asarray(completed, dtype=float)
    good = np.ones(sched.size, bool) if ok is None else np.asarray(ok, dtype=bool)
    n = sched.size
    if n < 3 or not (iss.size == done.size == good.size == n):
        raise ValueError("need at least three requests, with one timestamp of each kind per request")
    latency = latencies(sched, done, good)
    misses = int(np.sum(latency > slo))
    # Counted from the issue, latency leaves out the generator's own lateness.
    since_issue = latencies(iss, done, good)
    decision, decided_at = None, None
    if rule is None:
        p99_ok, dependence, stretches = fixed_p99_check(latency, slo, percentile)
        lateness_decided = not p99_ok and fixed_p99_check(since_issue, slo, percentile)[0]
    else:
        stop = decide(latency, slo, rule)
        decision, decided_at = stop.decision, stop.requests
        dependence, stretches = stop.dependence, stop.stretches
        p99_ok = decision == "pass"
        lateness_decided = not p99_ok and decide(since_issue, slo, rule).decision == "pass"
    # "higher" reports an observed latency, never an interpolation, and stays inf-safe.
    quantiles = np.quantile(latency, [0.5, 0.9, 0.99, percentile], method="higher")
    p50, p90, p99, at_slo_percentile = (float(q) for q in quantiles)
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
        p99_ok=p99_ok,
        throughput_ok=achieved >= MIN_ACHIEVED_FRACTION * scheduled_rate,
        lag_ok=lag.verdict != "behind" and not lateness_decided,
        stretches=stretches,
        dependence=dependence,
        decision=decision,
        decided_at=decided_at,
        slo_quantile=at_slo_percentile,
    )


Phase = Literal["start", "step down", "double", "bisect", "confirm"]

CONFIRMATION_RULE = (
    "a goodput is confirmed when its rate met the SLO in two runs and failed in none; "
    "a repeat that fails makes that rate the bracket's upper end and the search steps "
    "down until a rate passes twice or the probe budget runs out"
)
"""The rule `goodput_search` confirms by, as results.json records it beside the probes."""


_T = TypeVar("_T")
SearchSteps = Generator[tuple[float, Phase], RateResult, _T]
"""A search as a generator: yields (rate, phase) to run, is sent each run's result, returns `_T`."""


@attrs.frozen
class Probe:
    """One run made by the search: the rate, why it was run, and its result."""

    rate: float
    phase: Phase
    result: RateResult


@attrs.frozen
class GoodputSearch:
    """The highest confirmed rate, and every probe made to find it (the offered-load curve)."""

    goodput: float
    """The highest rate that passed twice and failed never; when the search ends
    unconfirmed, the best rate that passed at all (0.0 if none did)."""
    confirmed: bool
    """The goodput met the SLO in 1 + `confirmations` runs, at least two, and failed in none."""
    failing: float | None
    """The lowest rate above the goodput that failed: the bracket's upper end (None
    when no rate above it failed)."""
    reason: str
    """Why the goodput is unconfirmed; empty when it is confirmed."""
    probes: tuple[Probe, ...]


def goodput_search(
    start_rate: float,
    *,
    rel_tol: float = 0.05,
    confirmations: int = 1,
    max_probes: int = 30,
    prior: Sequence[tuple[float, RateResult]] = (),
) -> SearchSteps[GoodputSearch]:
    """Find the highest rate that passes reliably, as LoadGen's FindPeakPerformance does,
    then confirm it by the rule a noisy machine allows (`CONFIRMATION_RULE`).

    A generator: it yields each (rate, phase) to run, is sent that run's
    `RateResult`, and returns the `GoodputSearch`. `find_goodput` runs one arm's
    search; `interleave` runs several, one probe of each in turn.

    1. Probe `start_rate`; while it fails, halve it (LoadGen needs a passing start).
    2. Double until a rate fails: the last pass and the first failure bracket the goodput.
    3. Bisect until (fail - pass) / pass <= `rel_tol`.
    4. Confirm: run the best passing rate again until it has passed
       1 + `confirmations` times. If a repeat fails, that rate is the new upper end
       of the bracket, and the search steps down by a factor 1 + `rel_tol` (or to
       the highest lower rate that already passed), probing each rate until one
       passes, then confirms it the same way.

    Why the failing end is not repeated: one failure shows that a rate is not
    reliably served at the SLO, and a capacity claim needs a rate that is. On a
    shared machine, p99 near capacity flips between runs; asking the failing end
    to fail twice as well leaves every such goodput unconfirmed without making
    the passing end any more trustworthy. What a repeat protects against is a
    lucky pass, and that is the end that is repeated.

    A rate is judged on every run at it: the search's and those in `prior` (a sweep
    of the same arm), the pooled view the evaluation takes, so that a rate the sweep
    saw fail is not confirmed by two passes here. A run in which the generator fell
    behind its schedule is no evidence about the system either way: it is run once
    more before the search moves on, and a rate is judged by its other runs when it
    has any. A rate already judged not passing is never run again: no later pass
    could change that judgement, so the search takes it as failed and moves on (the
    doubling back to a start rate that did not pass, a sweep rate that failed; on a
    slow host each such probe cost 7-10 s of a load test that held nothing else).

    At most `max_probes` runs; when they run out first, the result is unconfirmed
    and `reason` says how far the search got.
    """
    if start_rate <= 0 or rel_tol <= 0 or max_probes < 1 or confirmations < 0:
        raise ValueError("need start_rate > 0, rel_tol > 0, max_probes >= 1, confirmations >= 0")
    probes: list[Probe] = []
    runs: dict[float, list[RateResult]] = {}
    for rate, result in prior:
        runs.setdefault(rate, []).append(result)
    needed = 1 + confirmations

    def budget() -> bool:
        return len(probes) < max_probes

    def run(rate: float, phase: Phase) -> Generator[tuple[float, Phase], RateResult, None]:
        result = yield rate, phase
        probes.append(Probe(rate=rate, phase=phase, result=result))
        runs.setdefault(rate, []).append(result)

    def passes(rate: float) -> int:
        """Runs at `rate` that passed, or 0 when any of them failed."""
        judged = [r for r in runs.get(rate, []) if not r.generator_limited] or runs.get(rate, [])
        return len(judged) if judged and all(r.passed for r in judged) else 0

    def sealed(rate: float) -> bool:
        """A run at `rate` that the generator kept up with failed (or ended open): `passes` will
        call the rate not passing whatever another run shows, so another run there is wasted."""
        return any(not r.generator_limited and not r.passed for r in runs.get(rate, []))

    def probe(rate: float, phase: Phase) -> SearchSteps[bool]:
        if sealed(rate):
            return False
        yield from run(rate, phase)
        if probes[-1].result.generator_limited and budget():
            # The generator fell behind: the run says nothing about the system, so run it again.
            yield from run(rate, phase)
        return passes(rate) > 0

    def result(goodput: float, high: float | None, reason: str) -> GoodputSearch:
        confirmed = not reason
        return GoodputSearch(goodput, confirmed, high, reason, tuple(probes))

    def out_of_budget(stage: str) -> str:
        return f"the probe budget ({max_probes} runs) ran out {stage}"

    rate = start_rate
    phase: Phase = "start"
    while not (yield from probe(rate, phase)):
        if not budget():
            return result(0.0, rate, out_of_budget(f"before any rate passed (lowest tried {rate:.4g} rps)"))
        rate, phase = rate / 2.0, "step down"
    low: float = rate
    high: float | None = None
    while high is None and budget():
        if (yield from probe(low * 2.0, "double")):
            low *= 2.0
        else:
            high = low * 2.0
    while high is not None and (high - low) / low > rel_tol and budget():
        mid = (low + high) / 2.0
        if (yield from probe(mid, "bisect")):
            low = mid
        else:
            high = mid
    while True:
        passed = passes(low)
        if passed >= needed:
            # With no second pass asked for (a quick run), a single pass is all there is.
            return result(low, high, "" if passed > 1 else "no second pass was asked for")
        if passed:
            if not budget():
                stage = f"before {low:.4g} rps passed a second time ({passed} of {needed} passes)"
                return result(low, high, out_of_budget(stage))
            yield from probe(low, "confirm")
            continue
        # A repeat failed: the rate is not reliably served. It closes the bracket; look below it.
        high = low
        floor = max((r for r in runs if r < low and passes(r)), default=0.0)
        candidate = low / (1.0 + rel_tol)
        while candidate > floor:
            if not budget():
                stage = f"stepping down below {high:.4g} rps, which failed a repeat"
                return result(floor, high, out_of_budget(stage))
            if (yield from probe(candidate, "step down")):
                break
            high, candidate = candidate, candidate / (1.0 + rel_tol)
        else:
            # A lower rate already passed: it is the next candidate, with its runs so far.
            candidate = floor
        low = candidate


def find_goodput(
    run_rate: Callable[[float], RateResult],
    start_rate: float,
    *,
    rel_tol: float = 0.05,
    confirmations: int = 1,
    max_probes: int = 30,
    prior: Sequence[tuple[float, RateResult]] = (),
) -> GoodputSearch:
    """One search (`goodput_search`), each probe run by `run_rate`."""
    search = goodput_search(
        start_rate, rel_tol=rel_tol, confirmations=confirmations, max_probes=max_probes, prior=prior
    )
    try:
        rate, _ = next(search)
        while True:
            rate, _ = search.send(run_rate(rate))
    except StopIteration as done:
        return done.value


def interleave(
    searches: Mapping[str, SearchSteps[GoodputSearch]],
    run: Callable[[str, float, Phase], RateResult | None],
) -> dict[str, GoodputSearch]:
    """Run several searches one probe each in turn, in the mapping's order.

    Run one after the other, two arms' searches see the machine at different times,
    and on a shared machine its load drifts in minutes: a baseline searched while
    other work ran came out at 40 % of the change's goodput, for a change that
    makes a request 7 % faster. Taking turns puts the drift on both.

    `run(name, rate, phase)` returns the probe's result, or None when that search
    may not run any more (its time budget is spent): it ends there, without a result.
    """
    pending = {name: next(search) for name, search in searches.items()}
    done: dict[str, GoodputSearch] = {}
    while pending:
        for name in list(pending):
            rate, phase = pending.pop(name)
            result = run(name, rate, phase)
            if result is None:
                continue
            try:
                pending[name] = searches[name].send(result)
            except StopIteration as finished:
                done[name] = finished.value
    return done


def capacity_change(goodput_baseline: float, goodput_change: float) -> float:
    """Capacity change at the same SLO: goodput(change) / goodput(baseline)."""
    if goodput_baseline <= 0:
        raise ValueError("the baseline has no goodput: capacity change is undefined")
    return goodput_change / goodput_baseline
