"""Compare two arms of block medians: ratio, bootstrap CI, rank test, verdict, power.

The unit of observation is the *block median* (Kalibera & Jones 2013: variance
at a repetition level is only sampled by repeating at that level), so single
launches are never treated as independent. The decision rule is criterion.rs's:
an effect-size confidence interval judged against a practical threshold, not a
p-value alone, by the one verdict rule of `stats.verdict`. The Mann-Whitney U
test (Google Benchmark's `compare.py`) is a cross-check, reported beside the
verdict.

Ratios are time ratios, change / baseline: below 1 the change is faster.
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np
from scipy import stats

from perfdsl.bundle.evaluation.kernels import Comparison, Dispersion
from perfdsl.plan_rules import MIN_THRESHOLD
from perfdsl.stats.paired import MIN_PAIRS, Pairs, compare_paired, pair_blocks, too_few_pairs
from perfdsl.stats.power import minimum_detectable_effect as paired_mde
from perfdsl.stats.verdict import classify

DEFAULT_RESAMPLES = 10_000
_CHUNK = 1_000  # resamples drawn at a time: bounds memory to _CHUNK x n floats


def dispersion(blocks: np.ndarray) -> Dispersion:
    """IQR and MAD of block medians, relative to their median."""
    x = _positive_1d(blocks, "blocks", minimum=1)
    med = float(np.median(x))
    q1, q3 = np.quantile(x, [0.25, 0.75])
    mad = float(np.median(np.abs(x - med)))
    return Dispersion(median=med, iqr_rel=float(q3 - q1) / med, mad_rel=mad / med)


def minimum_detectable_effect(
    sigma_log: float,
    n_baseline: int,
    n_change: int,
    alpha: float = 0.05,
    power: float = 0.8,
    *,
    threshold: float,
) -> float:
    """MDE = log(1 + theta) + (z_{1-alpha/2} + z_{power}) sigma sqrt(1/n_b + 1/n_c), relative.

    sigma is the between-block SD of log time; with n blocks per arm the root is
    sqrt(2/n). The verdict needs the interval past the threshold, hence the
    log(1 + theta) (`stats.power`); returned as exp(MDE) - 1. With n = 20,
    sigma = 1 % and no threshold this is about 0.9 % (research notes, section 5.4).
    """
    if n_baseline < 1 or n_change < 1:
        raise ValueError("each arm needs at least one block")
    normal = NormalDist()
    z = normal.inv_cdf(1.0 - alpha / 2.0) + normal.inv_cdf(power)
    return float(np.expm1(np.log1p(threshold) + z * sigma_log * np.sqrt(1.0 / n_baseline + 1.0 / n_change)))


def bootstrap_ratios(
    baseline: np.ndarray, change: np.ndarray, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> np.ndarray:
    """Bootstrap replicates of median(change) / median(baseline).

    Blocks are resampled with replacement *within each arm*, independently; the
    same seed always gives the same replicates.
    """
    b = _positive_1d(baseline, "baseline", minimum=1)
    c = _positive_1d(change, "change", minimum=1)
    if resamples < 1:
        raise ValueError("resamples must be positive")
    rng = np.random.default_rng(seed)
    out = np.empty(resamples)
    for start in range(0, resamples, _CHUNK):
        rows = min(_CHUNK, resamples - start)
        mb = np.median(b[rng.integers(0, b.size, (rows, b.size))], axis=1)
        mc = np.median(c[rng.integers(0, c.size, (rows, c.size))], axis=1)
        out[start : start + rows] = mc / mb
    return out


def compare(
    baseline: np.ndarray,
    change: np.ndarray,
    *,
    level: float = 0.95,
    min_effect: float = 0.0,
    effect_of_interest: float | None = None,
    power: float = 0.8,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> Comparison:
    """Compare per-block medians of two arms.

    The CI is the bootstrap *percentile* interval of the ratio of medians. BCa
    is not used: its acceleration comes from a jackknife, and the jackknife is
    inconsistent for the median (Efron 1982), so BCa would add noise, not
    accuracy. `min_effect` is the user's minimum effect (0.05 = 5 %); the
    threshold is max(1 %, min_effect). `effect_of_interest` (default: theta) is
    what the MDE is checked against for the `underpowered` flag.
    """
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    b = _positive_1d(baseline, "baseline", minimum=2)
    c = _positive_1d(change, "change", minimum=2)
    theta = max(MIN_THRESHOLD, float(min_effect))
    interest = theta if effect_of_interest is None else float(effect_of_interest)

    ratio = float(np.median(c) / np.median(b))
    reps = bootstrap_ratios(b, c, resamples, seed)
    alpha = 1.0 - level
    lo, hi = (float(q) for q in np.quantile(reps, [alpha / 2.0, 1.0 - alpha / 2.0]))
    verdict = classify(lo, hi, theta)

    p = _rank_p_value(b, c)
    sigma = _pooled_sd(np.log(b), np.log(c))
    mde = minimum_detectable_effect(sigma, b.size, c.size, alpha, power, threshold=theta)
    equivalence = minimum_detectable_effect(sigma, b.size, c.size, alpha, power, threshold=0.0)
    reps.flags.writeable = False
    return Comparison(
        ratio=ratio,
        ci_low=lo,
        ci_high=hi,
        level=level,
        theta=theta,
        verdict=verdict,
        n_baseline=int(b.size),
        n_change=int(c.size),
        rank_p_value=p,
        rank_disagrees=verdict in ("faster", "slower") and p >= alpha,
        baseline_dispersion=dispersion(b),
        change_dispersion=dispersion(c),
        sigma_log=sigma,
        mde=mde,
        effect_of_interest=interest,
        underpowered=equivalence > interest,
        seed=seed,
        replicates=reps,
    )


def compare_blocks(
    baseline: np.ndarray,
    baseline_index: tuple[int, ...],
    change: np.ndarray,
    change_index: tuple[int, ...],
    *,
    level: float = 0.95,
    min_effect: float = 0.0,
    seed: int = 0,
) -> tuple[Comparison, Pairs | None]:
    """Compare two arms the way the sampler ran them: adjacent blocks as pairs.

    The arms are interleaved ABBA, so a pair of adjacent blocks ran under one
    machine state; the paired analysis (`stats.paired`) removes what the
    machine did between pairs, where bootstrapping each arm on its own counts
    it as noise. Ratio, interval, verdict, rank test (Wilcoxon) and MDE are the
    paired ones. Only when fewer than two pairs can be formed (arms not
    interleaved) and each arm has MIN_PAIRS blocks does it fall back to the
    independent `compare`, and says so in `analysis`. With fewer pairs than
    that there is no interval and the verdict is inconclusive, with the reason
    in `interval_missing`.

    Beside the comparison come the pairs its paired interval rests on (None
    when it has none): what the combination over shapes totals
    (`stats.combine`), handed on so that they need not ride inside the file's
    record.
    """
    theta = max(MIN_THRESHOLD, float(min_effect))
    b = _positive_1d(baseline, "baseline", minimum=2)
    c = _positive_1d(change, "change", minimum=2)
    pairs = pair_blocks(b, np.asarray(baseline_index), c, np.asarray(change_index))
    if pairs.baseline.size < 2 and min(b.size, c.size) >= MIN_PAIRS:
        return compare(b, c, level=level, min_effect=min_effect, seed=seed), None
    if pairs.baseline.size < MIN_PAIRS:
        return _without_interval(b, c, pairs.log_ratios, level, theta, seed), None
    p = compare_paired(pairs, level=level, theta=theta, seed=seed)
    return Comparison(
        ratio=p.ratio,
        ci_low=p.low,
        ci_high=p.high,
        level=level,
        theta=theta,
        verdict=p.verdict,
        n_baseline=int(b.size),
        n_change=int(c.size),
        rank_p_value=p.rank_p_value,
        rank_disagrees=p.rank_disagrees,
        baseline_dispersion=dispersion(b),
        change_dispersion=dispersion(c),
        sigma_log=p.sd_log,
        mde=p.mde,
        effect_of_interest=p.effect_of_interest,
        underpowered=p.underpowered,
        seed=seed,
        analysis="paired",
        n_pairs=p.n_pairs,
        p_value=p.p_value,
    ), pairs


def _without_interval(
    b: np.ndarray, c: np.ndarray, log_ratios: np.ndarray, level: float, theta: float, seed: int
) -> Comparison:
    """A comparison from too few pairs: the point ratio, no interval, verdict inconclusive.

    The point is the paired one when there are pairs; the MDE is still stated
    (from the pair spread, or the pooled block spread without two pairs) so
    the reader sees how far the run was from deciding anything.
    """
    n = int(log_ratios.size)
    if n >= 2:
        ratio, sigma = float(np.exp(log_ratios.mean())), float(np.std(log_ratios, ddof=1))
        mde, rank_p = paired_mde(sigma, n, level, threshold=theta), _wilcoxon_p(log_ratios)
        equivalence = paired_mde(sigma, n, level, threshold=0.0)
    else:
        ratio, sigma = float(np.median(c) / np.median(b)), _pooled_sd(np.log(b), np.log(c))
        mde = minimum_detectable_effect(sigma, b.size, c.size, 1.0 - level, threshold=theta)
        equivalence = minimum_detectable_effect(sigma, b.size, c.size, 1.0 - level, threshold=0.0)
        rank_p = _rank_p_value(b, c)
    return Comparison(
        ratio=ratio,
        ci_low=None,
        ci_high=None,
        level=level,
        theta=theta,
        verdict="inconclusive",
        n_baseline=int(b.size),
        n_change=int(c.size),
        rank_p_value=rank_p,
        rank_disagrees=False,
        baseline_dispersion=dispersion(b),
        change_dispersion=dispersion(c),
        sigma_log=sigma,
        mde=mde,
        effect_of_interest=theta,
        underpowered=equivalence > theta,
        seed=seed,
        analysis="paired" if n >= 2 else "independent",
        n_pairs=n,
        interval_missing=too_few_pairs(n),
    )


def _wilcoxon_p(d: np.ndarray) -> float:
    # All pairs equal: the statistic's variance is zero and there is no evidence of a shift.
    if not np.any(d != 0.0):
        return 1.0
    return float(stats.wilcoxon(d, alternative="two-sided").pvalue)


def _rank_p_value(baseline: np.ndarray, change: np.ndarray) -> float:
    # Identical constant arms make the U statistic's variance zero: no evidence of a shift.
    if np.ptp(np.concatenate([baseline, change])) == 0:
        return 1.0
    return float(stats.mannwhitneyu(change, baseline, alternative="two-sided").pvalue)


def _pooled_sd(a: np.ndarray, b: np.ndarray) -> float:
    dof = a.size + b.size - 2
    ss = float(np.sum((a - a.mean()) ** 2) + np.sum((b - b.mean()) ** 2))
    return float(np.sqrt(ss / dof))


def _positive_1d(x: np.ndarray, name: str, minimum: int) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1 or arr.size < minimum:
        raise ValueError(f"{name} must be a 1-d array of at least {minimum} block medians")
    if not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} block medians must be finite and positive")
    return arr
