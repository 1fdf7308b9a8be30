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
