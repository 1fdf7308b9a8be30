"""The workload ratio over shapes: weighted total times, stratified interval, read from the pairs."""

import numpy as np
import pytest
from stats_simulation import abba_pairs

from perfdsl.bundle.evaluation.kernels import Exclusion
from perfdsl.stats.combine import combine_shapes
from perfdsl.stats.paired import Pairs, compare_paired

FAST = {"resamples": 2000}


def _pairs(seed: int, level: float, ratio: float, sd: float = 0.01) -> Pairs:
    return abba_pairs(np.random.default_rng(seed), 10, ratio, sd, level=level)


def test_total_time_not_mean_of_ratios():
    # 0.8 of the work is a small shape that halves, 0.2 a shape 1000x longer that rises to 1.2:
    # the total rises (0.8 * 0.5 + 0.2 * 1200) / (0.8 + 200) = 1.197; the weighted geometric
    # mean of ratios would say 0.5^0.8 * 1.2^0.2 = 0.595, faster.
    shapes = {"small": _pairs(1, 1.0, 0.5, 1e-4), "long": _pairs(2, 1000.0, 1.2, 1e-4)}
    c = combine_shapes(shapes, {"small": 0.8, "long": 0.2}, theta=0.01, **FAST)
    assert c.ratio == pytest.approx(240.4 / 200.8, rel=1e-3)
    assert c.ci_low <= 240.4 / 200.8 <= c.ci_high
    assert c.verdict == "slower"
    assert [s.time_share for s in c.shares] == pytest.approx([0.8 / 200.8, 200 / 200.8], rel=1e-3)


def test_the_record_keeps_the_callers_judgement_of_the_shapes():
    shapes = {"a": _pairs(3, 1000.0, 0.8), "b": _pairs(4, 10.0, 1.3)}
    left_out = (Exclusion("c", "PQ006 achieved bandwidth above the measured roof: change"),)
    c = combine_shapes(shapes, {"a": 1.0, "b": 1.0}, regressions=("b",), excluded=left_out, **FAST)
    assert c.verdict == "faster"
    assert (c.regressions, c.excluded, c.basis) == (("b",), left_out, "ratio of weighted total times")


def test_one_shape_is_its_own_paired_comparison():
    one = compare_paired(_pairs(5, 50.0, 1.03), **FAST)
    c = combine_shapes(
        {"only": one.pairs}, {"only": 3.0}, theta=one.theta, resamples=one.resamples, seed=one.seed
    )
    found = (c.ratio, c.ci_low, c.ci_high, c.verdict)
    assert found == pytest.approx((one.ratio, one.low, one.high, one.verdict))


def test_only_the_proportions_of_the_weights_matter():
    shapes = {"a": _pairs(6, 1.0, 0.9), "b": _pairs(7, 3.0, 1.1)}
    x = combine_shapes(shapes, {"a": 1.0, "b": 3.0}, **FAST)
    y = combine_shapes(shapes, {"a": 0.25, "b": 0.75}, **FAST)
    assert (x.ratio, x.ci_low, x.ci_high) == pytest.approx((y.ratio, y.ci_low, y.ci_high))


def test_shapes_and_weights_must_match():
    with pytest.raises(ValueError, match="differ"):
        combine_shapes({"a": _pairs(8, 1.0, 1.0)}, {"b": 1.0})
    with pytest.raises(ValueError, match="weight"):
        combine_shapes({"a": _pairs(8, 1.0, 1.0)}, {"a": -1.0})
