"""What a sequentially stopped comparison can detect (`stats.sequential.power`), checked by simulation.

The fixed design's t formula claimed a reach the confidence sequence does not
have: a request time inconclusive at its cap of 100 pairs was said to detect
2.85 %, and "about 104 block pairs would" decide 2.82 %. The sequence's own MDE
at the cap must be called in at least 80 % of seeded runs, and the t formula's
effect in clearly fewer.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from perfdsl.bundle.stopping import RHO, StoppingRule
from perfdsl.stats.power import minimum_detectable_effect
from perfdsl.stats.sequential.power import cap_needed, detectable, reach
from perfdsl.stats.sequential.rule import replay

# The rule of a request time that shared a 95 % family of 4: 98.75 % each, a 1 % band, cap 100.
RULE = StoppingRule(0.9875, 0.01, 6, 100, RHO)
SPREAD = 0.0642


def _called(effect: float, runs: int, seed: int) -> float:
    """The share of seeded runs the rule calls slower when the pairs' true log ratio is log(1 + effect)."""
    rng = np.random.default_rng(seed)
    calls = 0
    for _ in range(runs):
        stop = replay(math.log1p(effect) + SPREAD * rng.standard_normal(RULE.max_pairs), RULE)
        calls += stop is not None and stop.verdict == "slower"
    return calls / runs


def test_the_sequence_s_mde_at_the_cap_is_its_reach_plus_the_power_quantile() -> None:
    mde = detectable([(RULE, SPREAD, 1.0)])
    expected = math.log1p(0.01) + reach(RULE, SPREAD, 100) + 0.8416212335729143 * SPREAD / 10
    assert math.log1p(mde) == pytest.approx(expected, rel=1e-9)
    assert mde == pytest.approx(0.0405, abs=0.0005)
    fixed = minimum_detectable_effect(SPREAD, 100, 0.95, threshold=0.01)
    assert fixed == pytest.approx(0.0285, abs=0.0005)


@pytest.mark.slow  # calibrates: 600 seeded sequences
def test_the_sequence_calls_its_mde_in_80_percent_of_runs_and_the_t_formula_s_effect_far_less() -> None:
    mde = detectable([(RULE, SPREAD, 1.0)])
    assert _called(mde, 300, 1) >= 0.8
    fixed = minimum_detectable_effect(SPREAD, 100, 0.95, threshold=0.01)
    assert _called(fixed, 300, 2) < 0.5


def test_the_cap_needed_is_the_fewest_pairs_whose_mde_reaches_the_effect() -> None:
    cap = cap_needed([(RULE, SPREAD, 1.0)], 0.0282)
    assert cap is not None and 250 < cap < 320

    def at(pairs: int) -> float:
        return detectable([(StoppingRule(0.9875, 0.01, 6, pairs, RHO), SPREAD, 1.0)])

    assert at(cap) <= 0.0282 < at(cap - 1)
    assert cap_needed([(RULE, SPREAD, 1.0)], 0.005) is None  # inside the 1 % band: no cap decides it


def test_a_total_mixes_its_shapes_terms_by_their_shares() -> None:
    one = detectable([(RULE, 0.02, 1.0)])
    two = detectable([(RULE, 0.02, 0.5), (RULE, 0.02, 0.5)])
    assert two == pytest.approx(one, rel=1e-12)
    wide = detectable([(RULE, 0.02, 0.9), (RULE, 0.2, 0.1)])
    assert one < wide < detectable([(RULE, 0.2, 1.0)])
    assert detectable([(RULE, math.nan, 1.0)]) == math.inf
