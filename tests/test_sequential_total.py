"""The weighted total over shapes under a sequential rule (`stats.sequential.total`), and in the evaluation.

One shape's total is its own stop. Over several shapes the interval must
cover the true total ratio, sum of shares times the shapes' ratios, in at
least 95 % of seeded simulated runs in which each shape stopped by the rule
at its share of the error rate (looking after every pair), and the evaluation
must use it in place of the bootstrap whenever the shapes stopped sequentially.
"""

from __future__ import annotations

import math

import attrs
import numpy as np
import pytest

from perfdsl.bundle.stopping import PLANNED_METHOD, RHO, WINSORIZED_METHOD, StoppingRule
from perfdsl.evaluate.combination import ShapeInput, combine
from perfdsl.evaluate.compare import compare_blocks
from perfdsl.stats.sequential import planned
from perfdsl.stats.sequential.boundary import half_width
from perfdsl.stats.sequential.rule import pair_log_ratios, replay
from perfdsl.stats.sequential.total import shared_interval, total_interval, total_p_value, total_ratio

RULE = StoppingRule(0.95, 0.01, 6, 120, RHO)


def test_one_shape_is_its_own_stop() -> None:
    d = np.log(0.97) + 0.02 * np.random.default_rng(1).standard_normal(120)
    stop = replay(d, RULE)
    assert total_interval([stop], [1.0]) == (stop.low, stop.high)
    assert total_p_value([stop], [1.0]) == pytest.approx(stop.p_value, rel=1e-6)


def test_a_planned_shape_is_its_own_stop_too() -> None:
    looks = planned.schedule(5, 6, 40)
    rule = StoppingRule(0.95, 0.01, 6, 40, RHO, PLANNED_METHOD, looks, planned.z_boundaries(looks, 0.95))
    stop = replay(np.log(0.97) + 0.02 * np.random.default_rng(2).standard_normal(40), rule)
    assert shared_interval([stop], [1.0], 0.95) == pytest.approx((stop.low, stop.high), rel=1e-9)


def test_several_shapes_mix_their_intervals_as_they_stopped_by_their_shares() -> None:
    rng = np.random.default_rng(3)
    stops = [replay(np.log(r) + 0.01 * rng.standard_normal(120), RULE) for r in (0.9, 1.1)]
    low, high = total_interval(stops, [0.8, 0.2])
    assert (low, high) == (0.8 * stops[0].low + 0.2 * stops[1].low, 0.8 * stops[0].high + 0.2 * stops[1].high)
    assert low < 0.8 * 0.9 + 0.2 * 1.1 < high


def test_the_shared_interval_widens_each_shape_to_its_share_of_the_error_rate() -> None:
    rng = np.random.default_rng(3)
    stops = [replay(np.log(r) + 0.01 * rng.standard_normal(120), RULE) for r in (0.9, 1.1)]
    low, high = shared_interval(stops, [0.8, 0.2], 0.95)
    each = [
        float(half_width(s.sd_log**2, s.pairs, 1 - 0.05 / 2)) for s in stops
    ]  # 97.5 % each: both hold together at 95 %
    expected_low = 0.8 * stops[0].ratio * math.exp(-each[0]) + 0.2 * stops[1].ratio * math.exp(-each[1])
    expected_high = 0.8 * stops[0].ratio * math.exp(each[0]) + 0.2 * stops[1].ratio * math.exp(each[1])
    assert (low, high) == pytest.approx((expected_low, expected_high), rel=1e-12)


def _stopped_runs(runs: int, ratios: tuple[float, ...], noise: float, seed: int) -> list[list]:
    rng = np.random.default_rng(seed)
    return [
        [replay(np.log(r) + noise * rng.standard_normal(RULE.max_pairs), RULE) for r in ratios]
        for _ in range(runs)
    ]


