"""Capacity: the goodput change at the same SLO, and the machines it frees.

Value itself is `stats.value`'s (only from an established end-to-end effect);
the interval the goodput brackets allow is `stats.capacity`'s. This is the
point ratio of the two passing rates, kept for the load test's own table.
"""

from __future__ import annotations

from perfdsl.bundle.evaluation.load import Capacity
from perfdsl.stats.load import capacity_change


def capacity(goodput_baseline: float, goodput_change: float) -> Capacity:
    """Capacity from the goodput change at the same SLO (both in requests per second)."""
    if goodput_change <= 0:
        raise ValueError("the change has no goodput: no load is served at the SLO")
    change = capacity_change(goodput_baseline, goodput_change)
    return Capacity(change=change, fleet_fraction_freed=1.0 - 1.0 / change)
