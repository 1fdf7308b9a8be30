"""The capacity ratio from the load search's brackets, and value from established effects only."""

import math

import pytest

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.stats.amdahl import reconcile
from perfdsl.stats.capacity import GoodputBracket, capacity_interval
from perfdsl.stats.value import value


def test_single_pass_goodputs_only_bracket_the_ratio():
    # Passing 400 and 596.4 req/s divide to 1.491; their failing rates say only (1.24, 1.79).
    c = capacity_interval(GoodputBracket(400.0, 481.0, False), GoodputBracket(596.4, 716.0, False))
    assert (c.low, c.high) == pytest.approx((1.24, 1.79), abs=5e-3)
    assert not c.confirmed
    assert "unconfirmed" in c.message
    assert c.fleet_fraction_freed == pytest.approx((1 - 1 / c.low, 1 - 1 / c.high))


def test_confirmed_tight_brackets_give_a_tight_confirmed_interval():
    c = capacity_interval(GoodputBracket(400.0, 404.0, True), GoodputBracket(600.0, 606.0, True))
    assert c.low == pytest.approx(600 / 404) and c.high == pytest.approx(606 / 400)
    assert c.confirmed and "unconfirmed" not in c.message


def test_a_search_that_never_failed_leaves_the_ratio_open():
    c = capacity_interval(GoodputBracket(400.0, 480.0, True), GoodputBracket(500.0, math.inf, True))
    assert c.low == pytest.approx(500 / 480) and math.isinf(c.high)
    d = capacity_interval(GoodputBracket(400.0, math.inf, True), GoodputBracket(500.0, 600.0, True))
    assert d.low == 0.0 and d.high == pytest.approx(1.5)


def test_a_bracket_must_be_ordered():
    with pytest.raises(ValueError):
        GoodputBracket(500.0, 400.0, True)


E2E = Estimate(0.97, 0.96, 0.98, 0.95)


def test_value_from_an_established_effect():
    # 2e8 requests a day, 40 ms each, ratio 0.97 [0.96, 0.98]: 1.2 ms saved, 66.7 GPU-hours a day.
    v = value(E2E, "faster", 0.040, frequency=2e8, scale=1 / 3600, unit="GPU-hours/day")
    assert v.established and v.reason is None and not v.capped
    assert v.saved_time.value == pytest.approx(0.0012)
    assert (v.value.low, v.value.value, v.value.high) == pytest.approx((44.44, 66.67, 88.89), abs=0.01)


@pytest.mark.parametrize(
    ("verdict", "reason"),
    [("inconclusive", "inconclusive"), ("no meaningful change", "below the practical threshold")],
)
def test_no_value_without_an_established_effect(verdict, reason):
    v = value(E2E, verdict, 0.040, frequency=2e8, scale=1.0, unit="s/day")
    assert not v.established and reason in v.reason and v.value is None


def test_no_value_from_an_effect_amdahl_contradicts():
    # The operation got slower; the application cannot have got faster because of it.
    r = reconcile(Estimate.point(0.5), Estimate.point(1.1), E2E, theta=0.01)
    v = value(E2E, "faster", 0.040, frequency=1.0, scale=1.0, unit="s", reconciliation=r)
    assert not v.established and "beyond_bound" in v.reason


def test_value_is_capped_at_amdahl_for_the_production_share():
    # The test application spends 50 % in the operation (r = 0.9: bound 0.95, measured 0.96
    # [0.955, 0.965]); production only 10 %: at most 1 - (0.9 + 0.1 * 0.9) = 1 % saved.
    measured = Estimate(0.96, 0.955, 0.965, 0.95)
    r = reconcile(Estimate.point(0.5), Estimate.point(0.9), measured, theta=0.01)
    assert r.status == "consistent"
    v = value(
        measured,
        "faster",
        1.0,
        frequency=1.0,
        scale=1.0,
        unit="s",
        reconciliation=r,
        production_share=0.1,
        op_ratio=r.op_ratio,
    )
    assert v.capped
    assert v.saved_time.high == pytest.approx(0.01) and v.saved_time.value == pytest.approx(0.01)
    uncapped = value(measured, "faster", 1.0, frequency=1.0, scale=1.0, unit="s", reconciliation=r)
    assert uncapped.saved_time.high == pytest.approx(0.045)


def test_a_loss_is_not_capped():
    measured = Estimate(1.05, 1.04, 1.06, 0.95)
    r = reconcile(Estimate.point(0.5), Estimate.point(1.1), measured, theta=0.01)
    v = value(
        measured,
        "slower",
        1.0,
        frequency=1.0,
        scale=1.0,
        unit="s",
        reconciliation=r,
        production_share=0.1,
        op_ratio=r.op_ratio,
    )
    assert v.established and not v.capped
    assert v.saved_time.value == pytest.approx(-0.05)