@pytest.mark.slow
@pytest.mark.parametrize(("ratios", "shares"), [((0.985, 1.0), (0.5, 0.5)), ((0.7, 1.3), (0.9, 0.1))])
def test_the_total_interval_covers_the_true_total_in_95_percent_of_stopped_runs(
    ratios: tuple[float, ...], shares: tuple[float, ...]
) -> None:
    """400 runs of two shapes, each stopped by the rule when its own interval was decided."""
    truth = sum(v * r for v, r in zip(shares, ratios, strict=True))
    runs = _stopped_runs(400, ratios, 0.02, 11)
    covered = [low <= truth <= high for low, high in (total_interval(stops, shares) for stops in runs)]
    assert np.mean(covered) >= 0.95
    # Mixed with equal shares, the same intervals miss an unequally shared total.
    if shares != (0.5, 0.5):
        equal = [low <= truth <= high for low, high in (total_interval(s, (0.5, 0.5)) for s in runs)]
        assert np.mean(equal) < 0.5


@pytest.mark.slow
def test_the_p_value_is_below_alpha_exactly_when_the_total_interval_excludes_no_change() -> None:
    runs = _stopped_runs(60, (0.993, 0.99), 0.02, 5)
    for stops in runs:
        low, high = shared_interval(stops, (0.6, 0.4), 0.95)
        assert (total_p_value(stops, (0.6, 0.4)) <= 0.05) == (low > 1.0 or high < 1.0)
    assert 0 < sum(shared_interval(s, (0.6, 0.4), 0.95)[1] < 1.0 for s in runs) < len(runs)  # both kinds


def _shape(label: str, ratio: float, seed: int, rule: StoppingRule | None) -> ShapeInput:
    """One shape's block medians (baseline about 1 ms, the change `ratio` times it), paired and stopped."""
    rng = np.random.default_rng(seed)
    base = 1e6 * np.exp(0.01 * rng.standard_normal(40))
    change = ratio * base * np.exp(0.01 * rng.standard_normal(40))
    index = np.arange(0, 80, 2)
    comparison, pairs = compare_blocks(base, index, change, index + 1, level=0.95, min_effect=0.01)
    stop = replay(pair_log_ratios(base, index, change, index + 1), rule) if rule is not None else None
    return ShapeInput(label, 1.0, comparison, None, None, pairs, stop)


def test_the_evaluation_combines_sequentially_stopped_shapes_by_their_stops_and_fixed_ones_by_bootstrap() -> (
    None
):
    rule = StoppingRule(0.95, 0.01, 6, 40, RHO)
    stopped = [_shape("a", 0.9, 1, rule), _shape("b", 1.0, 2, rule)]
    combined, missing = combine(stopped, 0.95)
    assert missing is None and combined is not None and combined.sequential
    shares = [s.time_share for s in combined.shares]
    stops = [s.stop for s in stopped]
    assert (combined.ci_low, combined.ci_high) == total_interval(stops, shares)
    assert combined.ratio == total_ratio(stops, shares)
    assert combined.p_value == total_p_value(stops, shares)
    fixed, _ = combine([_shape("a", 0.9, 1, None), _shape("b", 1.0, 2, None)], 0.95)
    assert fixed is not None and not fixed.sequential
    # Unwinsorized, a stop's ratio is its pairs' geometric mean, over the pairs up to the stop:
    # near the bootstrap's total over every pair.
    assert fixed.shares == combined.shares and fixed.ratio == pytest.approx(combined.ratio, rel=0.01)
    assert (fixed.ci_low, fixed.ci_high) != (combined.ci_low, combined.ci_high)


def test_a_winsorized_total_is_the_mix_of_the_shapes_stopped_ratios_inside_its_interval() -> None:
    """A shape whose pairs held a few contended outliers: the rule clipped them, and so must the total."""
    rule = StoppingRule(0.95, 0.01, 6, 40, RHO, WINSORIZED_METHOD)
    noisy = _shape("b", 0.7, 2, None)
    spoiled = noisy.pairs.log_ratios.copy()
    spoiled[::8] += np.log(1.6)  # every 8th pair: the change's block shared its core
    pairs = attrs.evolve(noisy.pairs, change=noisy.pairs.baseline * np.exp(spoiled))
    b = attrs.evolve(noisy, pairs=pairs, stop=replay(spoiled, rule))
    stopped = [_shape("a", 0.74, 1, rule), b]
    combined, _ = combine(stopped, 0.95)
    assert combined is not None
    ratios = [s.stop.ratio for s in stopped]
    assert min(ratios) <= combined.ratio <= max(ratios)
    assert combined.ci_low <= combined.ratio <= combined.ci_high
