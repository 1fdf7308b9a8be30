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

from collections.abc import Mapping, Sequence

import attrs
import numpy as np

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.evaluation.kernels import Comparison, OperationResult, ShapeResult
from perfdsl.bundle.evaluation.load import Goodput, LoadEvaluation
from perfdsl.bundle.evaluation.verdicts import Verdict
from perfdsl.evaluate.compare import compare
from perfdsl.history.runs import Run, environment_changes
from perfdsl.numbers import duration, percentile_name, rate, sig
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
    """Shapes run in A only (a quick run's shapes differ from a full one's), limit shapes included."""
    only_b: tuple[str, ...]
    limits: tuple[ShapeAcross, ...] = ()
    """Shapes timed because a `limit regression` names them, in both runs: weight 0, so in no
    weighted ratio, but each arm's B / A is a cross-run ratio like any other shape's."""


@attrs.frozen
class ApplicationAcross:
    """The application's request time in both runs: each arm across runs, and each run's own verdict."""

    name: str
    arms: tuple[ArmAcross, ...]
    within_a: Comparison | None
    within_b: Comparison | None


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
    application: ApplicationAcross | None = None
    """The application's request time across the runs; None when either run has none."""
    goodputs: tuple[str, ...] = ()
    """Each arm's goodput in A and in B, as lines: brackets of rates tried, with no interval to
    judge a change by, so they are listed, never given a verdict (empty without a load test)."""

    @property
    def application_missing(self) -> str | None:
        """Why the runs have no application in common: none in either, one in one, or two apps."""
        return _application_missing(self.a, self.b)

    @property
    def quick(self) -> list[str]:
        """Which of A and B are quick (smoke) runs, whose timings are not evidence."""
        return [name for name, run in (("A", self.a), ("B", self.b)) if run.evaluation.quick]

    @property
    def slower(self) -> tuple[str, ...]:
        """Every arm and shape (limit shapes too) and the application's request time that B runs
        slower than A, as `operation arm at shape` and `application arm`."""
        kernels = tuple(
            f"{op.name} {arm.arm} at {shape.label}"
            for op in self.operations
            for shape in (*op.shapes, *op.limits)
            for arm in shape.arms
            if _slower(arm)
        )
        app = self.application
        return kernels + tuple(f"{app.name} {arm.arm}" for arm in (app.arms if app else ()) if _slower(arm))


def _slower(arm: ArmAcross) -> bool:
    return arm.comparison is not None and arm.comparison.verdict == "slower"


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
    application_missing = _application_missing(a, b)
    if not operations and application_missing is not None:
        # Two studies given one name: every line would be "not in both runs", and
        # `--fail-on-slower` passed a comparison of nothing.
        raise DifferentStudies(
            f"{a.path} and {b.path} share no operation ({_only(tuple(names_a), tuple(ops_b))}) and "
            f"no application ({application_missing}): runs of two studies both named `{ea.study}`, "
            "not two runs of one; compare two runs of one study"
        )
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
        application=_application(a, b, ea.level, ea.threshold),
        goodputs=_goodputs(ea.load, eb.load, _different_shapes(a, b)),
    )


def _goodputs(a: LoadEvaluation | None, b: LoadEvaluation | None, shapes: str | None) -> tuple[str, ...]:
    """`baseline: 242 rps (unconfirmed) -> 2,500 rps`, per arm; the SLOs when they differ, and
    the application shapes when the runs served different ones."""
    if a is None or b is None:
        return ()
    lines = [f"not of the same request: {shapes}"] if shapes else []
    if (a.slo_seconds, a.percentile) != (b.slo_seconds, b.percentile):
        lines.append(
            f"the SLOs differ: A {percentile_name(a.percentile)} <= {duration(a.slo_seconds * 1e9)}, "
            f"B {percentile_name(b.percentile)} <= {duration(b.slo_seconds * 1e9)}"
        )
    arms_b = {g.arm: g for g in b.arms}
    for g in a.arms:
        other = arms_b.get(g.arm)
        if other is not None:
            lines.append(f"{g.arm}: {_goodput(g)} -> {_goodput(other)}")
    return tuple(lines)


