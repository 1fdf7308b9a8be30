"""The workload's time ratio over shapes: the ratio of weighted total times, never a mean of ratios.

    R = sum_i w_i t_change_i / sum_i w_i t_base_i

is what the workload spends after the change over what it spent before, when
shape i occurs with weight w_i. A weighted geometric mean of per-shape ratios
answers a different question and can point the wrong way: with weights
0.8 / 0.2, a small shape at 0.5 and a shape 1000x longer at 1.2, the mean of
ratios says 0.595 (faster) while the total time rises 1.197x.

Shape i's times are the geometric means of its paired block medians, so one
shape alone gives exactly its paired ratio. The interval is the stratified
studentized bootstrap: pairs are resampled within each shape, because each
shape was timed in its own interleaved run.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.kernels import ShapeShare
from perfdsl.bundle.evaluation.verdicts import Verdict
from perfdsl.stats.bootstrap import DEFAULT_RESAMPLES, Stratum, ratio_of_totals
from perfdsl.stats.paired import PairedComparison
from perfdsl.stats.power import detectable_from_se
from perfdsl.stats.verdict import classify


@attrs.frozen
class CombinedComparison:
    """The weighted total-time ratio over shapes, its interval, verdict and the regressing shapes."""

    ratio: float
    low: float
    high: float
    level: float
    theta: float
    verdict: Verdict
    p_value: float
    shares: tuple[ShapeShare, ...]
    """In the order given."""
    regressions: tuple[str, ...]
    """Shapes whose own verdict is "slower", named whatever the total does."""
    mde: float
    """Smallest relative change of the total the run detects with 80 % power (`stats.power`)."""
    spread_log: float
    """The standard error times sqrt(pairs): the spread of one round over all shapes, so that
    `stats.power.pairs_needed` says how many pairs per shape would detect a given effect."""
    resamples: int
    seed: int

    @property
    def estimate(self) -> Estimate:
        """The ratio and its interval, as Amdahl, value and mechanism take them."""
        return Estimate(self.ratio, self.low, self.high, self.level)


def combine_shapes(
    comparisons: Mapping[str, PairedComparison],
    weights: Mapping[str, float],
    *,
    level: float = 0.95,
    theta: float | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> CombinedComparison:
    """Combine the shapes' paired comparisons into the workload's ratio of total times.

    Weights need not sum to 1 (only their proportions matter); a zero weight
    keeps a shape out of the total while its own regression is still named.
    theta defaults to the largest per-shape theta.
    """
    if not comparisons:
        raise ValueError("no shapes to combine")
    if set(comparisons) != set(weights):
        raise ValueError(f"shapes and weights differ: {sorted(comparisons)} vs {sorted(weights)}")
    names = tuple(comparisons)
    strata = [
        Stratum(np.log(comparisons[s].pairs.baseline), np.log(comparisons[s].pairs.change)) for s in names
    ]
    w = [float(weights[s]) for s in names]
    result = ratio_of_totals(strata, w, level=level, resamples=resamples, seed=seed)
    th = max(c.theta for c in comparisons.values()) if theta is None else float(theta)
    base = np.array([wi * np.exp(st.log_baseline.mean()) for wi, st in zip(w, strata, strict=True)])
    fewest = min(st.log_baseline.size for st in strata)
    return CombinedComparison(
        ratio=result.ratio,
        low=result.low,
        high=result.high,
        level=level,
        theta=th,
        verdict=classify(result.low, result.high, th),
        p_value=result.p_value,
        shares=tuple(
            ShapeShare(s, wi, float(x)) for s, wi, x in zip(names, w, base / base.sum(), strict=True)
        ),
        regressions=tuple(s for s in names if comparisons[s].verdict == "slower"),
        mde=detectable_from_se(result.se_log, fewest, level, threshold=th),
        spread_log=result.se_log * float(np.sqrt(fewest)),
        resamples=resamples,
        seed=seed,
    )
