"""Baseline against change as pairs of adjacent blocks: ratio, interval, rank test, verdict, power.

The sampler interleaves the arms ABBA (baseline, change, change, baseline,
...), so two adjacent blocks ran under the same machine state. Comparing the
arms pair by pair removes what the machine did between pairs (a clock step, a
neighbour starting), where bootstrapping each arm on its own keeps it as noise:
in simulated runs of 10 blocks per arm with 2 % block noise and the machine 5 %
slower from halfway on, the independent analysis called a planted 5 % slowdown
in 47.5 % of 200 seeds and the paired one in 92.5 %, both with at most 0.5 %
A/A false calls (benchmarks/paired_vs_independent.py).

The ratio is exp(mean of the pair log-ratios), the geometric mean of the pair
ratios: a smooth statistic with a second-order accurate bootstrap-t interval,
and the per-shape time that the combination over shapes totals
(`stats.combine`). A pair spoiled by interference pulls the mean; the Wilcoxon
signed-rank test on the same pairs is reported beside the verdict to expose
it. The median of the pair log-ratios with a percentile bootstrap is the
measured alternative (benchmarks/robust_paired.py): as well calibrated (95 %
coverage 0.936, 0.952, 0.940 at 5, 10, 20 pairs; A/A 0.064, 0.048, 0.060) and
far more powerful when a pair is spoiled (a 5 % slowdown at 10 pairs with one
pair hit by a 3x spike: called in 0.833 of seeds against the mean's 0.24). It
is not yet adopted because the combination over shapes would need a matching
median-based total, recalibrated.
The interval is the studentized bootstrap over pairs from 10 pairs on, the Student t
interval on the same standard error below (see `stats.bootstrap`).

Below MIN_PAIRS pairs there is no interval: with so few units the bootstrap
distribution of t is degenerate. Over 1000 seeded ABBA runs (2 % block noise,
5 % machine state per round, ratio 1.03, 2000 resamples) the nominal 95 %
interval covered the truth 0.286 of the time at 3 pairs, 0.950 at 4, 0.945 at
5, 0.952 at 6, 0.947 at 8 and 0.946 at 10; at 4 pairs its coverage is right
only because it is absurdly wide when it misses (10.8 % of intervals reach past
a factor of 2, 0.5 % past 1e-6 or 1e6), at 5 none does. 5 is the smallest
count whose interval is both calibrated and a plausible ratio.

Ratios are time ratios, change / baseline: below 1 the change is faster.
"""

from __future__ import annotations

import attrs
import numpy as np
from scipy import stats

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.verdicts import Verdict
from perfdsl.stats.bootstrap import DEFAULT_RESAMPLES, Stratum, ratio_of_totals
from perfdsl.stats.power import minimum_detectable_effect
from perfdsl.stats.verdict import classify

MIN_PAIRS = 5
"""The fewest block pairs a ratio interval is computed from (see the module's calibration)."""


def too_few_pairs(n: int) -> str | None:
    """Why `n` pairs give no interval, or None when they are enough."""
    return f"too few block pairs for an interval: {n} < {MIN_PAIRS}" if n < MIN_PAIRS else None


@attrs.frozen
class Pairs:
    """Adjacent baseline/change blocks, paired in run order."""

    baseline: np.ndarray = attrs.field(eq=False)
    """Baseline block medians, one per pair."""
    change: np.ndarray = attrs.field(eq=False)
    indices: tuple[tuple[int, int], ...]
    """(baseline block index, change block index) of each pair."""
    unpaired_baseline: tuple[int, ...]
    """Block indices left without a partner (dropped from the comparison)."""
    unpaired_change: tuple[int, ...]

    @property
    def log_ratios(self) -> np.ndarray:
        """log(change / baseline), pair by pair."""
        return np.log(self.change) - np.log(self.baseline)


def pair_blocks(
    baseline: np.ndarray, baseline_index: np.ndarray, change: np.ndarray, change_index: np.ndarray
) -> Pairs:
    """Pair each block with an adjacent block of the other arm, in run order.

    The rule: merge both arms' blocks by block index, then walk them in order,
    pairing a block with the next one when that one belongs to the other arm
    and neither is paired yet; otherwise the earlier block stays unpaired.
    Adjacent means adjacent among these two arms' blocks (a roof arm's blocks
    between them are ignored). For ABBA this gives (A0 B1), (B2 A3), (A4 B5),
    ...: the pairs alternate which arm ran first, so a linear drift cancels
    over them. Left to right is also the most pairs there can be (greedy
    earliest-end matching of adjacent pairs is optimal). With unequal counts,
    or a block missing in the middle, the blocks with no neighbour of the
    other arm stay unpaired and are reported.
    """
    b, bi = _positive(baseline, "baseline"), np.asarray(baseline_index)
    c, ci = _positive(change, "change"), np.asarray(change_index)
    if bi.shape != b.shape or ci.shape != c.shape:
        raise ValueError("each block median needs exactly one block index")
    order = sorted([(int(i), 0, k) for k, i in enumerate(bi)] + [(int(i), 1, k) for k, i in enumerate(ci)])
    if len({i for i, _, _ in order}) != len(order):
        raise ValueError("block indices must be distinct across both arms")
    pairs: list[tuple[int, int]] = []
    unpaired: list[tuple[int, int]] = []
    pending: tuple[int, int, int] | None = None
    for block in order:
        if pending is not None and pending[1] != block[1]:
            first, second = (pending, block) if pending[1] == 0 else (block, pending)
            pairs.append((first[2], second[2]))
            pending = None
            continue
        if pending is not None:
            unpaired.append(pending[:2])
        pending = block
    if pending is not None:
        unpaired.append(pending[:2])
    kb = np.array([p[0] for p in pairs], dtype=int)
    kc = np.array([p[1] for p in pairs], dtype=int)
    return Pairs(
        baseline=_readonly(b[kb]),
        change=_readonly(c[kc]),
        indices=tuple((int(bi[x]), int(ci[y])) for x, y in pairs),
        unpaired_baseline=tuple(i for i, arm in unpaired if arm == 0),
        unpaired_change=tuple(i for i, arm in unpaired if arm == 1),
    )


