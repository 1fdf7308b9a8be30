"""Power under the sequential rule: the smallest effect its cap calls, and the cap a smaller one needs.

The fixed design's power (`stats.power`) is that of one t interval at the
design's pairs. A sequentially stopped comparison is judged on its confidence
sequence instead, which is wider at every pair count (it holds at every look,
at the comparison's share of the study's error rate), and it measures up to
its cap. So what such a run "could detect" is what its interval at the cap
calls: a true log effect delta is called beyond the band with probability
`power` when

    delta = log(1 + theta) + h(cap) + z_power * sigma / sqrt(cap),

h the rule's half-width at the cap for the spread sigma the rule measured (the
winsorized one where the rule winsorizes). Judging only the last look makes it
conservative: a look before the cap that decides adds power, a little. Quoted
with the fixed design's formula, a request time inconclusive at a cap of 100
pairs said 2.85 % was detectable and "about 104 block pairs would" decide the
2.82 % Amdahl allowed; the sequence's own reach at 100 pairs was 4.05 %, and the
2.82 % needed about 290.

For an operation's weighted total, whose interval is the shares' mix of its
shapes' intervals (`stats.sequential.total`), the same holds with each term the
share-weighted sum over the shapes: a first-order reading of a mix of ratios on
the log scale, exact for one shape.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import stats

from perfdsl.bundle.stopping import StoppingRule
from perfdsl.stats.sequential import planned
from perfdsl.stats.sequential.boundary import fewest_pairs, scalar_half_width

MAX_CAP = 100_000
"""Beyond this no cap is worth proposing: the effect is out of reach of timing."""

Part = tuple[StoppingRule, float, float]
"""One comparison of a total: its rule, its pairs' log-scale spread, its share (1 for one alone)."""


def reach(rule: StoppingRule, sd_log: float, pairs: int) -> float:
    """The rule's log-scale half-width after `pairs` pairs of spread `sd_log`."""
    variance = sd_log * sd_log
    if rule.planned:
        return planned.width_at(variance, pairs, rule.looks, rule.boundaries)
    return scalar_half_width(variance, pairs, rule.confidence, rule.rho)


def _needed_log(parts: Sequence[Part], pairs: int | None, power: float) -> float:
    """log(1 + effect) the parts call with `power` at `pairs` each (None: each at its own cap)."""
    z = float(stats.norm.ppf(power))
    total = 0.0
    for rule, sd, share in parts:
        n = rule.max_pairs if pairs is None else pairs
        total += share * (math.log1p(rule.threshold) + reach(rule, sd, n) + z * sd / math.sqrt(n))
    return total


def detectable(parts: Sequence[Part], power: float = 0.8) -> float:
    """The smallest relative change the parts' caps call beyond the band with `power` (inf when a
    part's spread is unknown or its cap bounds nothing)."""
    if not parts or any(not math.isfinite(sd) or sd < 0 for _, sd, _ in parts):
        return math.inf
    return math.expm1(_needed_log(parts, None, power))


def cap_needed(parts: Sequence[Part], effect: float, power: float = 0.8) -> int | None:
    """The fewest pairs a shape (every shape, for a total) must reach to call `effect` with `power`;
    None when the effect is inside the band or no cap up to MAX_CAP would."""
    if not parts or any(not math.isfinite(sd) or sd <= 0 for _, sd, _ in parts):
        return None
    target = math.log1p(effect)
    if target <= sum(share * math.log1p(rule.threshold) for rule, _, share in parts):
        return None
    return fewest_pairs(lambda n: n >= 2 and _needed_log(parts, n, power) <= target, MAX_CAP)
