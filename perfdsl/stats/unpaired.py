"""Baseline against change when their blocks were not interleaved: independent arms, block medians.

Imported files often time one benchmark after the other (pyperf's worker
processes, Google Benchmark's repetitions): no baseline block ran next to a
change block, so pairing them would invent a shared machine state. Each arm's
block medians are then treated as an independent sample. The ratio is the
ratio of the arms' geometric means of block medians (change / baseline), the
same statistic as the paired ratio, and its interval the studentized
bootstrap with each arm resampled on its own and the Welch standard error of
the log ratio, so the verdict rule (`stats.verdict`) is the same too.

What this cannot do is remove drift: a machine that slowed between the two
arms' runs shifts the ratio, and no interval shows it. That is why an
unpaired comparison is never evidence-grade, whatever its interval.
"""

from __future__ import annotations

import attrs
import numpy as np

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.verdicts import Verdict
from perfdsl.stats.bootstrap import DEFAULT_RESAMPLES, index_chunks, studentized_interval
from perfdsl.stats.verdict import classify


@attrs.frozen
class UnpairedComparison:
    """One comparison of two independent sets of block medians."""

    ratio: float
    """exp(mean log change - mean log baseline); below 1 the change is faster."""
    low: float
    high: float
    level: float
    theta: float
    verdict: Verdict
    n_baseline: int
    n_change: int
    resamples: int
    seed: int

    @property
    def estimate(self) -> Estimate:
        return Estimate(self.ratio, self.low, self.high, self.level)


def _log_ratio_and_se(log_b: np.ndarray, log_c: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise mean log ratio and its Welch standard error, for (rows, n) arrays of each arm."""
    nb, nc = log_b.shape[1], log_c.shape[1]
    diff = log_c.mean(axis=1) - log_b.mean(axis=1)
    var = log_b.var(axis=1, ddof=1) / nb + log_c.var(axis=1, ddof=1) / nc
    return diff, np.sqrt(var)


def compare_unpaired(
    baseline: np.ndarray,
    change: np.ndarray,
    *,
    level: float = 0.95,
    theta: float = 0.01,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> UnpairedComparison:
    """Compare independent block medians; each arm needs at least two blocks."""
    b, c = _positive(baseline, "baseline"), _positive(change, "change")
    if b.size < 2 or c.size < 2:
        raise ValueError(f"each arm needs at least two blocks, got {b.size} and {c.size}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    log_b, log_c = np.log(b), np.log(c)
    point, se = (float(x[0]) for x in _log_ratio_and_se(log_b[None, :], log_c[None, :]))
    rng = np.random.default_rng(seed)
    boot, boot_se = [], []
    for rows_b, rows_c in zip(
        index_chunks(rng, b.size, resamples), index_chunks(rng, c.size, resamples), strict=True
    ):
        d, s = _log_ratio_and_se(log_b[rows_b], log_c[rows_c])
        boot.append(d)
        boot_se.append(s)
    low, high, _ = studentized_interval(point, se, np.concatenate(boot), np.concatenate(boot_se), level)
    ratio, lo, hi = float(np.exp(point)), float(np.exp(low)), float(np.exp(high))
    return UnpairedComparison(
        ratio=ratio,
        low=lo,
        high=hi,
        level=level,
        theta=theta,
        verdict=classify(lo, hi, theta),
        n_baseline=int(b.size),
        n_change=int(c.size),
        resamples=resamples,
        seed=seed,
    )


def _positive(x: np.ndarray, name: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim != 1 or not np.all(np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"{name} block medians must be a 1-d array of finite positive values")
    return arr
