"""Power: the smallest ratio change a paired run can call, and the pairs needed for a given one.

A paired comparison's log ratio is the mean of n pair log-ratios with spread
sigma (their standard deviation), so its standard error is sigma / sqrt(n).
The verdict "faster" needs the whole interval below 1 / (1 + theta), not only
clear of 1 (`stats.verdict`), so a true log effect delta is called with
probability `power` when

    delta = log(1 + theta) + (t_{1 - alpha/2, n-1} + t_{power, n-1}) * sigma / sqrt(n)

and "slower" the same on the other side. With theta = 0 this is the MDE of a
test of ratio 1, which is what the run printed before: at 40 pairs and a pair
spread of 0.05 it said 2.30 %, where a true 2.30 % gain was called faster in
36.5 % of seeded runs, not 80 % (a 1 % threshold needs 3.32 %).

(the normal-approximation MDE of the research notes, section 5.4, with t
quantiles because runs have 10 to 30 pairs: at 10 pairs the t factor is 3.15
against the normal 2.80). Effects are relative changes: 0.05 is a ratio of
1.05 or its inverse, 1 / 1.05, which are equally far from 1 on the log scale.

Requests: a pair is two blocks of the application, so the requests needed are
the pairs needed times the requests in a block, at the same block size (the
spread was measured at that size).
"""

from __future__ import annotations

import math

from scipy import special

MAX_PAIRS = 1_000_000
"""Beyond this the effect is not worth measuring by timing: report it as out of reach."""


def _factor(n: int, level: float, power: float) -> float:
    """t_{1 - alpha/2, n-1} + t_{power, n-1}, through the t distribution's inverse itself.

    `special.stdtrit` is what `stats.t.ppf` computes at unit scale, bit for bit, without the
    distribution object's argument checks: `pairs_needed` searches over n, and those checks
    were most of an evaluation's time in this function.
    """
    df = n - 1
    return float(special.stdtrit(df, 1.0 - (1.0 - level) / 2.0) + special.stdtrit(df, power))


def _check(level: float, power: float) -> None:
    if not 0.0 < level < 1.0 or not 0.0 < power < 1.0:
        raise ValueError(f"level and power must be in (0, 1), got {level} and {power}")


def minimum_detectable_effect(
    sd_log: float, pairs: int, level: float = 0.95, power: float = 0.8, *, threshold: float
) -> float:
    """The relative change called with probability `power`: exp(delta) - 1 for the delta above."""
    if pairs < 2:
        raise ValueError(f"need at least two pairs to estimate their spread, got {pairs}")
    return detectable_from_se(sd_log / math.sqrt(pairs), pairs, level, power, threshold=threshold)


def detectable_from_se(
    se_log: float, pairs: int, level: float = 0.95, power: float = 0.8, *, threshold: float
) -> float:
    """The MDE from a log ratio's standard error: for a combination of shapes, whose standard
    error is not one spread over sqrt(n); `pairs` (the fewest in any shape) sets the t factor."""
    _check(level, power)
    if pairs < 2:
        raise ValueError(f"need at least two pairs to estimate their spread, got {pairs}")
    if not se_log >= 0.0 or threshold < 0.0:
        raise ValueError(f"the spread and threshold must be non-negative, got {se_log}, {threshold}")
    return math.expm1(math.log1p(threshold) + _factor(pairs, level, power) * se_log)


def pairs_needed(
    sd_log: float, effect: float, level: float = 0.95, power: float = 0.8, *, threshold: float
) -> int | None:
    """The fewest pairs whose MDE is at most `effect` (a relative change), or None when no number
    of pairs can (the effect is inside the threshold) or more than MAX_PAIRS would be needed."""
    _check(level, power)
    if not effect > 0.0:
        raise ValueError(f"the effect must be a positive relative change, got {effect}")
    if effect <= threshold:
        return None
    target = math.log1p(effect) - math.log1p(threshold)

    def enough(n: int) -> bool:
        return _factor(n, level, power) * sd_log / math.sqrt(n) <= target

    if enough(2):
        return 2
    # The MDE falls as n grows: double to bracket, then bisect.
    lo, hi = 2, 4
    while not enough(hi):
        if hi > MAX_PAIRS:
            return None
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if enough(mid) else (mid, hi)
    return hi


def requests_needed(
    sd_log: float,
    effect: float,
    requests_per_block: int,
    level: float = 0.95,
    power: float = 0.8,
    *,
    threshold: float,
) -> int | None:
    """Requests per arm to call `effect`: the pairs needed times the requests in a block."""
    if requests_per_block < 1:
        raise ValueError(f"a block holds at least one request, got {requests_per_block}")
    pairs = pairs_needed(sd_log, effect, level, power, threshold=threshold)
    return None if pairs is None else pairs * requests_per_block
