"""The offered-load curve and the goodput, recomputed from each probe's raw records.

Every probe of the run's load search left one CSV of per-request timestamps;
each is summarised again here with `summarize_rate` (latency from the
*scheduled* arrival, the p99 check, throughput, and whether the generator
fell behind its schedule), never taken from what the run concluded. The p99
check is the rule the bundle records: the sequential one
(`stats.sequential.proportion`) replayed over the probe's requests in order,
which reaches the run's own decision and stopping look bit for bit, or, for a
bundle before results/10, the fixed binomial test over them all. The
goodput of an arm is the highest rate at which every probe at that rate and
every lower rate passed: a failure below a candidate caps the goodput under
it, however often a higher rate passed. It is "confirmed" when that rate passed
in at least two probes (`stats.load.CONFIRMATION_RULE`: full runs repeat it,
and step down when the repeat fails) and no rate above the first failure
passed; a curve that fails and then passes again is not monotone, and its
goodput is unconfirmed. Otherwise the best single pass is reported, marked
unconfirmed.

A goodput is the arm's capacity only when the first rate above it failed on the
system's account (p99 over the SLO, or completions not keeping up) while the
generator kept its schedule. When that rate failed because the load generator
fell behind (a growing issue lag, `stats.generator_lag`) or woke so late that
its lateness alone decided the p99 check (`stats.load.summarize_rate`), or no
rate above it was probed, the SLO was never judged
above the goodput: it is a lower bound, and the capacity change built on it is
a bound too, never a number to multiply a fleet by.

Each arm's goodput is therefore a bracket [highest passing, lowest failing on
the system's account), and the capacity ratio is the interval those brackets
allow (`stats.capacity`): two single-pass goodputs whose quotient is 1.491
place it only in (1.24, 1.79). The interval is marked unconfirmed unless both
goodputs passed a repeat.
"""

from __future__ import annotations

import math

import attrs
import numpy as np

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.evaluation.load import (
    P99_UNDECIDED,
    UNDECIDED,
    CurvePoint,
    Goodput,
    LoadEvaluation,
    RateResult,
)
from perfdsl.bundle.load import LoadProbeRecord, LoadRecord, read_probe_csv
from perfdsl.bundle.stopping import ProbeRule
from perfdsl.evaluate.inputs import BundleInputs
from perfdsl.evaluate.quality import span_contended
from perfdsl.evaluate.value import capacity
from perfdsl.numbers import rate as fmt_rate
from perfdsl.stats.capacity import GoodputBracket, capacity_interval
from perfdsl.stats.load import summarize_rate


def evaluate_load(inputs: BundleInputs, load: LoadRecord) -> LoadEvaluation:
    """Recompute every probe and each arm's goodput from results.json's `load` record."""
    slo = load.slo_seconds
    if slo is None:
        raise ValueError("a load test without an SLO has no goodput: the caller checks for one")
    probes = load.probes
    rule = load.probe_rule
    arms = tuple(
        goodput(arm, [_point(inputs, p, slo, rule, load.percentile) for p in probes if p.arm == arm])
        for arm in ARMS
    )
    return attrs.evolve(compare_arms(slo, load.percentile, arms), probe_rule=rule)


def compare_arms(slo: float, percentile: float, arms: tuple[Goodput, ...]) -> LoadEvaluation:
    """Both arms' goodputs and the capacity change they support: exact, a bound, or none."""
    base, change = (next(g for g in arms if g.arm == arm) for arm in ARMS)
    cap, missing, bound, interval = None, None, None, None
    if base.goodput <= 0:
        missing = "the baseline passed at no rate: capacity change undefined"
    elif change.goodput <= 0:
        missing = "the change passed at no rate: no load is served at the SLO"
    elif base.lower_bound and change.lower_bound:
        undecided = [_undecided_above(g) for g in (base, change) if P99_UNDECIDED in g.limited_by]
        why = f" ({'; '.join(undecided)})" if undecided else ""
        missing = (
            "neither goodput is a capacity, so their ratio says nothing about the change: no rate "
            f"above either failed on the SLO or on throughput{why}"
        )
    else:
        cap = capacity(base.goodput, change.goodput)
        bound = "at most" if base.lower_bound else "at least" if change.lower_bound else "exact"
        interval = capacity_interval(_bracket(base), _bracket(change))
    return LoadEvaluation(slo, percentile, arms, cap, missing, bound, interval)


def _undecided_above(arm: Goodput) -> str:
    """Where an arm's probes stayed open above its goodput, and how many higher rates passed:
    an open probe under rates that passed is a probe short of evidence, not the arm's limit."""
    rate = min(p.rate for p in arm.curve if p.rate > arm.goodput and not p.passed)
    said = f"the {arm.arm}'s probes at {fmt_rate(rate)} stayed undecided at their cap"
    higher = len(arm.passed_above)
    if higher:
        said += f", though {higher} higher rate{'s' if higher > 1 else ''} passed"
    return said


