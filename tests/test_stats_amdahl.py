"""Amdahl as a consistency test in time ratios: bound, range, reconciliation, predictions, share."""

import pytest

from perfdsl.bundle.evaluation.end_to_end import Decomposition
from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.stats.amdahl import (
    amdahl_speedup,
    amdahl_time_ratio,
    check_declared_share,
    judge_prediction,
    judge_throughput,
    reconcile,
    throughput_as_time_ratio,
    untested_premise,
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
    # With no rest measured nothing explains it; it is not called impossible, and it cannot
    # confirm the prediction either.
    assert r.status == "beyond_bound"
    assert "the rest of the request was not measured" in r.message
    assert "impossible" not in r.message
    assert r.signs_disagree
    assert judge_prediction(r) == "inconclusive"


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
        (_around(0.55, 0.01), "beyond_bound", "inconclusive"),  # unexplained: never confirmed
        # Inside the band, yet the rest of the request was not measured: Amdahl's premise untested.
        (_around(0.75, 0.005), "consistent", "inconclusive"),
        (_around(0.85, 0.01), "consistent", "inconclusive"),  # short, but within the allowance
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


def test_throughput_is_judged_one_sided_against_the_speedup():
    # f = 0.5, s = 2 allows a throughput ratio of 1 / 0.75 = 1.333; the band's slow edge is 0.875.
    ok, _ = judge_throughput(P(0.5), P(0.5), _around(1.333, 0.005), theta=0.01)
    assert ok == "confirmed"
    # Judged against the time ratio 0.75, a throughput ratio of 0.76 (a loss) looked fine.
    loss, _ = judge_throughput(P(0.5), P(0.5), _around(0.76, 0.005), theta=0.01)
    assert loss == "refuted"
    # Goodput under a latency SLO grows faster than 1 / B (queueing): a FIFO queue whose service
    # time fell by exactly B = 0.8729 gained 1.191 at a 5 ms SLO, against 1 / B = 1.146. It was
    # called beyond the bound; it is no evidence against it.
    f, r = P(0.2246), P(0.4340)
    queue, said = judge_throughput(f, r, Estimate(1.191, 1.18, 1.20, 0.95), theta=0.01)
    assert queue == "confirmed" and "beyond" not in said
    straddle, _ = judge_throughput(P(0.5), P(0.5), _around(1.15, 0.05), theta=0.01)
    assert straddle == "inconclusive"
    unbounded = throughput_as_time_ratio(Estimate(1.5, 1.4, float("inf"), 0.95))
    assert (unbounded.low, unbounded.high) == (0.0, pytest.approx(1 / 1.4))


def test_declared_share_against_measured_f():
    measured = Estimate(0.30, 0.28, 0.32, 0.95)
    assert check_declared_share(0.3, measured).compatible
    assert check_declared_share(0.34, measured).compatible  # rounding tolerance
    contradicted = check_declared_share(0.09, measured)
    assert not contradicted.compatible
    assert "contradicts" in contradicted.message
    # In the study's own unit, and in words a reader needs no source code for.
    assert contradicted.message == (
        "the declared share 9% contradicts the measured f 30% [28%, 32%], widened by the 10% "
        "rounding tolerance a one-figure share carries"
    )


def test_a_consistent_interval_across_the_band_edge_says_which_side_it_reaches() -> None:
    # B = 0.95, corners [0.9485, 0.9515]; the faster edge of the band is 0.9485 / 1.01 = 0.9391.
    f, op = Estimate(0.1, 0.099, 0.101, 0.95), Estimate(0.5, 0.49, 0.51, 0.95)
    crossing = reconcile(f, op, Estimate(0.945, 0.935, 0.955, 0.95), theta=0.01)
    assert crossing.status == "consistent" and judge_prediction(crossing) == "inconclusive"
    assert "at the edge: part of its interval is faster than the bound allows (band from 0.9391)" in (
        crossing.message
    )
    inside = reconcile(f, op, Estimate(0.95, 0.945, 0.955, 0.95), theta=0.01)
    assert inside.status == "consistent" and inside.message.endswith(": consistent")
    # Inside the band, but with the rest unmeasured the premise is untested: not yet confirmed.
    assert judge_prediction(inside) == "inconclusive"
    assert "untested" in (untested_premise(inside) or "")


def _split(f, r, rho, d, rounds=10) -> Decomposition:
    return Decomposition(f, r, rho, d, 381.75e3, 359.97e3, rounds, 10, (1019, 1019))


# The demo's bundle on a host with a 2 MiB L2 (evaluator audit, Q1): f = 22.46 %, r = 0.4340,
# the rest 0.9430 [0.9244, 0.9618], the share pass's own request ratio 0.8286, and the timed
# pass 0.8315 [0.8204, 0.8490]. Amdahl's bound alone is 0.8729: the request is faster than the
# operation can make it, because the change made the rest faster too.
DEMO_F, DEMO_R = Estimate(0.2246, 0.2213, 0.2282, 0.95), Estimate(0.4340, 0.4215, 0.4461, 0.95)
DEMO_M = Estimate(0.8315, 0.8204, 0.8490, 0.95)


def test_a_faster_rest_is_a_cross_effect_not_an_impossibility():
    d = _split(DEMO_F, DEMO_R, Estimate(0.9430, 0.9244, 0.9618, 0.95), Estimate(0.8286, 0.8183, 0.8389, 0.95))
    r = reconcile(DEMO_F, DEMO_R, DEMO_M, theta=0.01, decomposition=d)
    assert r.status == "cross_effect" and r.rest == "faster" and r.agrees
    assert not r.cross_effect_loss
    assert "5.7% [3.8%, 7.6%] faster" in r.message
    assert "impossible" not in r.message
    # A gain the operation does not explain leaves `<= amdahl` unconfirmed, not refuted.
    assert judge_prediction(r) == "inconclusive"
    # Without the rest measured, the same numbers could not be explained.
    assert reconcile(DEMO_F, DEMO_R, DEMO_M, theta=0.01).status == "beyond_bound"


def test_an_unchanged_rest_beside_a_ratio_beyond_the_bound_means_the_numbers_do_not_add_up():
    d = _split(DEMO_F, DEMO_R, Estimate(1.0, 0.995, 1.005, 0.95), Estimate(0.8729, 0.869, 0.877, 0.95))
    r = reconcile(DEMO_F, DEMO_R, DEMO_M, theta=0.01, decomposition=d)
    assert r.status == "accounting_broken" and r.rest == "unchanged" and r.agrees is False
    assert "the share pass's own request time ratio is 0.8729" in r.message
    assert judge_prediction(r) == "inconclusive"


def test_a_rest_that_got_slower_is_a_cost_not_a_bottleneck_absorbing_the_gain():
    # The mirror case: f = 0.5, r = 1.2 (B = 1.1), the application at 1.30: the rest slowed ~40 %.
    f, r = Estimate(0.5, 0.49, 0.51, 0.95), Estimate(1.2, 1.18, 1.22, 0.95)
    measured = Estimate(1.30, 1.28, 1.32, 0.95)
    d = _split(f, r, Estimate(1.40, 1.36, 1.44, 0.95), Estimate(1.30, 1.28, 1.32, 0.95))
    found = reconcile(f, r, measured, theta=0.01, decomposition=d)
    assert found.status == "cross_effect" and found.rest == "slower" and found.cross_effect_loss
    assert "40.0% [36.0%, 44.0%] slower" in found.message
    assert "absorbs" not in found.message
    assert judge_prediction(found) == "refuted"


def test_a_consistent_result_with_the_rest_shown_unchanged():
    f, r = Estimate(0.5, 0.49, 0.51, 0.95), Estimate(0.5, 0.49, 0.51, 0.95)
    d = _split(f, r, Estimate(1.0, 0.996, 1.004, 0.95), Estimate(0.75, 0.745, 0.755, 0.95))
    found = reconcile(f, r, Estimate(0.75, 0.746, 0.754, 0.95), theta=0.01, decomposition=d)
    assert found.status == "consistent" and found.rest == "unchanged"
    assert "unchanged within the 0.01 threshold" in found.message
    assert judge_prediction(found) == "confirmed"


def test_a_band_an_uncertain_split_widened_confirms_nothing_while_the_rest_is_open():
    # A quick run: 1.009 [0.991, 1.027] inside [0.756, 1.143], the rest anywhere in [0.79, 1.27],
    # was "confirmed".
    f, r = Estimate(0.679, 0.631, 0.730, 0.95), Estimate(0.881, 0.687, 1.131, 0.95)
    d = _split(f, r, Estimate(1.003, 0.793, 1.27, 0.95), Estimate(1.0, 0.9, 1.1, 0.95))
    found = reconcile(f, r, Estimate(1.009, 0.991, 1.027, 0.95), theta=0.02, decomposition=d)
    assert found.status == "consistent" and found.rest == "undetermined"
    assert judge_prediction(found) == "inconclusive"
    assert "not shown unchanged" in (untested_premise(found) or "")
