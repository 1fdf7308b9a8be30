"""Where the result stops: the study's declared limits, each regression limit as measured, and the fallback.

A `limit regression` with shapes is a claim the run tests: `perfdsl run` times
its shapes beside the workload's (`perfdsl.plan.limit_plans`), and the
evaluation judges them apart from the workload (`OperationResult.limits`). So
each declared shape is printed with what this run found there, in words that
say whether the limit held: "regresses as stated", "does not regress here",
"undecided here", or "not measured in this run" with the reason. The declared
limits and the fallback (`declared_limits`, `fallback_sentence`) are study
prose, printed the same way in an imported study's report, which measures no
limit shape.
"""

from __future__ import annotations

from collections.abc import Callable

from perfdsl.bundle.evaluation.kernels import OperationResult, ShapeResult
from perfdsl.bundle.plan import LimitShapePlan
from perfdsl.nodes import Limit, ShapeSet, Study
from perfdsl.plan import shape_dicts
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext

VERDICT_WORDS = {
    "slower": "regresses as stated",
    "faster": "does not regress here",
    "no meaningful change": "does not regress here",
    "inconclusive": "undecided here",
}
NOT_MEASURED = "not measured in this run"


def render_limitations(ctx: ReportContext, out: Blocks) -> None:
    """The study's declared limits, each regression limit's shapes as measured, and the fallback."""
    out.add(declared_limits(ctx.study, lambda limit: measured_limit(ctx, limit)))
    declared = [p.sizes for p in ctx.plan.limits if p.sizes is not None]
    for op in ctx.operations:
        if op.regressions:
            out.add(
                fmt.callout(
                    "WARNING",
                    [
                        f"**Measured regression.** {fmt.code(op.name)} is slower with the change at "
                        + ", ".join(_regression(op, label, declared) for label in op.regressions)
                        + "."
                    ],
                )
            )
    out.add(fallback_sentence(ctx.study))


def declared_limits(study: Study, measured: Callable[[Limit], list[str]]) -> str:
    """The study's limits as bullets, each with the lines `measured` gives it (what a run found)."""
    items = []
    for limit in study.limits:
        item = f"**{fmt.text(limit.kind.id)}**: {fmt.text(limit.text.value) if limit.text else fmt.MISSING}"
        if limit.shapes:
            item += f" (shapes {fmt.text(_shape_set(limit.shapes))})"
        items.append(item + "".join(f"\n  - {line}" for line in measured(limit)))
    return fmt.bullets(items) if items else "The study declares no limitations."


def fallback_sentence(study: Study) -> str:
    """What the study falls back to where the change does not hold."""
    fallback = fmt.text(study.fallback.value) if study.fallback else "none stated"
    return f"Fallback: {fallback}."


def _regression(op: OperationResult, label: str, declared: list[dict[str, int]]) -> str:
    """A workload shape that regresses, said to be a declared limit where one names it."""
    shape = next((s for s in op.shapes if s.label == label), None)
    named = shape is not None and shape.sizes in declared
    return fmt.text(label) + (" (a `limit regression` declares it)" if named else "")


def measured_limit(ctx: ReportContext, limit: Limit) -> list[str]:
    """One line per shape of a `limit regression` (per operation, where there are several): what
    this run measured there, or why it did not; no lines for any other kind of limit."""
    if limit.kind.id != "regression":
        return []
    planned = {_key(p.declared): p for p in ctx.plan.limits}
    lines = []
    for declared in shape_dicts(limit.shapes):
        label = fmt.TIMES.join(str(v) for v in declared.values())
        entry = planned.get(_key(declared))
        if entry is None:
            why = (
                "the run planned no limit shapes (a bundle of an earlier perfdsl)"
                if not ctx.plan.limits
                else "the run's plan does not name it (the study changed after the run)"
            )
            lines.append(f"{label}: {NOT_MEASURED}: {why}")
            continue
        if entry.sizes is None:
            lines.append(f"{label}: {NOT_MEASURED}: {fmt.text(entry.missing or 'not planned')}")
            continue
        for op in ctx.operations:
            named = f"{fmt.code(op.name)} at {label}" if len(ctx.operations) > 1 else label
            lines.append(_shape_line(named, op, entry, ctx.interval_level))
    return lines


def _shape_line(named: str, op: OperationResult, entry: LimitShapePlan, level: float) -> str:
    """One limit shape in one operation: `<shape> (notes): <verdict words, ratio, interval>`."""
    assert entry.sizes is not None
    shape = op.timed(entry.sizes)
    notes = []
    if entry.sizes != entry.declared:
        notes.append(f"run as {fmt.TIMES.join(str(v) for v in entry.sizes.values())} under `--quick`")
    if shape is not None and op.shape(entry.sizes) is not None:
        notes.append("a workload shape too, timed once and judged in the workload's family")
    noted = f" ({'; '.join(notes)})" if notes else ""
    if shape is None:
        return f"{named}{noted}: {NOT_MEASURED}: {fmt.code(op.name)} has no timing at it"
    return f"{named}{noted}: {_verdict_words(shape, level)}"


def _verdict_words(shape: ShapeResult, level: float) -> str:
    """`regresses as stated: slower, ratio 1.310 [1.250, 1.370] (95 % interval)`, or why it is no evidence."""
    if shape.comparison is None:
        # Timed but not evidence (the simulator's durations, invalid samples), or never timed.
        lead = "measured but not evidence" if shape.arms else NOT_MEASURED
        return f"{lead}: {fmt.text(shape.missing or 'no comparison')}"
    if shape.usable is None:
        return f"measured but not evidence: {fmt.text(shape.invalid)}"
    c = shape.usable
    words = f"{VERDICT_WORDS[c.verdict]}: {c.verdict}, ratio {fmt.ratio(c.ratio)}"
    if c.interval is not None:
        words += f" {fmt.interval(*c.interval)} ({fmt.percent(level, 4)} interval)"
    why = c.family or c.interval_missing
    words += f"; {fmt.text(why)}" if c.verdict == "inconclusive" and why else ""
    # What the measurement's own quality says of it, beside the verdict it qualifies: a planted
    # null's limit shape read "regresses as stated" while its warm-up never settled (PQ008), said
    # only in evaluation.json.
    warned = [f"{f.code} {fmt.message(f.message)}" for f in shape.findings if f.severity == "warning"]
    return words + (f"; but {'; '.join(warned)}" if warned else "")


def _key(sizes: dict[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted(sizes.items()))


def _shape_set(shapes: ShapeSet) -> str:
    symbols = ", ".join(s.id for s in shapes.symbols)
    listed = ", ".join("(" + ", ".join(str(v) for v in shape.sizes) + ")" for shape in shapes.shapes)
    return f"({symbols}) in [{listed}]"