def _goodput(g: Goodput) -> str:
    bracket = "" if g.failing is None else f", below {rate(g.failing)}"
    more = " or more" if g.lower_bound else ""
    return f"{rate(g.goodput)}{more}{bracket}{'' if g.confirmed else ' (unconfirmed)'}"


def _application(a: Run, b: Run, level: float, theta: float) -> ApplicationAcross | None:
    """Each arm's request time B / A over the two runs' application blocks, as for a kernel shape."""
    ea, eb = a.evaluation.end_to_end, b.evaluation.end_to_end
    if ea is None or eb is None or ea.application != eb.application:
        return None
    why_not = _different_shapes(a, b) or ea.comparison_missing or eb.comparison_missing
    arms = tuple(
        _arm(name, (blocks_a, blocks_b), (_median(blocks_a), _median(blocks_b)), why_not, level, theta)
        for name in ARMS
        if (blocks_a := a.application_blocks.get(name)) and (blocks_b := b.application_blocks.get(name))
    )
    return ApplicationAcross(ea.application, arms, ea.comparison, eb.comparison)


def _application_missing(a: Run, b: Run) -> str | None:
    """Why the two runs have no application to compare, or None when both ran the same one."""
    ea, eb = a.evaluation.end_to_end, b.evaluation.end_to_end
    if ea is None and eb is None:
        return "neither run has an application"
    if ea is None or eb is None:
        only, there = ("A", ea) if eb is None else ("B", eb)
        return f"only {only} has one, `{there.application}`"  # type: ignore[union-attr]
    if ea.application != eb.application:
        return f"A's is `{ea.application}`, B's `{eb.application}`"
    return None


def _different_shapes(a: Run, b: Run) -> str | None:
    """Why two runs' requests are no ratio of the code: they served different application shapes
    (a quick run's application is smaller); None when they served the same, or either has none."""
    ea, eb = a.evaluation.end_to_end, b.evaluation.end_to_end
    if ea is None or eb is None or ea.shape == eb.shape:
        return None
    sizes = [" x ".join(f"{k} = {v}" for k, v in e.shape.items()) for e in (ea, eb)]
    return f"the runs served different application shapes (A {sizes[0]}, B {sizes[1]})"


def _median(blocks: Sequence[float]) -> float:
    return float(np.median(blocks))


def _operation(a: OperationResult, b: OperationResult, level: float, theta: float) -> OperationAcross:
    shapes_b = {s.label: s for s in b.shapes}
    shapes = tuple(_shape(s, shapes_b[s.label], level, theta) for s in a.shapes if s.label in shapes_b)
    limits_b = {s.label: s for s in b.limits}
    limits = tuple(_shape(s, limits_b[s.label], level, theta) for s in a.limits if s.label in limits_b)
    combined = []
    for arm in ARMS:
        found = {s.label: x for s in shapes for x in s.arms if x.arm == arm and x.comparison is not None}
        if found and len(found) == len(shapes):
            weights = {s.label: s.weight for s in shapes}
            comparisons = {label: x.comparison for label, x in found.items() if x.comparison is not None}
            medians = {label: x.median_a_ns for label, x in found.items()}
            combined.append((arm, combine_shapes(comparisons, medians, weights, level=level, theta=theta)))
    labels_a = [s.label for s in (*a.shapes, *a.limits)]
    labels_b = [s.label for s in (*b.shapes, *b.limits)]
    return OperationAcross(
        name=a.name,
        shapes=shapes,
        combined=tuple(combined),
        only_a=tuple(label for label in labels_a if label not in labels_b),
        only_b=tuple(label for label in labels_b if label not in labels_a),
        limits=limits,
    )


def _shape(a: ShapeResult, b: ShapeResult, level: float, theta: float) -> ShapeAcross:
    arms_a = {arm.arm: arm for arm in a.arms}
    arms_b = {arm.arm: arm for arm in b.arms}
    why_not = None if a.evidence and b.evidence else a.missing or b.missing or "not evidence"
    across = tuple(
        _arm(
            name,
            (arms_a[name].block_medians_ns, arms_b[name].block_medians_ns),
            (arms_a[name].median_ns, arms_b[name].median_ns),
            why_not,
            level,
            theta,
        )
        for name in ARMS
        if name in arms_a and name in arms_b
    )
    return ShapeAcross(a.label, a.weight, across, a.comparison, b.comparison)


