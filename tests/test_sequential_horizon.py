"""The pairs an open sequential comparison still needs, from its current estimate and spread.

`rule.pairs_to_decide` is what the progress display's time left rests on: the
rule's own confidence-sequence boundary, at the spread measured so far, shrunk
until the interval about the current estimate clears the nearest band edge,
and never past the cap.
"""

from __future__ import annotations

import math

import pytest

from perfdsl.bundle.stopping import RHO, StoppingRule
from perfdsl.stats.sequential.boundary import half_width
from perfdsl.stats.sequential.rule import Look, judge, pairs_to_decide

RULE = StoppingRule(0.95, 0.02, 6, 400, RHO)
EDGES = (1.0 + RULE.threshold, 1.0 / (1.0 + RULE.threshold))


def _open(ratio: float, sd_log: float, pairs: int = 8) -> Look:
    """A look still open after `pairs` pairs at this estimate and spread (its interval is not used)."""
    return Look(pairs, ratio, 0.0, math.inf, sd_log, "inconclusive", 1.0)


@pytest.mark.parametrize("ratio", [1.0, 0.95, 1.03])
def test_a_wider_spread_needs_more_pairs(ratio: float) -> None:
    gap = min(abs(math.log(ratio) - math.log(edge)) for edge in EDGES)
    needed = [pairs_to_decide(_open(ratio, k * gap, pairs=2), RULE) for k in (0.5, 1.0, 2.0)]
    assert needed == sorted(needed) and len(set(needed)) == 3, needed
    assert needed[-1] < RULE.max_pairs


@pytest.mark.parametrize(("ratio", "sd_log"), [(1.0, 0.05), (0.95, 0.05), (1.01, 0.01), (0.9, 0.2)])
def test_the_pairs_are_where_the_rules_own_boundary_decides(ratio: float, sd_log: float) -> None:
    """At the answer the sequence's interval about the estimate is decided, one pair before it is
    not: the stopping rule's boundary, not a fixed-n interval (which would need far fewer)."""
    n = pairs_to_decide(_open(ratio, sd_log), RULE)
    assert 8 < n < RULE.max_pairs

    def verdict(t: int) -> str:
        width = float(half_width(sd_log**2, t, RULE.confidence, RULE.rho))
        return judge(ratio * math.exp(-width), ratio * math.exp(width), RULE)

    assert verdict(n) != "inconclusive" and verdict(n - 1) == "inconclusive"


@pytest.mark.parametrize("edge", EDGES)
@pytest.mark.parametrize("sd_log", [0.001, 0.02, 0.2])
def test_an_estimate_on_a_band_edge_needs_the_cap(edge: float, sd_log: float) -> None:
    assert pairs_to_decide(_open(edge, sd_log), RULE) == RULE.max_pairs


def test_a_spread_not_known_yet_needs_the_cap() -> None:
    assert pairs_to_decide(_open(0.5, math.nan, pairs=1), RULE) == RULE.max_pairs


def test_the_pairs_never_pass_the_cap_and_are_at_least_one_more() -> None:
    for ratio in (0.5, 0.9, 0.97, 1 / 1.02, 1.0, 1.005, 1.02, 1.1, 2.0):
        for sd_log in (0.0, 1e-4, 0.01, 0.05, 0.3, 3.0):
            for pairs in (2, 5, 8, 100, 399):
                needed = pairs_to_decide(_open(ratio, sd_log, pairs), RULE)
                assert max(pairs + 1, RULE.min_pairs) <= needed <= RULE.max_pairs, (ratio, sd_log, pairs)
