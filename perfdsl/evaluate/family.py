"""Many comparisons at once: Holm's adjustment, applied to every verdict the study draws.

A study judges each valid kernel shape of each operation, each operation's
combination over shapes and the application's request time, each at 5 %;
with many shapes some "faster" or "slower" calls are chance. The family is
stated with its size, and a faster or slower verdict stands only where
Holm's step-down (`stats.multiple`) still rejects ratio 1: otherwise it
becomes "inconclusive", with the reason, before any warning, prediction,
value or decision reads it. Invalid comparisons are not in the family: no
conclusion rests on them. Nor are the shapes timed only for a `limit
regression`: they have a family of their own (`adjust_limits`), adjusted the
same way.

The p-values are the paired bootstrap-t ones (the Student t's below 10 pairs, which
have no floor: `stats.bootstrap.BOOTSTRAP_T_PAIRS`), whose resolution is 2 / (R + 1)
at R resamples (2e-4 at 10,000): from 251 comparisons on, Holm's first step
asks for less than that floor and nothing could be rejected, whatever the
data. Where a p-value sits at the floor, the analytic one replaces it: the
t distribution's with the comparison's own standard error, recovered from
its interval (which the bootstrap-t matches closely away from the floor).
"""

from __future__ import annotations

import math
from typing import TypeVar

import attrs

from perfdsl.bundle.evaluation.end_to_end import EndToEnd
from perfdsl.bundle.evaluation.kernels import Combined, Comparison, OperationResult, ShapeResult
from perfdsl.bundle.evaluation.verdicts import COMBINED, FamilyAdjustment, member
from perfdsl.bundle.stopping import StopRecord
from perfdsl.stats.bootstrap import DEFAULT_RESAMPLES
from perfdsl.stats.multiple import holm

FAMILY = (
    "time ratio = 1: every valid kernel shape of every operation, each operation's combination over "
    "shapes, and the application's request time"
)
SEQUENTIAL_FAMILY = (
    "time ratio = 1: every valid kernel shape of every operation and the application's request time "
    "(a combination over sequentially stopped shapes holds whenever their intervals do, and is not "
    "adjusted again)"
)
BOOTSTRAP_FLOOR = 2.0 / (DEFAULT_RESAMPLES + 1)
"""The smallest two-sided bootstrap-t p-value R resamples can give."""
Judged = TypeVar("Judged", Comparison, Combined)
DROPPED = "not kept after Holm's adjustment over the family of {m} comparisons (adjusted p = {p:.3g})"


def resolved_p(comparison: Comparison | Combined) -> float | None:
    """The comparison's p-value of ratio 1, analytic where the bootstrap's floor binds."""
    p = comparison.p_value
    if p is None or p > BOOTSTRAP_FLOOR * 1.5:
        return p
    low, high = comparison.ci_low, comparison.ci_high
    if low is None or high is None or not 0 < low < high:
        return p
    from scipy import stats

    df = max(1, _pairs(comparison) - 1)
    se = (math.log(high) - math.log(low)) / (2.0 * float(stats.t.ppf(0.5 + comparison.level / 2.0, df)))
    if se <= 0:
        return p
    return float(2.0 * stats.t.sf(abs(math.log(comparison.ratio)) / se, df))


def _p(comparison: Comparison, stop: StopRecord | None) -> float | None:
    """A comparison's p-value for Holm: a sequential stop's own anytime-valid one, as it is (no
    resampling floor binds it, and it is what stays valid after optional stopping); else
    `resolved_p`. Read as a bootstrap's floor, 0.000198 was replaced by a t interval's 0.0113."""
    return stop.p_value if stop is not None else resolved_p(comparison)


def _pairs(comparison: Comparison | Combined) -> int:
    if isinstance(comparison, Comparison):
        return comparison.n_pairs or min(comparison.n_baseline, comparison.n_change)
    return 10**6  # a combination's standard error pools its shapes: the normal limit


