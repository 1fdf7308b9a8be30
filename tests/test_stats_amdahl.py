"""Amdahl as a consistency test in time ratios: bound, range, reconciliation, predictions, share."""

import numpy as np
import pytest

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.stats.amdahl import (
    amdahl_speedup,
    amdahl_time_ratio,
    bound_range,
    check_declared_share,
    judge_prediction,
    measure_share,
    operation_ratio_in_app,
    reconcile,
    throughput_as_time_ratio,
)

P = Estimate.point


def _around(x: float, half: float) -> Estimate:
    return Estimate(x, x - half, x + half, 0.95)


def test_known_answer():
    assert amdahl_speedup(0.09, 1.12) == pytest.approx(1.0097, abs=5e-5)
    assert amdahl_time_ratio(0.09, 1 / 1.12) == pytest.approx(0.99039, abs=5e-5)
    assert amdahl_time_ratio(0.0, 5.0) == 1.0 and amdahl_time_ratio(1.0, 0.25) == 0.25


def test_quick_run_contradiction_is_beyond_the_bound():
    # Kernel time ratio 1.099 (s = 0.91), f = 49.8 %: the application may not get faster at all
    # (bound 0.953, time ratio 1.049), yet it measured a speedup of 1.573 [1.277, 1.819].
    measured = Estimate(1 / 1.573, 1 / 1.819, 1 / 1.277, 0.95)
    r = reconcile(P(0.498), P(1 / 0.91), measured, theta=0.01)
    assert 1 / r.bound.value == pytest.approx(0.953, abs=5e-4)
    assert r.status == "beyond_bound"
    assert r.signs_disagree
    assert judge_prediction(r) == "refuted"


def test_quick_run_with_s_from_the_application_is_consistent():
    # s = 3.28 measured in the application itself: bound 1.53 explains 1.573.
    measured = Estimate(1 / 1.573, 1 / 1.819, 1 / 1.277, 0.95)
    r = reconcile(P(0.498), P(1 / 3.28), measured, theta=0.01)
    assert 1 / r.bound.value == pytest.approx(1.53, abs=5e-3)
    assert r.status == "consistent"
    assert not r.signs_disagree
    # Consistent is not yet confirmed: the interval reaches past the bound.
    assert judge_prediction(r) == "inconclusive"


@pytest.mark.parametrize(
    ("measured", "status", "verdict"),
    [
        (_around(0.55, 0.01), "beyond_bound", "refuted"),  # impossible: never confirmed
        (_around(0.75, 0.005), "consistent", "confirmed"),
        (_around(0.85, 0.01), "consistent", "confirmed"),  # short, but within the allowance
        (_around(0.90, 0.01), "shortfall", "refuted"),  # realises 40 % of the allowed gain
        (_around(0.87, 0.03), "consistent", "inconclusive"),
        (_around(0.80, 0.10), "not_established", "inconclusive"),
        (_around(1.08, 0.02), "opposite_sign", "refuted"),
    ],
)
def test_f_half_s_two(measured, status, verdict):
    # f = 0.5, s = 2: Amdahl time ratio 0.75, band [0.7426, 0.875] at theta 1 %.
    r = reconcile(P(0.5), P(0.5), measured, theta=0.01)
    assert r.bound.value == 0.75
    assert (r.band_low, r.band_high) == pytest.approx((0.75 / 1.01, 0.875))
    assert r.status == status
    assert judge_prediction(r) == verdict


@pytest.mark.parametrize(
    ("measured", "status"),
    [
        (_around(1.50, 0.005), "consistent"),
        (_around(1.20, 0.01), "beyond_bound"),  # slowed less than the operation forces
        (_around(1.90, 0.01), "shortfall"),  # slowed more than the operation explains
        (_around(0.80, 0.01), "beyond_bound"),
    ],
)
def test_a_bound_above_one_is_judged_the_same_way(measured, status):
    # The operation got 2x slower at f = 0.5: the application must slow to 1.5 at least.
    r = reconcile(P(0.5), P(2.0), measured, theta=0.01)
    assert r.bound.value == 1.5
    assert r.status == status
    assert r.signs_disagree == (measured.high < 1 / 1.01)


