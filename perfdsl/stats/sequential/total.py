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
medians, so rho_s is its pair log-ratios' mean, exponentiated), and R rises
with every rho_s. If every shape's ratio lies in its interval, R lies
between the same mix of the intervals' ends. Each shape's interval at its
stop is taken at confidence 1 - (1 - c) / S: by the union bound all S hold
together with probability at least c, whatever pair counts the shapes
stopped at, so the total's interval holds at c under the rule. The shares
are the measured ones: the baseline's time is measured to a small fraction
of the ratio's uncertainty. With one shape the total is that shape's own
stop, interval and p-value.

The p-value of no change is the smallest alpha at which the interval so
built excludes a ratio of 1 (bisection on the log scale): valid however the
shapes stopped, so Holm's adjustment over the family may take it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from perfdsl.bundle.stopping import StopRecord
from perfdsl.stats.sequential.rule import half_width_at

_SMALLEST_P = 1e-12
"""Below this the bisection stops: no run's evidence is read more finely."""


def total_interval(
    stops: Sequence[StopRecord], shares: Sequence[float], confidence: float
) -> tuple[float, float]:
    """The ratio interval of the weighted total at `confidence`, from each shape's stop and share."""
    shared = 1.0 - (1.0 - confidence) / len(stops)
    low = high = 0.0
    for stop, share in zip(stops, shares, strict=True):
        width, centre = half_width_at(stop, shared), math.log(stop.ratio)
        low += share * math.exp(centre - width)
        high += share * math.exp(centre + width)
    return low, high


def total_p_value(stops: Sequence[StopRecord], shares: Sequence[float]) -> float:
    """The smallest alpha whose total interval excludes 1; 1 when even alpha = 1 does not."""

    def excludes(alpha: float) -> bool:
        low, high = total_interval(stops, shares, 1.0 - alpha)
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
