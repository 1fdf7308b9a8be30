"""Many comparisons at once: Holm's adjustment over every time comparison the study judges.

A study judges each valid kernel shape of each operation and the application's
request time, each at 5 %; with many shapes some "faster" or "slower" calls are
chance. The family is stated with its size, and each comparison keeps a
verdict only if Holm's step-down (`stats.multiple`) still rejects ratio 1.
Invalid comparisons are not in the family: no conclusion rests on them.
"""

from __future__ import annotations

from perfdsl.bundle.evaluation.end_to_end import EndToEnd
from perfdsl.bundle.evaluation.kernels import OperationResult
from perfdsl.bundle.evaluation.verdicts import FamilyAdjustment
from perfdsl.stats.multiple import holm

FAMILY = "time ratio = 1: every valid kernel shape of every operation, and the application's request time"


def adjust(
    operations: tuple[OperationResult, ...], end_to_end: EndToEnd | None, level: float
) -> FamilyAdjustment | None:
    """Holm over the paired comparisons' p-values; None when fewer than two are in the family."""
    found: list[tuple[str, float]] = [
        (f"{op.name} {s.label}", s.usable.p_value)
        for op in operations
        for s in op.shapes
        if s.usable is not None and s.usable.p_value is not None
    ]
    if (
        end_to_end is not None
        and end_to_end.comparison is not None
        and end_to_end.comparison.p_value is not None
    ):
        found.append((end_to_end.application, end_to_end.comparison.p_value))
    if len(found) < 2:
        return None
    return holm(FAMILY, [n for n, _ in found], [p for _, p in found], alpha=1.0 - level)
