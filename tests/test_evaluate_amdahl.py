"""Amdahl's bound and the reconciliation of the end-to-end speedup with it."""

import pytest

from perfdsl.evaluate.amdahl import amdahl_bound, reconcile


def test_worked_example():
    bound = amdahl_bound(0.09, 1.12)
    assert bound == pytest.approx(1.0097, abs=5e-5)
    assert bound - 1 == pytest.approx(0.0097, abs=5e-5)


def test_limits():
    assert amdahl_bound(0.0, 10.0) == 1.0
    assert amdahl_bound(1.0, 3.0) == pytest.approx(3.0)
    assert amdahl_bound(0.5, 1e12) == pytest.approx(2.0)
    with pytest.raises(ValueError):
        amdahl_bound(1.2, 2.0)
    with pytest.raises(ValueError):
        amdahl_bound(0.5, 0.0)


def test_within():
    r = reconcile(0.09, 1.12, 1.008, (1.002, 1.013))
    assert r.status == "within"
    assert not r.flagged


def test_beyond_is_flagged_as_accounting_error():
    r = reconcile(0.09, 1.12, 1.05, (1.03, 1.07))
    assert r.status == "beyond"
    assert r.flagged
    assert "exceeds Amdahl's bound 1.0097" in r.message


def test_far_below_means_another_bottleneck():
    r = reconcile(0.30, 2.0, 1.02, (1.01, 1.03))  # bound 1.176: a 3 % gain at best
    assert r.status == "far below"
    assert not r.flagged


def test_kernel_interval_widens_the_bound():
    # 1.0105 is past the point bound but inside the bound for s up to 1.2.
    assert reconcile(0.09, 1.12, 1.0110, (1.0105, 1.0115)).status == "beyond"
    r = reconcile(0.09, 1.12, 1.0110, (1.0105, 1.0115), s_ci=(1.08, 1.20))
    assert r.status == "within"
    assert r.bound_low < r.bound < r.bound_high


def test_slowdown_is_mirrored():
    bound = amdahl_bound(0.2, 0.8)  # the operation got 25 % slower: 0.952
    assert reconcile(0.2, 0.8, 0.955, (0.95, 0.96)).status == "within"
    assert reconcile(0.2, 0.8, 0.90, (0.88, 0.92)).status == "beyond"
    assert reconcile(0.2, 0.8, 0.999, (0.997, 1.001)).status == "far below"
    assert bound < 1


def test_measured_must_lie_in_its_interval():
    with pytest.raises(ValueError):
        reconcile(0.1, 1.1, 1.05, (1.0, 1.02))