@attrs.frozen
class PairedComparison:
    """One baseline-vs-change comparison over block pairs, and what a report must show with it."""

    ratio: float
    """exp(mean pair log-ratio); below 1 the change is faster."""
    low: float
    high: float
    level: float
    theta: float
    verdict: Verdict
    p_value: float
    """Bootstrap-t p-value of ratio 1 (agrees with whether the interval holds 1)."""
    rank_p_value: float
    """Two-sided Wilcoxon signed-rank p-value on the pair log-ratios."""
    rank_disagrees: bool
    """The verdict is faster or slower but the rank test is not significant at 1 - level."""
    sd_log: float
    """Standard deviation of the pair log-ratios: the pair spread."""
    mde: float
    """Smallest relative change called faster or slower with 80 % power: past the threshold by
    the interval's reach (see `stats.power`)."""
    effect_of_interest: float
    underpowered: bool
    """The run could not tell an effect of interest from none (the spread's MDE for a test of
    ratio 1 exceeds it): "no meaningful change" cannot rest on it."""
    pairs: Pairs
    resamples: int
    seed: int

    @property
    def n_pairs(self) -> int:
        """How many pairs the comparison rests on."""
        return int(self.pairs.baseline.size)

    @property
    def estimate(self) -> Estimate:
        """The ratio and its interval, as Amdahl, value and mechanism take them."""
        return Estimate(self.ratio, self.low, self.high, self.level)


def compare_paired(
    pairs: Pairs,
    *,
    level: float = 0.95,
    theta: float = 0.01,
    effect_of_interest: float | None = None,
    power: float = 0.8,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> PairedComparison:
    """Compare the arms over their pairs; `theta` is the practical threshold (0.01 = 1 %).

    `effect_of_interest` (default theta) is what the MDE is set against for
    the `underpowered` flag. Needs MIN_PAIRS pairs: with fewer there is no
    interval to judge (`too_few_pairs` says so; callers report it).
    """
    few = too_few_pairs(int(pairs.baseline.size))
    if few is not None:
        raise ValueError(few)
    stratum = Stratum(np.log(pairs.baseline), np.log(pairs.change))
    result = ratio_of_totals([stratum], [1.0], level=level, resamples=resamples, seed=seed)
    verdict = classify(result.low, result.high, theta)
    d = pairs.log_ratios
    rank_p = _wilcoxon(d)
    sd = float(np.std(d, ddof=1))
    mde = minimum_detectable_effect(sd, d.size, level, power, threshold=theta)
    equivalence_mde = minimum_detectable_effect(sd, d.size, level, power, threshold=0.0)
    interest = theta if effect_of_interest is None else float(effect_of_interest)
    return PairedComparison(
        ratio=result.ratio,
        low=result.low,
        high=result.high,
        level=level,
        theta=theta,
        verdict=verdict,
        p_value=result.p_value,
        rank_p_value=rank_p,
        rank_disagrees=verdict in ("faster", "slower") and rank_p >= 1.0 - level,
        sd_log=sd,
        mde=mde,
        effect_of_interest=interest,
        underpowered=equivalence_mde > interest,
        pairs=pairs,
        resamples=resamples,
        seed=seed,
    )


EXACT_SIGN_FLIPS = 13
"""Up to this many pairs with ties or zeros, `stats.wilcoxon` takes every one of the 2^n sign
flips (fewer than its 9,999 permutations), and its p-value is exact."""


def _wilcoxon(d: np.ndarray) -> float:
    nonzero = d != 0.0
    # All pairs equal: the statistic's variance is zero and there is no evidence of a shift.
    if not np.any(nonzero):
        return 1.0
    if d.size <= EXACT_SIGN_FLIPS and (not np.all(nonzero) or np.unique(np.abs(d)).size < d.size):
        return _sign_flip_p(d, nonzero)
    return float(stats.wilcoxon(d, alternative="two-sided").pvalue)


def _sign_flip_p(d: np.ndarray, nonzero: np.ndarray) -> float:
    """The p-value `stats.wilcoxon` gives pairs with ties or zeros (a permutation test over
    every sign flip of the signed-rank sum), with the sum taken for all flips at once.

    `stats.wilcoxon` hands `permutation_test` a statistic it calls once per flip: 4,096
    calls and about 2 s for 12 pairs, the case a coarse clock or an imported integer timing
    makes. A flip changes no magnitude, so the ranks are those of |d| (zeros left out, as
    Wilcoxon's method does) and each flip's sum is a sum of half-integers, exact in any
    order: the same null distribution and p-value.
    """
    ranks = np.zeros(d.shape)
    ranks[nonzero] = stats.rankdata(np.abs(d[nonzero]))

    def positive_rank_sum(flipped: np.ndarray, axis: int) -> np.ndarray:
        return np.sum((flipped > 0) * ranks, axis=axis)

    result = stats.permutation_test(
        (d,),
        positive_rank_sum,
        vectorized=True,
        permutation_type="samples",
        alternative="two-sided",
        axis=-1,
    )
    return float(result.pvalue)


def _positive(x: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be a 1-d array of block medians")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} block medians must be finite and positive")
    return arr


def _readonly(x: np.ndarray) -> np.ndarray:
    x.flags.writeable = False
    return x
