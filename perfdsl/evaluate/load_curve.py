"""The offered-load curve and the goodput, recomputed from each probe's raw records.

Every probe of the run's load search left one CSV of per-request timestamps;
each is summarised again here with `summarize_rate` (latency from the
*scheduled* arrival, p99 binomial check, throughput and generator lag), never
taken from what the run concluded. The goodput of an arm is the highest rate at
which every probe passed; it is "confirmed" when that rate passed more than once
(a repeat, as LoadGen's search confirms). When no rate was confirmed the best
single pass is reported, marked unconfirmed.

A goodput is the arm's capacity only when the first rate above it failed on the
system's account (p99 over the SLO, or completions not keeping up). When that
rate failed only because the load generator fell behind its own schedule, or
no rate above it was probed, the SLO was never judged above the goodput: it is
a lower bound, and the capacity change built on it is a bound too, never a
number to multiply a fleet by.

Each arm's goodput is therefore a bracket [highest passing, lowest failing on
the system's account), and the capacity ratio is the interval those brackets
allow (`stats.capacity`): two single-pass goodputs whose quotient is 1.491
place it only in (1.24, 1.79). The interval is marked unconfirmed unless both
goodputs passed a repeat.
"""

from __future__ import annotations

import csv
import math
from typing import Literal

import attrs
import numpy as np

from perfdsl.bundle.load import LoadProbeRecord, LoadRecord
from perfdsl.evaluate.inputs import BundleInputs
from perfdsl.evaluate.value import Capacity, capacity
from perfdsl.stats.capacity import CapacityInterval, GoodputBracket, capacity_interval
from perfdsl.stats.load import RateResult, summarize_rate

ARMS = ("baseline", "change")
CapacityBound = Literal["exact", "at most", "at least"]


@attrs.frozen
class CurvePoint:
    """One probe: the rate, why it ran, and its summary recomputed from raw records."""

    index: int
    rate: float
    phase: str
    result: RateResult | None
    missing: str | None
    """Why the probe has no summary (fewer than two requests)."""

    @property
    def passed(self) -> bool:
        return self.result is not None and self.result.passed


@attrs.frozen
class Goodput:
    """The highest passing rate of one arm."""

    arm: str
    goodput: float
    """Requests per second; 0.0 when no rate passed."""
    confirmed: bool
    curve: tuple[CurvePoint, ...]
    """Probes in rate order (ties in the order they ran)."""
    limited_by: tuple[str, ...]
    """What the lowest failing rate above the goodput failed: "p99", "throughput",
    "generator lag"; empty when no rate above the goodput failed."""
    lower_bound: bool
    """The arm may serve more than `goodput` at the SLO: the rate above it failed
    only on generator lag, or none above it failed."""
    failing: float
    """The lowest rate above the goodput that failed on the system's account; inf when none did."""


@attrs.frozen
class LoadEvaluation:
    """Both arms' curves and goodputs, and the capacity change at the same SLO."""

    slo_seconds: float
    percentile: float
    arms: tuple[Goodput, ...]
    capacity: Capacity | None
    capacity_missing: str | None
    capacity_bound: CapacityBound | None
    """"exact" when both goodputs are capacities; "at most" when the baseline's is
    a lower bound (the ratio can only be smaller), "at least" when the change's is."""
    capacity_range: CapacityInterval | None
    """The capacity ratio as the interval both arms' goodput brackets allow."""

    @property
    def capacity_interval(self) -> tuple[float, float] | None:
        """The capacity ratio as the interval it is known to lie in."""
        r = self.capacity_range
        return None if r is None else (r.low, r.high)


def evaluate_load(inputs: BundleInputs, load: LoadRecord) -> LoadEvaluation:
    """Recompute every probe and each arm's goodput from results.json's `load` record."""
    slo = load.slo_seconds
    if slo is None:
        raise ValueError("a load test without an SLO has no goodput: the caller checks for one")
    probes = load.probes
    arms = tuple(goodput(arm, [_point(inputs, p, slo) for p in probes if p.arm == arm]) for arm in ARMS)
    return compare_arms(slo, load.percentile, arms)


def compare_arms(slo: float, percentile: float, arms: tuple[Goodput, ...]) -> LoadEvaluation:
    """Both arms' goodputs and the capacity change they support: exact, a bound, or none."""
    base, change = (next(g for g in arms if g.arm == arm) for arm in ARMS)
    cap, missing, bound, interval = None, None, None, None
    if base.goodput <= 0:
        missing = "the baseline passed at no rate: capacity change undefined"
    elif change.goodput <= 0:
        missing = "the change passed at no rate: no load is served at the SLO"
    elif base.lower_bound and change.lower_bound:
        missing = (
            "neither goodput is a capacity (no rate above either failed on the SLO or on "
            "throughput), so their ratio says nothing about the change"
        )
    else:
        cap = capacity(base.goodput, change.goodput)
        bound = "at most" if base.lower_bound else "at least" if change.lower_bound else "exact"
        interval = capacity_interval(_bracket(base), _bracket(change))
    return LoadEvaluation(slo, percentile, arms, cap, missing, bound, interval)


def _bracket(arm: Goodput) -> GoodputBracket:
    return GoodputBracket(arm.goodput, arm.failing, arm.confirmed)


def goodput(arm: str, points: list[CurvePoint]) -> Goodput:
    """The highest rate at which every probe passed; confirmed if it passed twice or more."""
    curve = tuple(sorted(points, key=lambda p: (p.rate, p.index)))
    rates: dict[float, list[bool]] = {}
    for point in curve:
        rates.setdefault(point.rate, []).append(point.passed)
    passing = [r for r, results in rates.items() if all(results)]
    confirmed = [r for r in passing if len(rates[r]) > 1]
    best = max(confirmed) if confirmed else max(passing, default=0.0)
    failed_at, limited_by = _first_failure_above(curve, best)
    lower_bound = not ({"p99", "throughput"} & set(limited_by))
    return Goodput(
        arm, best, bool(confirmed), curve, limited_by, lower_bound, math.inf if lower_bound else failed_at
    )


def _first_failure_above(curve: tuple[CurvePoint, ...], rate: float) -> tuple[float, tuple[str, ...]]:
    """The lowest rate above `rate` where a probe failed, and the criteria it failed."""
    for point in curve:
        if point.rate > rate and not point.passed:
            if point.result is None:
                return point.rate, ("no requests recorded",)
            r = point.result
            checks = (("p99", r.p99_ok), ("throughput", r.throughput_ok), ("generator lag", r.lag_ok))
            return point.rate, tuple(name for name, ok in checks if not ok)
    return math.inf, ()


def _point(inputs: BundleInputs, probe: LoadProbeRecord, slo: float) -> CurvePoint:
    columns = _columns(inputs, probe.records)
    rate, index, phase = probe.rate, probe.index, probe.phase
    if columns["scheduled_ns"].size < 2:
        return CurvePoint(index, rate, phase, None, "fewer than two requests were recorded")
    result = summarize_rate(
        rate,
        columns["scheduled_ns"] / 1e9,
        columns["issued_ns"] / 1e9,
        columns["completed_ns"] / 1e9,
        slo,
        columns["ok"].astype(bool),
    )
    return CurvePoint(index, rate, phase, result, None)


def _columns(inputs: BundleInputs, relpath: str) -> dict[str, np.ndarray]:
    with open(inputs.path / relpath, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    names = ("scheduled_ns", "issued_ns", "started_ns", "completed_ns", "ok")
    return {n: np.array([int(r[n]) for r in rows], dtype=np.int64) for n in names}
