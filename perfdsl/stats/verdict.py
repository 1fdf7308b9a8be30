"""The one verdict rule: a ratio interval against the practical band [1 / (1 + theta), 1 + theta].

Every comparison perfdsl makes (paired within a run, unpaired across runs or
for imported files, the combination over shapes, a mechanism's quantity, the
rest of the request) is judged here, so one interval means one verdict
wherever it is printed. Two rules once coexisted: [1 - theta, 1 + theta]
across runs and the log-symmetric band within them, so at theta = 5 % the
interval [0.94, 0.951] was "faster" in a run and "inconclusive" between runs.
"""

from __future__ import annotations

from perfdsl.bundle.evaluation.verdicts import Verdict


def practical_band(theta: float) -> tuple[float, float]:
    """[1 / (1 + theta), 1 + theta]: symmetric on the log scale, so a change and its inverse are
    judged alike."""
    if theta < 0:
        raise ValueError(f"theta must be non-negative, got {theta}")
    return 1.0 / (1.0 + theta), 1.0 + theta


def classify(low: float, high: float, theta: float) -> Verdict:
    """The verdict for a ratio interval against the practical band.

    faster: the whole interval is below the band; slower: above it; no
    meaningful change: inside it; else inconclusive (criterion.rs's rule).
    theta = 0 turns it into a significance call: faster or slower when the
    interval excludes 1.
    """
    if not low <= high:
        raise ValueError(f"interval bounds out of order: [{low}, {high}]")
    fast_edge, slow_edge = practical_band(theta)
    if high < fast_edge:
        return "faster"
    if low > slow_edge:
        return "slower"
    if fast_edge <= low and high <= slow_edge:
        return "no meaningful change"
    return "inconclusive"
