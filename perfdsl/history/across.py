"""Two runs of one study compared, operation by operation and shape by shape.

Within a run, baseline and change were interleaved block by block, so the
evaluation's verdicts stand as they are and are quoted for both runs. Across
runs nothing was interleaved: run B's blocks ran minutes or months after run
A's, on a machine that may have changed. So a cross-run ratio (B / A, the same
arm in both runs) is the unpaired analysis: an independent bootstrap of each
run's block medians (`evaluate.compare.compare`), judged against the same
practical threshold; whatever changed on the machine between the runs is part
of it, which is why the environment's differences are listed before any number.
"""

from __future__ import annotations

from collections.abc import Mapping

import attrs
import numpy as np

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.evaluation.kernels import Comparison, OperationResult, ShapeResult
from perfdsl.bundle.evaluation.verdicts import Verdict
from perfdsl.evaluate.compare import compare
from perfdsl.history.runs import Run, environment_changes
from perfdsl.stats.verdict import classify

NOT_INTERLEAVED = (
    "the two runs are not interleaved with each other: each cross-run ratio (B / A) is an unpaired "
    "bootstrap of block medians, and whatever changed on the machine between the runs is inside it"
)


@attrs.frozen
class Combined:
    """One arm's B / A ratio of weighted total times over the shapes both runs share."""

    ratio: float
    ci_low: float
    ci_high: float
    level: float
    theta: float
    verdict: Verdict
    weights: tuple[tuple[str, float], ...]
    """(shape, normalised production weight), in the order given."""
    regressions: tuple[str, ...]
    """Shapes whose own B / A verdict is "slower"."""


def combine_shapes(
    comparisons: Mapping[str, Comparison],
    medians_a_ns: Mapping[str, float],
    weights: Mapping[str, float],
    *,
    level: float,
    theta: float,
) -> Combined:
    """B / A as the ratio of weighted total times, sum w t_B / sum w t_A, never a mean of ratios.

    With run A's times held at their medians, the total-time ratio is the mean of
    the per-shape ratios weighted by each shape's share of A's weighted total
    time; replicate j combines each shape's j-th bootstrap replicate the same way,
    so the interval is the bootstrap of the combined statistic (every shape's
    comparison has the same number of replicates: `compare`'s default).
    """
    names = tuple(comparisons)
    totals = np.array([float(weights[s]) * float(medians_a_ns[s]) for s in names])
    shares = totals / totals.sum()
    point = float(shares @ np.array([comparisons[s].ratio for s in names]))
    replicates = shares @ np.stack([comparisons[s].replicates for s in names])
    alpha = 1.0 - level
    low, high = (float(q) for q in np.quantile(replicates, [alpha / 2.0, 1.0 - alpha / 2.0]))
    w = np.array([float(weights[s]) for s in names])
    return Combined(
        ratio=point,
        ci_low=low,
        ci_high=high,
        level=level,
        theta=theta,
        verdict=classify(low, high, theta),
        weights=tuple(zip(names, (float(x) for x in w / w.sum()), strict=True)),
        regressions=tuple(s for s in names if comparisons[s].verdict == "slower"),
    )


@attrs.frozen
class ArmAcross:
    """One arm at one shape in both runs."""

    arm: str
    median_a_ns: float
    median_b_ns: float
    comparison: Comparison | None
    """B / A over the two runs' block medians; None when either run has too few blocks."""
    missing: str | None


@attrs.frozen
class ShapeAcross:
    """One shape of an operation in both runs: each arm across runs, and each run's own verdict."""

    label: str
    weight: float
    arms: tuple[ArmAcross, ...]
    within_a: Comparison | None
    within_b: Comparison | None


@attrs.frozen
class OperationAcross:
    """One operation in both runs, and each arm's workload-weighted ratio across runs."""

    name: str
    shapes: tuple[ShapeAcross, ...]
    combined: tuple[tuple[str, Combined], ...]
    """(arm, weighted B / A) for each arm every common shape could compare."""
    only_a: tuple[str, ...]
    """Shapes run in A only (a quick run's shapes differ from a full one's)."""
    only_b: tuple[str, ...]


@attrs.frozen
class RunComparison:
    """Run B against run A of one study: what changed around the code first, then the numbers."""

    study: str
    a: Run
    b: Run
    environment: tuple[str, ...]
    settings: tuple[str, ...]
    """Differences in the level or threshold the two evaluations used (A's are applied)."""
    level: float
    threshold: float
    operations: tuple[OperationAcross, ...]
    only_a: tuple[str, ...]
    only_b: tuple[str, ...]

    @property
    def slower(self) -> tuple[str, ...]:
        """Every arm and shape that B runs slower than A, as `operation arm at shape`."""
        return tuple(
            f"{op.name} {arm.arm} at {shape.label}"
            for op in self.operations
            for shape in op.shapes
            for arm in shape.arms
            if arm.comparison is not None and arm.comparison.verdict == "slower"
        )


class DifferentStudies(ValueError):
    """The two bundles are runs of different studies: nothing to compare (one line)."""


def compare_runs(a: Run, b: Run) -> RunComparison:
    """Compare run B with run A (DifferentStudies when they are runs of different studies)."""
    ea, eb = a.evaluation, b.evaluation
    if ea.study != eb.study:
        raise DifferentStudies(
            f"{a.path} is a run of `{ea.study}` and {b.path} of `{eb.study}`: compare two runs of one study"
        )
    settings = []
    if ea.level != eb.level:
        settings.append(f"confidence level: {ea.level:.0%} -> {eb.level:.0%} (A's is applied)")
    if ea.threshold != eb.threshold:
        settings.append(f"threshold: {ea.threshold:.1%} -> {eb.threshold:.1%} (A's is applied)")
    ops_b = {op.name: op for op in eb.operations}
    operations = tuple(
        _operation(op, ops_b[op.name], ea.level, ea.threshold) for op in ea.operations if op.name in ops_b
    )
    names_a = [op.name for op in ea.operations]
    return RunComparison(
        study=ea.study,
        a=a,
        b=b,
        environment=tuple(environment_changes(a, b)),
        settings=tuple(settings),
        level=ea.level,
        threshold=ea.threshold,
        operations=operations,
        only_a=tuple(n for n in names_a if n not in ops_b),
        only_b=tuple(n for n in ops_b if n not in names_a),
    )


