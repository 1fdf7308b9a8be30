"""Value only from an established end-to-end effect (stats.value), and capacity from goodput."""

import pytest

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.evaluate.value import capacity
from perfdsl.stats.amdahl import reconcile
from perfdsl.stats.value import value


def test_value_with_interval():
    v = value(Estimate(0.97, 0.96, 0.98, 0.95), "faster", 0.040, frequency=2e8, scale=1 / 3600, unit="GPU-h")
    assert v.established and not v.capped
    assert v.saved_time is not None and v.value is not None
    assert (v.saved_time.value, v.saved_time.low, v.saved_time.high) == pytest.approx(
        (0.0012, 0.0008, 0.0016)
    )
    assert (v.value.value, v.value.low, v.value.high) == pytest.approx((66.667, 44.444, 88.889), rel=1e-4)


def test_slower_change_has_negative_value():
    v = value(Estimate(1.02, 1.01, 1.03, 0.95), "slower", 1.0, frequency=100, scale=1.0, unit="s/day")
    assert v.value is not None
    assert (v.value.value, v.value.low, v.value.high) == pytest.approx((-2.0, -3.0, -1.0))


@pytest.mark.parametrize("verdict", ["inconclusive", "no meaningful change"])
def test_no_value_from_an_effect_that_is_not_established(verdict):
    v = value(Estimate(0.97, 0.5, 1.5, 0.95), verdict, 0.04, frequency=1e6, scale=1.0, unit="s/day")
    assert not v.established and v.value is None and v.reason


def test_no_value_from_an_effect_beyond_amdahl():
    # f = 0.036, r = 0.9: B = 0.9964, but the application measured 0.87 [0.85, 0.89].
    r = reconcile(
        Estimate(0.036, 0.03, 0.04, 0.95),
        Estimate(0.9, 0.88, 0.92, 0.95),
        Estimate(0.87, 0.85, 0.89, 0.95),
        theta=0.01,
    )
    assert r.status == "beyond_bound"
    v = value(
        Estimate(0.87, 0.85, 0.89, 0.95), "faster", 0.04, frequency=1e6, scale=1.0, unit="s", reconciliation=r
    )
    assert not v.established and "beyond_bound" in (v.reason or "")


def test_capacity_from_goodput():
    c = capacity(800.0, 1000.0)
    assert c.change == pytest.approx(1.25)
    assert c.fleet_fraction_freed == pytest.approx(0.2)
    with pytest.raises(ValueError):
        capacity(0.0, 1000.0)
