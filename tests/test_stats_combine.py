"""The workload ratio over shapes: weighted total times, stratified interval, regressions named."""

import numpy as np
import pytest
from stats_simulation import abba_pairs

from perfdsl.stats.combine import combine_shapes
from perfdsl.stats.paired import compare_paired

FAST = {"resamples": 2000}


def _shape(seed: int, level: float, ratio: float, sd: float = 0.01):
    return compare_paired(abba_pairs(np.random.default_rng(seed), 10, ratio, sd, level=level), **FAST)


def test_total_time_not_mean_of_ratios():
    # 0.8 of the work is a small shape that halves, 0.2 a shape 1000x longer that rises to 1.2:
    # the total rises (0.8 * 0.5 + 0.2 * 1200) / (0.8 + 200) = 1.197; the weighted geometric
    # mean of ratios would say 0.5^0.8 * 1.2^0.2 = 0.595, faster.
    shapes = {"small": _shape(1, 1.0, 0.5, 1e-4), "long": _shape(2, 1000.0, 1.2, 1e-4)}
    c = combine_shapes(shapes, {"small": 0.8, "long": 0.2}, theta=0.01, **FAST)
    assert c.ratio == pytest.approx(240.4 / 200.8, rel=1e-3)
    assert c.low <= 240.4 / 200.8 <= c.high
    assert c.verdict == "slower"
    assert c.regressions == ("long",)
    assert [s.time_share for s in c.shares] == pytest.approx([0.8 / 200.8, 200 / 200.8], rel=1e-3)


def test_a_regressing_shape_is_named_when_the_total_is_faster():
    shapes = {"a": _shape(3, 1000.0, 0.8), "b": _shape(4, 10.0, 1.3)}
    c = combine_shapes(shapes, {"a": 1.0, "b": 1.0}, **FAST)
    assert c.verdict == "faster"
    assert c.regressions == ("b",)


def test_one_shape_is_its_own_paired_comparison():
    one = _shape(5, 50.0, 1.03)
    c = combine_shapes({"only": one}, {"only": 3.0}, theta=one.theta, resamples=one.resamples, seed=one.seed)
    assert (c.ratio, c.low, c.high, c.verdict) == pytest.approx((one.ratio, one.low, one.high, one.verdict))


def test_only_the_proportions_of_the_weights_matter():
    shapes = {"a": _shape(6, 1.0, 0.9), "b": _shape(7, 3.0, 1.1)}
    x = combine_shapes(shapes, {"a": 1.0, "b": 3.0}, **FAST)
    y = combine_shapes(shapes, {"a": 0.25, "b": 0.75}, **FAST)
    assert (x.ratio, x.low, x.high) == pytest.approx((y.ratio, y.low, y.high))


def test_shapes_and_weights_must_match():
    with pytest.raises(ValueError, match="differ"):
        combine_shapes({"a": _shape(8, 1.0, 1.0)}, {"b": 1.0})
    with pytest.raises(ValueError, match="weight"):
        combine_shapes({"a": _shape(8, 1.0, 1.0)}, {"a": -1.0})
