"""The capacity ratio as the interval the load search's brackets allow, never as an exact number.

A load search leaves each arm's goodput in a bracket: it is at least the
highest rate that passed and below the lowest rate above it that failed on
the system's account (p99 over the SLO, or completions not keeping up). When
no rate above failed, or the one that did failed only because the load
generator fell behind, the bracket is open: [passing, inf). The ratio of two
goodputs then lies in

    [passing_change / failing_baseline, failing_change / passing_baseline)

and dividing the two passing rates picks one point of that interval for no
reason: two single-pass goodputs whose ratio is 1.491 bracket it only in
(1.24, 1.79). A goodput that was not confirmed by a repeat may not even pass
again, so the interval is marked unconfirmed too.
"""

from __future__ import annotations

import math

import attrs

from perfdsl.bundle.evaluation.load import CapacityInterval


@attrs.frozen
class GoodputBracket:
    """Where one arm's goodput lies: [passing, failing), failing = inf when the search never failed."""

    passing: float
    """The highest rate that passed (requests per second)."""
    failing: float
    """The lowest rate above it that failed on the system's account; inf if none did."""
    confirmed: bool
    """The passing rate passed again when repeated."""

    def __attrs_post_init__(self) -> None:
        if not 0.0 < self.passing < self.failing:
            raise ValueError(
                f"a goodput bracket needs 0 < passing < failing, got {self.passing}, {self.failing}"
            )


def capacity_interval(baseline: GoodputBracket, change: GoodputBracket) -> CapacityInterval:
    """The capacity ratio's bracket from both arms' brackets: the rates tried, not a confidence
    interval (each end is set by single passing and failing runs)."""
    low = change.passing / baseline.failing
    high = change.failing / baseline.passing
    confirmed = baseline.confirmed and change.confirmed
    shown = f"[{low:.3g}, {'inf' if math.isinf(high) else f'{high:.3g}'})"
    note = "" if confirmed else ": unconfirmed (a goodput passed once, or above a failure)"
    return CapacityInterval(
        low=low,
        high=high,
        confirmed=confirmed,
        fleet_fraction_freed=(_freed(low), _freed(high)),
        message=f"capacity ratio in the bracket {shown} of the rates tried (no confidence level){note}",
    )


def _freed(ratio: float) -> float:
    # A ratio of 0 (the baseline's goodput unbounded above) leaves no bound on the machines needed.
    return -math.inf if ratio == 0.0 else 1.0 - 1.0 / ratio


SERVICE_TOLERANCE = 1.25
"""How far past the plausible range a capacity bracket may lie before it is a finding: queueing
models differ (exponential against near-constant service), so only a gross mismatch counts."""


def expected_capacity(service_s: float, time_ratio: tuple[float, float], slo_s: float) -> tuple[float, float]:
    """The goodput ratio a request time ratio in `time_ratio` makes plausible on one server.

    Between two models of the same queue: constant-ish service, where the
    goodput scales as the service rate, 1 / M; and an M/M/1 queue, whose p99
    sojourn ln(100) / (mu - lambda) meets the SLO up to lambda = mu - ln(100) / SLO,
    so the ratio is (1 / (M s) - k) / (1 / s - k), k = ln(100) / SLO (queueing
    makes a goodput more sensitive to service time than 1 / M). The range spans
    both over the interval of M; an M/M/1 queue past saturation at the baseline
    (1 / s <= k) leaves only 1 / M.
    """
    low_m, high_m = time_ratio
    if not (0 < low_m <= high_m) or service_s <= 0 or slo_s <= 0:
        raise ValueError("need a positive time ratio interval, service time and SLO")
    k = math.log(100.0) / slo_s
    candidates = [1.0 / high_m, 1.0 / low_m]
    if 1.0 / service_s > k:
        candidates += [(1.0 / (m * service_s) - k) / (1.0 / service_s - k) for m in (low_m, high_m)]
    return min(candidates), max(candidates)


def service_mismatch(
    bracket: CapacityInterval, service_s: float, time_ratio: tuple[float, float], slo_s: float
) -> str | None:
    """Why the capacity bracket does not follow the request time ratio, or None when it does."""
    low, high = expected_capacity(service_s, time_ratio, slo_s)
    if bracket.low <= high * SERVICE_TOLERANCE and bracket.high >= low / SERVICE_TOLERANCE:
        return None
    shown = f"[{bracket.low:.3g}, {'inf' if math.isinf(bracket.high) else f'{bracket.high:.3g}'})"
    return (
        f"the capacity bracket {shown} lies far from the {low:.3g} to {high:.3g} that the measured request "
        f"time ratio [{time_ratio[0]:.4g}, {time_ratio[1]:.4g}] makes plausible on one server (1 / M, "
        "or an M/M/1 queue at the baseline's service time): the load test measured something besides "
        "the change, such as other work on the machine"
    )
