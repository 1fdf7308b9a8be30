"""Family-wise error control over many comparisons: Holm's step-down adjustment.

A study judges several comparisons (shapes, operations, predictions) at once;
at 5 % each, twenty independent null comparisons call one effect by chance
in 64 % of runs. Holm (1979) keeps the chance of any false call in the family
at alpha and is uniformly more powerful than Bonferroni. Its intervals: no
confidence set matches Holm's step-down exactly and stays simple, so
intervals are given at the Bonferroni level 1 - alpha / m, which holds for all
m at once; an interval at that level that excludes 1 belongs to a hypothesis
that Holm also rejects (Holm's first, strictest step uses alpha / m), so the
intervals never claim an effect the adjusted tests do not.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfdsl.bundle.evaluation.verdicts import FamilyAdjustment


def holm(
    family: str, names: Sequence[str], p_values: Sequence[float], alpha: float = 0.05
) -> FamilyAdjustment:
    """Holm's step-down: sort p ascending, adjusted_(j) = max over k <= j of min(1, (m - k + 1) p_(k))."""
    p = np.asarray(p_values, dtype=float)
    if p.ndim != 1 or p.size == 0 or p.size != len(names):
        raise ValueError("need one p-value per name, at least one")
    if np.any((p < 0) | (p > 1)) or not 0.0 < alpha < 1.0:
        raise ValueError("p-values must be in [0, 1] and alpha in (0, 1)")
    m = p.size
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(stepped)
    return FamilyAdjustment(
        family=family,
        names=tuple(names),
        p_values=tuple(float(x) for x in p),
        adjusted=tuple(float(x) for x in adjusted),
        rejected=tuple(bool(x < alpha) for x in adjusted),
        alpha=alpha,
        interval_level=family_interval_level(m, 1.0 - alpha),
    )


def family_interval_level(m: int, level: float = 0.95) -> float:
    """The per-interval confidence level that holds for m intervals at once: 1 - (1 - level) / m."""
    if m < 1 or not 0.0 < level < 1.0:
        raise ValueError(f"need m >= 1 and level in (0, 1), got {m}, {level}")
    return 1.0 - (1.0 - level) / m
