"""evaluation.json's load test: each arm's offered-load curve, goodput and the capacity change."""

from __future__ import annotations

from typing import Literal

import attrs

from perfdsl.bundle.plain import field
from perfdsl.bundle.stopping import ProbeRule

LagVerdict = Literal["on time", "jitter", "behind"]
CapacityBound = Literal["exact", "at most", "at least"]


@attrs.frozen
class GeneratorLag:
    """The generator's own lateness over one probe (seconds; the slope is seconds per second)."""

    p50: float
    p99: float
    backlog_slope: float
    """The resistant-line slope of issue lag against scheduled time: 0 for jitter,
    (rate x per-issue cost - 1) for a dispatcher that cannot keep up."""
    backlog_growth: float
    """backlog_slope x the probe's span: the lag the trend added from first to last request."""
    limit: float
    """The lag budget the verdict used: 5 % of the SLO."""
    verdict: LagVerdict
    """`behind` when the growth exceeds the budget at a slope over 2 %; `jitter` when
    the p99 exceeds the budget otherwise; `on time` when it does not."""


UNDECIDED = "open"
"""A sequential probe's decision when it reached its cap undecided (`stats.sequential.proportion`)."""
P99_UNDECIDED = "p99 undecided"
"""What limits a goodput whose next rate's probes reached their cap undecided."""


@attrs.frozen
class RateResult:
    """One run at one offered rate, summarised; latencies from the scheduled arrival."""

    offered_rate: float
    """The rate asked for (the schedule's nominal Poisson rate)."""
    scheduled_rate: float
    """The rate the drawn schedule actually has: (n - 1) / its span."""
    achieved_rate: float
    """Completion rate: (n - 1) / the span of completion times."""
    n: int
    misses: int
    """Completions over the SLO plus failed requests."""
    errors: int
    p50: float
    p90: float
    p99: float
    max: float
    generator: GeneratorLag
    """The load generator's own issue lag: jitter, or falling behind its schedule."""
    slo: float
    p99_ok: bool
    """The check of the SLO's percentile (named for the p99 most SLOs state; 0.95 for `slo p95`)."""
    throughput_ok: bool
    lag_ok: bool
    """The generator kept its schedule well enough for the p99 check to be the system's: it
    did not fall behind, and its wake-up jitter did not decide the check (see `stats.load.summarize_rate`)."""
    stretches: float
    """How many independent stretches the requests the p99 check rests on hold: n over their
    latencies' own autocorrelation time (`stats.dependence.independent_stretches`); below
    `MIN_STRETCHES_TO_PASS` the check cannot pass, since a slowly drifting service time may
    have shown only a quiet stretch."""
    dependence: float = 1.0
    """How many consecutive requests count as one independent one in the tail: the integrated
    autocorrelation time of the exceedances of the probe's own 90th percentile; the p99 check
    takes n / dependence requests and misses / dependence misses (`stats.dependence.tail_dependence`)."""
    decision: str | None = None
    """The sequential rule's decision (`pass`, `fail`, `open`); None for the fixed probe."""
    decided_at: int | None = None
    """The requests the sequential decision rests on: the look it stopped at."""
    slo_quantile: float = field(
        default=attrs.Factory(lambda result: result.p99, takes_self=True),
        absent=lambda result: result["p99"],
        when=lambda result: result.slo_quantile != result.p99,
    )
    """The latency at the SLO's own percentile (the p95 for `slo p95`), which `p99_ok` judges;
    written only where it is not the p99, so a p99 SLO's file keeps its bytes."""

    @property
    def passed(self) -> bool:
        """The rate meets the SLO: p99 check, throughput kept up, generator kept its schedule."""
        return self.p99_ok and self.throughput_ok and self.lag_ok

    @property
    def generator_limited(self) -> bool:
        """The probe says nothing about the system: the generator fell behind its schedule,
        or issued so late that its lateness alone decided the p99 check."""
        return not self.lag_ok


@attrs.frozen
class CurvePoint:
    """One probe: the rate, why it ran, and its summary recomputed from raw records."""

    index: int
    rate: float
    phase: str
    result: RateResult | None
    missing: str | None
    """Why the probe has no summary (fewer than three requests)."""
    contended: bool | None = None
    """Other work competed with the probe (`runtime.contention`); None where no load was read."""

    @property
    def passed(self) -> bool:
        return self.result is not None and self.result.passed


@attrs.frozen
class Goodput:
    """The highest passing rate of one arm, and the bracket the search left it in."""

    arm: str
    goodput: float
    """Requests per second; 0.0 when no rate passed."""
    failing: float | None
    """The lowest rate above the goodput that failed on the system's account (p99 or
    throughput, with the generator keeping its schedule): the goodput lies in
    [goodput, failing). None when no such rate closes the bracket (`lower_bound`)."""
    confirmed: bool
    """The goodput passed every time it ran, at least twice; runs in which the
    generator fell behind are not counted. One failure at `failing` closes the
    bracket: a rate that fails once is not reliably served."""
    curve: tuple[CurvePoint, ...]
    """Probes in rate order (ties in the order they ran)."""
    limited_by: tuple[str, ...]
    """What the lowest failing rate above the goodput failed: "p99", "throughput",
    "generator lag"; empty when no rate above the goodput failed."""
    lower_bound: bool
    """The arm may serve more than `goodput` at the SLO: the rate above it failed
    because the generator fell behind its schedule, or none above it failed. Such a
    goodput is the generator's limit, never the arm's capacity."""
    passed_above: tuple[float, ...] = ()
    """Rates above the lowest failing one that passed: the curve is not monotone, so the
    goodput (capped below that failure) is unconfirmed whatever its repeats."""
    contended: tuple[float, ...] = ()
    """The rates that decide the bracket (the goodput's and the failing one) at which a probe
    competed with other work: the goodput may be the machine's, not the arm's."""


@attrs.frozen
class Capacity:
    """What the goodput change means for a fleet serving fixed demand at the SLO."""

    change: float
    """goodput(change) / goodput(baseline); above 1 serves more at the same SLO."""
    fleet_fraction_freed: float
    """1 - 1 / change: the share of machines no longer needed for the same load
    (negative: more machines needed)."""


@attrs.frozen
class CapacityInterval:
    """The capacity ratio goodput(change) / goodput(baseline) as an interval."""

    low: float
    high: float
    """inf when the change's goodput has no upper bound."""
    confirmed: bool
    """Both goodputs were confirmed; otherwise the interval rests on single passes."""
    fleet_fraction_freed: tuple[float, float]
    """1 - 1 / ratio over the interval: the share of machines no longer needed for the same
    load (negative: more needed)."""
    message: str


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
    service_mismatch: str | None = None
    """Set when the capacity bracket lies far from what the measured request time ratio makes
    plausible (`stats.capacity.expected_capacity`): the load test measured something else."""
    probe_rule: ProbeRule | None = None
    """The sequential rule the probes were decided by; None: the fixed probe (a bundle before
    results/10)."""

    @property
    def capacity_interval(self) -> tuple[float, float] | None:
        """The capacity ratio as the interval it is known to lie in."""
        r = self.capacity_range
        return None if r is None else (r.low, r.high)
