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

import numpy as np

from perfdsl.bundle.evaluation.kernels import Combined, Exclusion, ShapeShare
from perfdsl.stats.bootstrap import DEFAULT_RESAMPLES, Stratum, ratio_of_totals
from perfdsl.stats.paired import Pairs
from perfdsl.stats.power import detectable_from_se
from perfdsl.stats.verdict import classify

BASIS = "ratio of weighted total times"
"""What the combined ratio is, as evaluation.json names it."""


def combine_shapes(
    pairs: Mapping[str, Pairs],
    weights: Mapping[str, float],
    *,
    level: float = 0.95,
    theta: float = 0.01,
    regressions: tuple[str, ...] = (),
    excluded: tuple[Exclusion, ...] = (),
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Combined:
    """Combine the shapes' block pairs into the workload's ratio of total times, as the file's record.

    It reads the pairs the shapes' paired comparisons rest on, not those
    comparisons, so nothing of a per-shape result has to travel back here.
    Weights need not sum to 1 (only their proportions matter); a zero weight
    keeps a shape out of the total. `theta` is the practical threshold (0.01 =
    1 %); `regressions` (the shapes whose own verdict is "slower") and
    `excluded` (the shapes left out, and why) are the caller's judgement of the
    shapes, kept in the record beside the total.
    """
    if not pairs:
        raise ValueError("no shapes to combine")
    if set(pairs) != set(weights):
        raise ValueError(f"shapes and weights differ: {sorted(pairs)} vs {sorted(weights)}")
    names = tuple(pairs)
    strata = [Stratum(np.log(pairs[s].baseline), np.log(pairs[s].change)) for s in names]
    w = [float(weights[s]) for s in names]
    result = ratio_of_totals(strata, w, level=level, resamples=resamples, seed=seed)
    th = float(theta)
    base = np.array([wi * np.exp(st.log_baseline.mean()) for wi, st in zip(w, strata, strict=True)])
    fewest = min(st.log_baseline.size for st in strata)
    return Combined(
        ratio=result.ratio,
        ci_low=result.low,
        ci_high=result.high,
        level=level,
        theta=th,
        verdict=classify(result.low, result.high, th),
        p_value=result.p_value,
        basis=BASIS,
        shares=tuple(
            ShapeShare(s, wi, float(x)) for s, wi, x in zip(names, w, base / base.sum(), strict=True)
        ),
        regressions=regressions,
        excluded=excluded,
        mde=detectable_from_se(result.se_log, fewest, level, threshold=th),
        spread_log=result.se_log * float(np.sqrt(fewest)),
    )