def _arm(
    name: str,
    blocks: tuple[Sequence[float], Sequence[float]],
    medians: tuple[float, float],
    why_not: str | None,
    level: float,
    theta: float,
) -> ArmAcross:
    """One arm's B / A over the two runs' block medians (unpaired); `why_not` says why the
    runs' times are no evidence, None when they are."""
    blocks_a, blocks_b = blocks
    comparison, missing = None, None
    if len(blocks_a) < 2 or len(blocks_b) < 2:
        missing = "fewer than two blocks in a run"
    elif why_not is not None:
        missing = why_not
    else:
        comparison = _either_way(blocks_a, blocks_b, level, theta)
    return ArmAcross(name, *medians, comparison, missing)


def _either_way(
    blocks_a: Sequence[float], blocks_b: Sequence[float], level: float, theta: float
) -> Comparison:
    """B / A over independent block medians, the same numbers whichever run is named first.

    The bootstrap resamples the first-named run's blocks with the first draws of its
    stream, so each order drew its own replicates, and `compare B A` printed 0.9716
    where 1 / `compare A B` was 0.9771. The pair is compared in one order, the runs'
    sorted blocks deciding which, and the answer turned round for the other.
    """
    if sorted(blocks_a) <= sorted(blocks_b):
        return compare(list(blocks_a), list(blocks_b), level=level, min_effect=theta)
    c = compare(list(blocks_b), list(blocks_a), level=level, min_effect=theta)
    assert c.ci_low is not None and c.ci_high is not None  # two blocks a run give an interval
    low, high = 1.0 / c.ci_high, 1.0 / c.ci_low
    replicates = None if c.replicates is None else 1.0 / c.replicates
    if replicates is not None:
        replicates.flags.writeable = False
    return attrs.evolve(
        c,
        ratio=1.0 / c.ratio,
        ci_low=low,
        ci_high=high,
        verdict=classify(low, high, c.theta),
        n_baseline=c.n_change,
        n_change=c.n_baseline,
        baseline_dispersion=c.change_dispersion,
        change_dispersion=c.baseline_dispersion,
        replicates=replicates,
    )


def render_text(result: RunComparison) -> str:
    """The comparison as the terminal shows it: the environment's differences before any number."""
    r = result
    lines = [
        f"compare `{r.study}`: A = {r.a.label} on {r.a.evaluation.target}, "
        f"B = {r.b.label} on {r.b.evaluation.target}",
    ]
    if r.a.evaluation.run_id == r.b.evaluation.run_id:
        lines.append("note: A and B are the same run: every ratio below is of a run with itself")
    if r.environment:
        lines.append(f"environment: {len(r.environment)} difference{'s' if len(r.environment) != 1 else ''}:")
        lines += [f"  {change}" for change in r.environment]
    else:
        # The code measured is the comparison's subject, not its environment: say which it was.
        commits = [run.environment.short_commit if run.environment else None for run in (r.a, r.b)]
        code = f" (the code: commit {commits[0]} -> {commits[1]})" if commits[0] != commits[1] else ""
        lines.append(f"environment: no difference in the recorded machine, software and settings{code}")
    lines += [f"evaluation setting: {s}" for s in r.settings]
    lines.append(f"note: {NOT_INTERLEAVED}")
    lines += [f"note: {said}" for said in _not_evidence(r)]
    lines.append(f"ratios are times (below 1 faster), {r.level:.0%} intervals, threshold {r.threshold:.1%}")
    for op in r.operations:
        lines.append(f"operation {op.name}")
        lines.append(
            f"  {'shape':<14} {'arm':<9} {'A median':>11} {'B median':>11}  B / A [interval]  verdict"
        )
        for shape in op.shapes:
            lines += _rows(shape.label, shape.arms, shape.within_a, shape.within_b)
        for arm, c in op.combined:
            lines.append(f"  {'weighted':<14} {arm:<9} {'':>11} {'':>11}  {_comparison(c)}")
        if op.limits:
            lines.append("  limit shapes (a `limit regression` names them; weight 0, in no weighted ratio):")
            for shape in op.limits:
                lines += _rows(shape.label, shape.arms, shape.within_a, shape.within_b)
        if op.only_a or op.only_b:
            lines.append(f"  shapes not in both runs: {_only(op.only_a, op.only_b)}")
    if r.only_a or r.only_b:
        lines.append(f"operations not in both runs: {_only(r.only_a, r.only_b)}")
    if r.goodputs:
        lines.append("goodput at the SLO (brackets of the rates each search tried; no interval, no verdict):")
        lines += [f"  {line}" for line in r.goodputs]
    app = r.application
    if app is not None:
        lines.append(f"application {app.name} (request time)")
        lines += _rows("requests", app.arms, app.within_a, app.within_b)
    else:
        lines.append(f"application: not compared ({r.application_missing})")
    slower = r.slower
    lines.append(f"slower in B: {'; '.join(slower)}" if slower else "slower in B: nothing")
    return "\n".join(lines)


