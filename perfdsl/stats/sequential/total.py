"""The weighted total over shapes under a sequential rule: an interval that holds whenever every shape's does.

Each shape's blocks stopped when its own interval was decided, at a pair
count the data chose. The stratified bootstrap over the pairs measured
(`stats.combine`) is a fixed-n interval, and after optional stopping it is
the peeking the rule exists to avoid: a total over shapes that each stopped
the moment they looked decided inherits their luck. So under the rule the
total's interval is built from the shapes' own sequential intervals.

The total's ratio is a weighted mean of the shapes' ratios,
R = sum_s v_s rho_s, v_s the shape's share of the baseline's weighted total
time (each shape's times are the geometric means of its paired block
medians, so rho_s is its pair log-ratios' mean, exponentiated: the mean of the
winsorized ones where the rule winsorizes), and R rises
with every rho_s. If every shape's ratio lies in its interval, R lies
between the same mix of the intervals' ends. So the total's interval is the
mix of the shapes' intervals as they stopped: by the union bound it holds
with probability at least 1 - sum_s (1 - c_s), whatever pair counts the
shapes stopped at. The rule stops each comparison at its share of the
study's error rate, c_s = 1 - alpha / family, and the family counts every
shape, each combination and the application, so that sum is below alpha: the
total holds at the study's confidence, and its error is one the shapes'
intervals already carry, spending none of the family's rate
(`evaluate.family` leaves it out of Holm's adjustment). Widening each shape's
interval to 1 - (1 - c) / S instead would leave a shape stopped at its first
looks unbounded (six pairs bound nothing at 99.4 %), and the total with it.
The shares are the measured ones: the baseline's time is measured to a small
fraction of the ratio's uncertainty. With one shape the total is that shape's
own stop.

The p-value of no change is the smallest alpha at which the mix of the shapes'
intervals, each at 1 - alpha / S, excludes a ratio of 1 (bisection on the log
scale): what the evidence for a change of the total is worth on its own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from perfdsl.bundle.stopping import StopRecord
from perfdsl.stats.sequential.rule import half_width_at

_SMALLEST_P = 1e-12
"""Below this the bisection stops: no run's evidence is read more finely."""


def total_ratio(stops: Sequence[StopRecord], shares: Sequence[float]) -> float:
    """The weighted total's ratio, R = sum_s v_s rho_s: the shares' mix of the shapes' stopped ratios."""
    return sum(share * stop.ratio for stop, share in zip(stops, shares, strict=True))


def total_interval(stops: Sequence[StopRecord], shares: Sequence[float]) -> tuple[float, float]:
    """The weighted total's ratio interval: the shares' mix of the shapes' intervals as they stopped."""
    low = sum(share * stop.low for stop, share in zip(stops, shares, strict=True))
    high = sum(share * stop.high for stop, share in zip(stops, shares, strict=True))
    return low, high


def shared_interval(
    stops: Sequence[StopRecord], shares: Sequence[float], confidence: float
) -> tuple[float, float]:
    """The mix of the shapes' intervals, each taken at 1 - (1 - `confidence`) / S: one that holds at
    `confidence` by the union bound alone, whatever the shapes stopped at (`total_p_value` searches it)."""
    shared = 1.0 - (1.0 - confidence) / len(stops)
    low = high = 0.0
    for stop, share in zip(stops, shares, strict=True):
        width, centre = half_width_at(stop, shared), math.log(stop.ratio)
        low += share * math.exp(centre - width)
        high += share * math.exp(centre + width)
    return low, high


def total_p_value(stops: Sequence[StopRecord], shares: Sequence[float]) -> float:
    """The smallest alpha whose shared interval excludes 1; 1 when even alpha = 1 does not."""

    def excludes(alpha: float) -> bool:
        low, high = shared_interval(stops, shares, 1.0 - alpha)
        return low > 1.0 or high < 1.0

    if not excludes(1.0):
        return 1.0
    if excludes(_SMALLEST_P):
        return _SMALLEST_P
    low, high = math.log(_SMALLEST_P), 0.0  # excludes at exp(high), not at exp(low)
    while high - low > 1e-9:
        mid = 0.5 * (low + high)
        low, high = (low, mid) if excludes(math.exp(mid)) else (mid, high)
    return math.exp(high)
