"""Value from the end-to-end effect only, and capacity from goodput."""

import numpy as np
import pytest

from perfdsl.evaluate.compare import compare
from perfdsl.evaluate.value import EndToEndEffect, capacity, value


def test_value_with_interval():
    effect = EndToEndEffect(
        end_to_end_baseline_time=0.040, end_to_end_ratio=0.97, end_to_end_ratio_ci=(0.96, 0.98)
    )
    v = value(effect, frequency=2e8, scale=1 / 3600, unit="GPU-hours/day")
    assert v.saved_time_per_unit == pytest.approx(0.0012)
    assert v.saved_time_per_unit_ci == pytest.approx((0.0008, 0.0016))
    assert v.value == pytest.approx(66.667, rel=1e-4)
    assert v.value_ci == pytest.approx((44.444, 88.889), rel=1e-4)
    assert v.unit == "GPU-hours/day"


def test_slower_change_has_negative_value():
    effect = EndToEndEffect(
        end_to_end_baseline_time=1.0, end_to_end_ratio=1.02, end_to_end_ratio_ci=(1.01, 1.03)
    )
    v = value(effect, frequency=100, scale=1.0, unit="s/day")
    assert v.value == pytest.approx(-2.0)
    assert v.value_ci == pytest.approx((-3.0, -1.0))


def test_a_kernel_comparison_is_refused():
    rng = np.random.default_rng(0)
    kernel = compare(1 + 0.01 * rng.random(10), 0.8 + 0.01 * rng.random(10), resamples=200)
    with pytest.raises(TypeError, match="kernel speedup is not a saving"):
        value(kernel, frequency=1e6, scale=1.0, unit="s/day")
    with pytest.raises(TypeError):
        EndToEndEffect(0.04, 0.97, (0.96, 0.98))  # fields must be named end-to-end


def test_effect_is_validated():
    with pytest.raises(ValueError):
        EndToEndEffect(end_to_end_baseline_time=0.04, end_to_end_ratio=0.9, end_to_end_ratio_ci=(0.95, 0.98))
    with pytest.raises(ValueError):
        EndToEndEffect(end_to_end_baseline_time=0.0, end_to_end_ratio=0.97, end_to_end_ratio_ci=(0.96, 0.98))


def test_capacity_from_goodput():
    c = capacity(800.0, 1000.0)
    assert c.change == pytest.approx(1.25)
    assert c.fleet_fraction_freed == pytest.approx(0.2)
    with pytest.raises(ValueError):
        capacity(0.0, 1000.0)