def _not_evidence(r: RunComparison) -> list[str]:
    """What makes either run's timings weaker than a full run on a quiet machine: a smoke
    run, or verdicts resting on blocks that competed with other work (PQ009)."""
    said = []
    quick = r.quick
    if quick:
        who = " and ".join(quick)
        said.append(
            f"{who} {'are quick (smoke) runs' if len(quick) > 1 else 'is a quick (smoke) run'}: few blocks "
            "of scaled-down shapes, whose timings are not evidence; a `slower` between them is no regression"
        )
    for name, run in (("A", r.a), ("B", r.b)):
        contended = run.evaluation.contended
        if contended.verdicts_rest_on_contended:
            said.append(
                f"{name}'s timings competed with other work ({contended.contended} of "
                f"{contended.blocks} blocks, PQ009): a ratio across the runs measures that work too"
            )
    return said


def _rows(
    label: str, arms: tuple[ArmAcross, ...], within_a: Comparison | None, within_b: Comparison | None
) -> list[str]:
    """One shape's (or the application's) lines: each arm's B / A, then each run's own verdict."""
    lines = []
    for i, arm in enumerate(arms):
        shown = _comparison(arm.comparison) if arm.comparison else f"not evidence: {arm.missing}"
        medians = f"{_ns(arm.median_a_ns):>11} {_ns(arm.median_b_ns):>11}"
        lines.append(f"  {label if i == 0 else '':<14} {arm.arm:<9} {medians}  {shown}")
    lines.append(
        f"  {'':<14} change / baseline within each run: A {_within(within_a)}; B {_within(within_b)}"
    )
    return lines


def _comparison(c: Comparison | Combined) -> str:
    # A within-run comparison of a quick run can have too few block pairs for an interval.
    if isinstance(c, Comparison) and (c.ci_low is None or c.ci_high is None):
        return f"{c.ratio:.4f} ({c.interval_missing or 'no interval'})  {c.verdict}"
    return f"{c.ratio:.4f} [{c.ci_low:.4f}, {c.ci_high:.4f}]  {c.verdict}"


def _only(a: tuple[str, ...], b: tuple[str, ...]) -> str:
    return f"A only {', '.join(a) or '-'}; B only {', '.join(b) or '-'}"


def _within(c: Comparison | None) -> str:
    """A run's own comparison, with the level its interval holds: the heading's is the across-run
    intervals', and a run's own may be its study's shared over a family (98.75 %)."""
    if c is None:
        return "not evidence"
    if c.ci_low is None or c.ci_high is None:
        return _comparison(c)
    return f"{c.ratio:.4f} [{c.ci_low:.4f}, {c.ci_high:.4f}] {sig(100.0 * c.level, 4)}%  {c.verdict}"


def _ns(value: float) -> str:
    if value >= 1e6:
        return f"{value / 1e6:.3f} ms"
    if value >= 1e3:
        return f"{value / 1e3:.2f} us"
    return f"{value:.0f} ns"