def adjust(
    operations: tuple[OperationResult, ...], end_to_end: EndToEnd | None, level: float
) -> FamilyAdjustment | None:
    """Holm over the family's p-values; None when fewer than two are in it."""
    found: list[tuple[str, float]] = []
    for op in operations:
        for s in op.shapes:
            p = _p(s.usable, s.stop) if s.usable is not None else None
            if p is not None:
                found.append((member(op.name, s.label), p))
        # A sequentially stopped total holds whenever its shapes' intervals do: its error is
        # theirs, already in the family (`stats.sequential.total`), and it spends none of it.
        sequential = op.combined is not None and op.combined.sequential
        p = resolved_p(op.combined) if op.combined is not None and not sequential else None
        if p is not None:
            found.append((member(op.name, COMBINED), p))
    e2e = end_to_end.comparison if end_to_end is not None else None
    stop = end_to_end.stop if end_to_end is not None else None
    p = _p(e2e, stop) if e2e is not None and e2e.interval_missing is None else None
    if end_to_end is not None and p is not None:
        found.append((end_to_end.application, p))
    if len(found) < 2:
        return None
    stopped = any(op.combined is not None and op.combined.sequential for op in operations)
    named = SEQUENTIAL_FAMILY if stopped else FAMILY
    return holm(named, [n for n, _ in found], [p for _, p in found], alpha=1.0 - level)


LIMIT_FAMILY = (
    "time ratio = 1 at each shape timed only for a `limit regression`, of every operation, apart from "
    "the workload's family"
)


def adjust_limits(operations: tuple[OperationResult, ...], level: float) -> FamilyAdjustment | None:
    """Holm over the limit shapes' comparisons alone; None when fewer than two are in it.

    A family of its own: the limit shapes answer the study's own question about
    where the change stops, and adding them to the workload's family would make
    every verdict the decision reads harder to keep, for shapes the decision does
    not rest on.
    """
    found = [
        (member(op.name, s.label), p)
        for op in operations
        for s in op.limits
        if s.usable is not None and (p := _p(s.usable, s.stop)) is not None
    ]
    if len(found) < 2:
        return None
    return holm(LIMIT_FAMILY, [n for n, _ in found], [p for _, p in found], alpha=1.0 - level)


def apply_limits(
    family: FamilyAdjustment | None, operations: tuple[OperationResult, ...]
) -> tuple[OperationResult, ...]:
    """The operations with every limit shape's verdict that its family does not keep made inconclusive."""
    if family is None:
        return operations
    return tuple(
        attrs.evolve(op, limits=tuple(_shape(family, op, s) for s in op.limits)) for op in operations
    )


def _judged(family: FamilyAdjustment, name: str, c: Judged) -> Judged:
    """The comparison, made inconclusive where its faster or slower verdict is not kept."""
    kept = dict(zip(family.names, family.rejected, strict=True))
    if c.verdict not in ("faster", "slower") or kept.get(name, True):
        return c
    adjusted = dict(zip(family.names, family.adjusted, strict=True))
    return attrs.evolve(
        c, verdict="inconclusive", family=DROPPED.format(m=len(family.names), p=adjusted[name])
    )


def _shape(family: FamilyAdjustment, op: OperationResult, s: ShapeResult) -> ShapeResult:
    if s.comparison is None or s.invalid:
        return s
    return attrs.evolve(s, comparison=_judged(family, member(op.name, s.label), s.comparison))


def apply(
    family: FamilyAdjustment | None,
    operations: tuple[OperationResult, ...],
    end_to_end: EndToEnd | None,
) -> tuple[tuple[OperationResult, ...], EndToEnd | None]:
    """The operations and end-to-end result with every verdict Holm does not keep made inconclusive."""
    if family is None:
        return operations, end_to_end
    out = []
    for op in operations:
        shapes = tuple(_shape(family, op, s) for s in op.shapes)
        slower = tuple(s.label for s in shapes if s.usable and s.usable.verdict == "slower")
        combined = op.combined
        if combined is not None:
            combined = _judged(family, member(op.name, COMBINED), combined)
            still = tuple(r for r in combined.regressions if r in slower)
            combined = attrs.evolve(combined, regressions=still)
        out.append(attrs.evolve(op, shapes=shapes, combined=combined, regressions=slower))
    if end_to_end is not None and end_to_end.comparison is not None:
        end_to_end = attrs.evolve(
            end_to_end, comparison=_judged(family, end_to_end.application, end_to_end.comparison)
        )
    return tuple(out), end_to_end
