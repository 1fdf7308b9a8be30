"""Few pairs: the Student t interval stands in for the bootstrap-t below `BOOTSTRAP_T_PAIRS`.

A smoke run's request time came out 1.005 [0.9845, 1.340] at a family's shared 98.33 % from
five pairs whose ratios lay between 0.986 and 1.053: the bootstrap-t's quantiles came from
resamples of the same few pairs, whose own standard errors were tiny.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from perfdsl.stats.bootstrap import BOOTSTRAP_T_PAIRS, Stratum, ratio_of_totals

LEVEL = 1 - 0.05 / 3  # the study's 95 % shared by three comparisons


def _stratum(ratios: list[float], base: float = 1e6) -> Stratum:
    log_b = np.log(np.full(len(ratios), base))
    return Stratum(log_b, log_b + np.log(ratios))


def test_five_pairs_get_the_student_t_interval_of_their_log_ratios() -> None:
    ratios = [0.9857, 0.9972, 1.0533, 0.9962, 0.9949]
    found = ratio_of_totals([_stratum(ratios)], [1.0], level=LEVEL)
    d = np.log(ratios)
    q = stats.t.ppf(1 - (1 - LEVEL) / 2, len(d) - 1)
    half = q * d.std(ddof=1) / np.sqrt(len(d))
    assert np.isclose(np.log(found.low), d.mean() - half) and np.isclose(np.log(found.high), d.mean() + half)
    assert found.high < 1.1 and found.resamples == 0


def test_ten_pairs_keep_the_bootstrap_t() -> None:
    rng = np.random.default_rng(3)
    found = ratio_of_totals([_stratum(list(np.exp(0.02 * rng.standard_normal(10))))], [1.0], level=LEVEL)
    assert BOOTSTRAP_T_PAIRS == 10 and found.resamples > 0


def test_five_pair_intervals_cover_at_the_stated_level_and_stay_plausible() -> None:
    """300 seeded A/A runs of 5 pairs at 2 % noise: covered at about the stated 98.33 %, and the
    widest 5 % of intervals within a factor of 1.2 (the bootstrap-t's reached past 10)."""
    rng = np.random.default_rng(11)
    covered, widths = 0, []
    for _ in range(300):
        found = ratio_of_totals([_stratum(list(np.exp(0.028 * rng.standard_normal(5))))], [1.0], level=LEVEL)
        covered += found.low <= 1.0 <= found.high
        widths.append(found.high / found.low)
    assert covered / 300 >= 0.96
    assert np.percentile(widths, 95) < 1.2
