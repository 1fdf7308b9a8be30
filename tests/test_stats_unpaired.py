"""The unpaired comparison of block medians, for imported arms that were not interleaved."""

from __future__ import annotations

import numpy as np
import pytest

from perfdsl.stats.unpaired import compare_unpaired


def _arms(seed: int, ratio: float, n: int = 6, spread: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    baseline = 4e6 * np.exp(rng.normal(0.0, spread, n))
    change = 4e6 * ratio * np.exp(rng.normal(0.0, spread, n))
    return baseline, change


def test_point_is_the_ratio_of_geometric_means() -> None:
    baseline, change = np.array([1.0, 2.0, 4.0]), np.array([1.0, 4.0, 2.0])
    result = compare_unpaired(baseline, change, resamples=200)
    assert result.ratio == pytest.approx(1.0)
    assert result.n_baseline == 3 and result.n_change == 3


def test_a_large_shift_is_called_faster() -> None:
    result = compare_unpaired(*_arms(1, 0.3), resamples=2000)
    assert result.verdict == "faster"
    assert result.low < 0.3 * 1.1 and result.high > 0.3 / 1.1


def test_interval_covers_the_true_ratio_near_its_level() -> None:
    """Over 200 seeded pairs of six blocks, the 95 % interval covers the planted ratio 0.8."""
    covered = [
        (r.low <= 0.8 <= r.high)
        for r in (compare_unpaired(*_arms(seed, 0.8), resamples=1000, seed=seed) for seed in range(200))
    ]
    assert 0.90 <= np.mean(covered) <= 0.99


def test_equal_arms_are_rarely_called_different() -> None:
    calls = [compare_unpaired(*_arms(seed, 1.0), resamples=1000, seed=seed).verdict for seed in range(100)]
    assert sum(v in ("faster", "slower") for v in calls) <= 10


def test_one_block_is_refused() -> None:
    with pytest.raises(ValueError, match="at least two blocks"):
        compare_unpaired(np.array([1.0]), np.array([1.0, 2.0]))


def test_non_positive_medians_are_refused() -> None:
    with pytest.raises(ValueError, match="finite positive"):
        compare_unpaired(np.array([1.0, 0.0]), np.array([1.0, 2.0]))