def _operation(a: OperationResult, b: OperationResult, level: float, theta: float) -> OperationAcross:
    shapes_b = {s.label: s for s in b.shapes}
    shapes = tuple(_shape(s, shapes_b[s.label], level, theta) for s in a.shapes if s.label in shapes_b)
    combined = []
    for arm in ARMS:
        found = {s.label: x for s in shapes for x in s.arms if x.arm == arm and x.comparison is not None}
        if found and len(found) == len(shapes):
            weights = {s.label: s.weight for s in shapes}
            comparisons = {label: x.comparison for label, x in found.items() if x.comparison is not None}
            medians = {label: x.median_a_ns for label, x in found.items()}
            combined.append((arm, combine_shapes(comparisons, medians, weights, level=level, theta=theta)))
    labels_a = [s.label for s in a.shapes]
    return OperationAcross(
        name=a.name,
        shapes=shapes,
        combined=tuple(combined),
        only_a=tuple(label for label in labels_a if label not in shapes_b),
        only_b=tuple(label for label in shapes_b if label not in labels_a),
    )


def _shape(a: ShapeResult, b: ShapeResult, level: float, theta: float) -> ShapeAcross:
    arms_a = {arm.arm: arm for arm in a.arms}
    arms_b = {arm.arm: arm for arm in b.arms}
    across = []
    for name in ARMS:
        if name not in arms_a or name not in arms_b:
            continue
        xa, xb = arms_a[name], arms_b[name]
        comparison, missing = None, None
        if len(xa.block_medians_ns) < 2 or len(xb.block_medians_ns) < 2:
            missing = "fewer than two blocks in a run"
        elif not (a.evidence and b.evidence):
            missing = a.missing or b.missing or "not evidence"
        else:
            comparison = compare(
                list(xa.block_medians_ns), list(xb.block_medians_ns), level=level, min_effect=theta
            )
        across.append(ArmAcross(name, xa.median_ns, xb.median_ns, comparison, missing))
    return ShapeAcross(a.label, a.weight, tuple(across), a.comparison, b.comparison)


def render_text(result: RunComparison) -> str:
    """The comparison as the terminal shows it: the environment's differences before any number."""
    r = result
    lines = [
        f"compare `{r.study}`: A = {r.a.label} on {r.a.evaluation.target}, "
        f"B = {r.b.label} on {r.b.evaluation.target}",
    ]
    if r.environment:
        lines.append(f"environment: {len(r.environment)} difference{'s' if len(r.environment) != 1 else ''}:")
        lines += [f"  {change}" for change in r.environment]
    else:
        lines.append("environment: no difference in the recorded machine, software and settings")
    lines += [f"evaluation setting: {s}" for s in r.settings]
    lines.append(f"note: {NOT_INTERLEAVED}")
    lines.append(f"ratios are times (below 1 faster), {r.level:.0%} intervals, threshold {r.threshold:.1%}")
    for op in r.operations:
        lines.append(f"operation {op.name}")
        lines.append(
            f"  {'shape':<14} {'arm':<9} {'A median':>11} {'B median':>11}  B / A [interval]  verdict"
        )
        for shape in op.shapes:
            for i, arm in enumerate(shape.arms):
                label = shape.label if i == 0 else ""
                shown = _comparison(arm.comparison) if arm.comparison else f"not evidence: {arm.missing}"
                medians = f"{_ns(arm.median_a_ns):>11} {_ns(arm.median_b_ns):>11}"
                lines.append(f"  {label:<14} {arm.arm:<9} {medians}  {shown}")
            lines.append(
                f"  {'':<14} change / baseline within each run: A {_within(shape.within_a)}; "
                f"B {_within(shape.within_b)}"
            )
        for arm, c in op.combined:
            lines.append(f"  {'weighted':<14} {arm:<9} {'':>11} {'':>11}  {_comparison(c)}")
        if op.only_a or op.only_b:
            lines.append(f"  shapes not in both runs: {_only(op.only_a, op.only_b)}")
    if r.only_a or r.only_b:
        lines.append(f"operations not in both runs: {_only(r.only_a, r.only_b)}")
    slower = r.slower
    lines.append(f"slower in B: {'; '.join(slower)}" if slower else "slower in B: nothing")
    return "\n".join(lines)


def _comparison(c: Comparison | Combined) -> str:
    # A within-run comparison of a quick run can have too few block pairs for an interval.
    if isinstance(c, Comparison) and (c.ci_low is None or c.ci_high is None):
        return f"{c.ratio:.4f} ({c.interval_missing or 'no interval'})  {c.verdict}"
    return f"{c.ratio:.4f} [{c.ci_low:.4f}, {c.ci_high:.4f}]  {c.verdict}"


def _only(a: tuple[str, ...], b: tuple[str, ...]) -> str:
    return f"A only {', '.join(a) or '-'}; B only {', '.join(b) or '-'}"


def _within(c: Comparison | None) -> str:
    return _comparison(c) if c is not None else "not evidence"


def _ns(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.3f} ms"
    if value >= 1e3:
        return f"{value / 1e3:.2f} us"
    return f"{value:.0f} ns"