def _bracket(arm: Goodput) -> GoodputBracket:
    return GoodputBracket(arm.goodput, math.inf if arm.failing is None else arm.failing, arm.confirmed)


def goodput(arm: str, points: list[CurvePoint]) -> Goodput:
    """The highest rate below the lowest failing one at which every probe passed (preferring
    one that passed twice), what the next rate above it failed, and the lowest rate above it
    that failed on the system's account, which closes its bracket.

    A probe in which the generator fell behind is no evidence about the system, so a
    rate is judged by its other probes when it has any (the search runs such a rate
    again); a rate with no other probe fails, on the generator's account. The next rate
    may be undecided rather than failed (open at its cap): the bracket is then closed by
    a higher rate that did fail, where there is one. Read off the next rate alone, a
    sweep's failure at 4000 rps above open probes at 250-3000 rps was reported as "no
    rate above either failed".
    """
    curve = tuple(sorted(points, key=lambda p: (p.rate, p.index)))
    rates: dict[float, list[CurvePoint]] = {}
    for point in curve:
        rates.setdefault(point.rate, []).append(point)
    judged = {rate: [p for p in runs if not _generator_limited(p)] or runs for rate, runs in rates.items()}
    failing_rates = [r for r, runs in judged.items() if not all(p.passed for p in runs)]
    first_failure = min(failing_rates, default=math.inf)
    passing = [r for r, runs in judged.items() if all(p.passed for p in runs) and r < first_failure]
    passed_above = tuple(r for r, runs in judged.items() if r > first_failure and all(p.passed for p in runs))
    repeated = [r for r in passing if len(judged[r]) > 1]
    best = max(repeated) if repeated else max(passing, default=0.0)
    above = next((r for r in judged if r > best and r not in passing), None)
    failed = [p for p in judged[above] if not p.passed] if above is not None else []
    limited_by = _criteria(failed)
    closing = [r for r, runs in judged.items() if r > best and any(_system_failure(p) for p in runs)]
    failing = min(closing, default=None)
    confirmed = bool(repeated) and not passed_above
    deciding = {best, above, failing}
    contended = tuple(sorted({p.rate for p in curve if p.rate in deciding and p.contended}))
    lower_bound = failing is None
    return Goodput(arm, best, failing, confirmed, curve, limited_by, lower_bound, passed_above, contended)


def _generator_limited(point: CurvePoint) -> bool:
    return point.result is not None and point.result.generator_limited


def _system_failure(point: CurvePoint) -> bool:
    """The probe failed on the system's account: p99 or throughput, with the generator on schedule.

    When the generator fell behind, its requests arrived late and bunched: completions
    cannot outpace late issues, and latency from the schedule carries the backlog, so
    neither failure is evidence about the system.
    """
    r = point.result
    return r is not None and not _generator_limited(point) and not (r.throughput_ok and _p99_not_refuted(r))


def _p99_not_refuted(result: RateResult) -> bool:
    """The p99 passed, or a sequential probe stopped at its cap still undecided.

    An undecided probe is not passed (no goodput rests on it), but it did not show the
    p99 over the SLO either: it cannot close a goodput's bracket, which would then read
    as a capacity the search had found where its probes merely ran out of evidence.
    """
    return result.p99_ok or result.decision == UNDECIDED


def _criteria(failed: list[CurvePoint]) -> tuple[str, ...]:
    """The criteria the probes at one failing rate failed, in a fixed order."""
    names: list[str] = []
    for point in failed:
        r = point.result
        checks = (
            (("no requests recorded", False),)
            if r is None
            else (
                (P99_UNDECIDED if r.decision == UNDECIDED else "p99", r.p99_ok),
                ("throughput", r.throughput_ok),
                ("generator lag", r.lag_ok),
            )
        )
        names += [name for name, ok in checks if not ok and name not in names]
    order = ("p99", P99_UNDECIDED, "throughput", "generator lag", "no requests recorded")
    return tuple(sorted(names, key=order.index))


def _point(
    inputs: BundleInputs, probe: LoadProbeRecord, slo: float, rule: ProbeRule | None, percentile: float
) -> CurvePoint:
    columns = _columns(inputs, probe.records)
    rate, index, phase = probe.rate, probe.index, probe.phase
    if columns["scheduled_ns"].size < 3:
        return CurvePoint(index, rate, phase, None, "fewer than three requests were recorded")
    result = summarize_rate(
        rate,
        columns["scheduled_ns"] / 1e9,
        columns["issued_ns"] / 1e9,
        columns["completed_ns"] / 1e9,
        slo,
        columns["ok"].astype(bool),
        rule,
        percentile,
    )
    return CurvePoint(
        index, rate, phase, result, None, span_contended(probe.machine_start, probe.machine_end)
    )


def _columns(inputs: BundleInputs, relpath: str) -> dict[str, np.ndarray]:
    return read_probe_csv(inputs.path / relpath)
