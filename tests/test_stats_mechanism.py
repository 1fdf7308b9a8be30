"""The time ratio against the mechanism quantity: realised, not realised, contradicted."""

import pytest

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.stats.mechanism import QuantityRatio, ShapeQuantity, combine_quantity, reconcile_mechanism

MODELLED_BYTES = QuantityRatio(0.40, "modelled")


def test_slower_while_bytes_fell_is_contradicted():
    r = reconcile_mechanism(Estimate(1.295, 1.25, 1.34, 0.95), MODELLED_BYTES, 0.01)
    assert r.status == "contradicted" and r.time_verdict == "slower"


def test_faster_while_bytes_fell_is_realised_with_its_fraction():
    r = reconcile_mechanism(Estimate(0.55, 0.53, 0.57, 0.95), MODELLED_BYTES, 0.01)
    assert r.status == "realised"
    assert r.fraction_realised.value == pytest.approx(0.75)
    assert (r.fraction_realised.low, r.fraction_realised.high) == pytest.approx((0.43 / 0.6, 0.47 / 0.6))


def test_a_small_speedup_from_a_large_byte_cut_realises_little():
    r = reconcile_mechanism(Estimate(0.95, 0.94, 0.96, 0.95), QuantityRatio(0.2, "counted"), 0.01)
    assert r.status == "realised"
    assert r.fraction_realised.value == pytest.approx(0.0625)
    assert "realised 6%" in r.message


def test_an_inconclusive_time_is_no_evidence_either_way():
    r = reconcile_mechanism(Estimate(1.06, 0.164, 6.889, 0.95), MODELLED_BYTES, 0.01)
    assert r.status == "not realised" and r.time_verdict == "inconclusive"
    assert "no evidence either way" in r.message


def test_a_time_that_held_still_is_not_realised():
    r = reconcile_mechanism(Estimate(1.0, 0.995, 1.005, 0.95), MODELLED_BYTES, 0.01)
    assert r.status == "not realised" and r.time_verdict == "no meaningful change"
    assert r.fraction_realised.high < 0.01


def test_a_quantity_that_rose_is_realised_by_a_slowdown():
    r = reconcile_mechanism(Estimate(1.2, 1.15, 1.25, 0.95), QuantityRatio(2.0, "counted"), 0.01)
    assert r.status == "realised" and r.fraction_realised.value == pytest.approx(0.2)
    assert reconcile_mechanism(
        Estimate(0.8, 0.75, 0.85, 0.95), QuantityRatio(2.0, "counted"), 0.01
    ).status == ("contradicted")


def test_time_moving_without_the_quantity_is_unexplained():
    still = QuantityRatio(1.0, "modelled")
    assert reconcile_mechanism(Estimate(0.9, 0.88, 0.92, 0.95), still, 0.01).status == "unexplained"
    assert reconcile_mechanism(Estimate(1.0, 0.999, 1.001, 0.95), still, 0.01).status == "no change"


def test_quantities_combine_by_weighted_totals_and_say_where_they_come_from():
    shapes = [ShapeQuantity(0.8, 1.0, 0.5, "counted"), ShapeQuantity(0.2, 1000.0, 1200.0, "counted")]
    q = combine_quantity(shapes)
    assert q.ratio == pytest.approx(240.4 / 200.8) and q.label == "counted"
    mixed = combine_quantity([shapes[0], ShapeQuantity(0.2, 1000.0, 1200.0, "modelled")])
    assert mixed.label == "mixed"
    assert combine_quantity([ShapeQuantity(1.0, 2.0, 1.0, "modelled")]).label == "modelled"
    with pytest.raises(ValueError):
        combine_quantity([ShapeQuantity(1.0, 0.0, 1.0, "modelled")])