def test_throughput_is_judged_against_the_speedup_not_the_time_ratio():
    # f = 0.5, s = 2 allows a throughput ratio of 1 / 0.75 = 1.333.
    ok = reconcile(P(0.5), P(0.5), throughput_as_time_ratio(_around(1.333, 0.005)), theta=0.01)
    assert judge_prediction(ok) == "confirmed"
    # Judged against the time ratio 0.75, a throughput ratio of 0.76 (a loss) looked fine.
    loss = reconcile(P(0.5), P(0.5), throughput_as_time_ratio(_around(0.76, 0.005)), theta=0.01)
    assert judge_prediction(loss) == "refuted"
    beyond = reconcile(P(0.5), P(0.5), throughput_as_time_ratio(_around(1.8, 0.02)), theta=0.01)
    assert beyond.status == "beyond_bound"
    unbounded = throughput_as_time_ratio(Estimate(1.5, 1.4, float("inf"), 0.95))
    assert (unbounded.low, unbounded.high) == (0.0, pytest.approx(1 / 1.4))


def test_bound_range_is_the_corner_range():
    b = bound_range(_around(0.5, 0.1), Estimate(0.5, 0.4, 0.6, 0.95))
    assert (b.low, b.value, b.high) == pytest.approx((0.6 * 0.4 + 0.4, 0.75, 0.4 * 0.6 + 0.6))
    assert b.level == pytest.approx(0.90)
    # An interval of r straddling 1 straddles 1 too: a loss and a gain are both possible.
    b = bound_range(P(0.5), Estimate(1.0, 0.8, 1.2, 0.95))
    assert b.low < 1 < b.high


def test_share_from_requests_is_a_ratio_of_sums_with_an_interval():
    rng = np.random.default_rng(1)
    total = rng.uniform(1.0, 3.0, 400)
    op = total * np.clip(rng.normal(0.3, 0.05, 400), 0, 1)
    f = measure_share(op, total, resamples=2000)
    assert f.value == pytest.approx(op.sum() / total.sum())
    assert f.low < 0.3 < f.high
    assert f.high - f.low < 0.02


def test_operation_ratio_in_the_application():
    rng = np.random.default_rng(2)
    base = rng.lognormal(np.log(10.0), 0.1, 300)
    change = rng.lognormal(np.log(10.0 / 3.28), 0.1, 300)
    r = operation_ratio_in_app(base, change, resamples=2000)
    assert r.low < 1 / 3.28 < r.high  # equal spreads: the ratio of means is the ratio of medians
    assert r.high / r.low < 1.05


def test_operation_ratio_from_few_requests_with_one_stall_stays_a_plausible_ratio():
    """A CPU run's share pass (20 requests an arm, one change request stalled 17x): the
    studentized interval of log r reached 8.5e8, which no ratio of two times can be."""
    base = np.array(
        [
            687001,
            628463,
            645710,
            649295,
            627142,
            639901,
            626360,
            631988,
            705670,
            711319,
            732580,
            631909,
            675375,
            631737,
            632720,
            628543,
            610727,
            629556,
            631889,
            629785,
        ]
    )
    change = np.array(
        [
            236575,
            236665,
            241182,
            242654,
            243936,
            234651,
            235934,
            238018,
            237225,
            234152,
            236376,
            233030,
            236555,
            229535,
            237145,
            221854,
            241382,
            203936,
            197355,
            3949129,
        ]
    )
    r = operation_ratio_in_app(base.astype(float), change.astype(float), resamples=2000)
    assert r.low < r.value < r.high
    assert r.low > 0.2 and r.high < 2.0, (r.low, r.high)


def test_declared_share_against_measured_f():
    measured = Estimate(0.30, 0.28, 0.32, 0.95)
    assert check_declared_share(0.3, measured).compatible
    assert check_declared_share(0.34, measured).compatible  # rounding tolerance
    contradicted = check_declared_share(0.09, measured)
    assert not contradicted.compatible
    assert "contradicts" in contradicted.message


def test_a_consistent_interval_across_the_band_edge_says_which_side_it_reaches() -> None:
    # B = 0.95, corners [0.9485, 0.9515]; the faster edge of the band is 0.9485 / 1.01 = 0.9391.
    f, op = Estimate(0.1, 0.099, 0.101, 0.95), Estimate(0.5, 0.49, 0.51, 0.95)
    crossing = reconcile(f, op, Estimate(0.945, 0.935, 0.955, 0.95), theta=0.01)
    assert crossing.status == "consistent" and judge_prediction(crossing) == "inconclusive"
    assert "at the edge: part of its interval is faster than the bound allows (band from 0.9391)" in (
        crossing.message
    )
    inside = reconcile(f, op, Estimate(0.95, 0.945, 0.955, 0.95), theta=0.01)
    assert inside.status == "consistent" and judge_prediction(inside) == "confirmed"
    assert inside.message.endswith(": consistent")
