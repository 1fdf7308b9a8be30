"""The probe sizes `check`, `plan` and the run share: closed forms against the tests they stand for."""

from __future__ import annotations

import math

import pytest

from perfdsl import probe_size
from perfdsl.stats.load import min_completions
from perfdsl.stats.sequential.proportion import log_evidence

PERCENTILES = (0.5, 0.9, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9999)
CONFIDENCES = (0.9, 0.95, 0.99, 0.999)


@pytest.mark.parametrize("percentile", PERCENTILES)
@pytest.mark.parametrize("confidence", CONFIDENCES)
def test_the_one_shot_count_is_the_binomial_tests_own(percentile: float, confidence: float) -> None:
    assert probe_size.one_shot_clean(percentile, confidence) == min_completions(0, percentile, confidence)


@pytest.mark.parametrize("percentile", PERCENTILES)
@pytest.mark.parametrize("confidence", CONFIDENCES)
def test_the_sequential_count_is_where_the_e_value_first_passes(percentile: float, confidence: float) -> None:
    """scipy's beta-binomial mixture, not the closed form, decides the run's probes."""
    n = probe_size.sequential_clean(percentile, confidence)
    threshold = math.log(1.0 / (1.0 - confidence))
    assert log_evidence(float(n), 0.0, 1.0 - percentile)[0] >= threshold
    assert log_evidence(float(n - 1), 0.0, 1.0 - percentile)[0] < threshold


def test_p99_counts_and_caps() -> None:
    assert (probe_size.one_shot_clean(0.99), probe_size.sequential_clean(0.99)) == (459, 644)
    assert probe_size.probe_cap(500, "sequential", 0.99) == 702
    assert probe_size.probe_cap(1000, "sequential", 0.99) == 1404
    assert probe_size.probe_cap(100, "sequential", 0.99) == 644
    assert probe_size.probe_cap(100, "fixed", 0.99) == 459


@pytest.mark.parametrize("probe", ["sequential", "fixed"])
@pytest.mark.parametrize("percentile", [0.9, 0.95, 0.99, 0.999])
def test_the_suggested_requests_leave_the_room_and_a_hundred_fewer_may_not(
    probe: str, percentile: float
) -> None:
    suggested = probe_size.requests_for_room(probe, percentile)
    room = probe_size.DEPENDENCE_ROOM * probe_size.clean_count(probe, percentile)
    assert suggested % 100 == 0
    assert probe_size.probe_cap(suggested, probe, percentile) >= room
    assert probe_size.probe_cap(suggested - 100, probe, percentile) < room or suggested == 100
