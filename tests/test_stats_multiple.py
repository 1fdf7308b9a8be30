"""Holm's step-down adjustment and the family's interval level."""

import pytest

from perfdsl.stats.multiple import family_interval_level, holm


def test_holm_by_hand():
    # Sorted 0.005, 0.01, 0.03, 0.04 -> 4 x 0.005, 3 x 0.01, 2 x 0.03, max(0.06, 1 x 0.04).
    a = holm("kernel time per shape", ["a", "b", "c", "d"], [0.01, 0.04, 0.03, 0.005])
    assert a.adjusted == pytest.approx((0.03, 0.06, 0.06, 0.02))
    assert a.rejected == (True, False, False, True)
    assert a.family == "kernel time per shape"
    assert a.interval_level == pytest.approx(0.9875)


def test_holm_rejects_at_least_what_bonferroni_does():
    p = [0.012, 0.02, 0.2]
    a = holm("f", ["x", "y", "z"], p)
    bonferroni = [min(1.0, 3 * x) < 0.05 for x in p]
    assert all(h or not b for h, b in zip(a.rejected, bonferroni, strict=True))
    assert a.rejected == (True, True, False)  # Bonferroni rejects only x: 3 x 0.02 = 0.06; Holm 2 x 0.02


def test_a_family_of_one_is_unadjusted():
    a = holm("one", ["x"], [0.04])
    assert a.adjusted == (0.04,) and a.rejected == (True,) and a.interval_level == pytest.approx(0.95)


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        holm("f", ["x"], [0.1, 0.2])
    with pytest.raises(ValueError):
        holm("f", ["x"], [1.5])
    with pytest.raises(ValueError):
        family_interval_level(0)
