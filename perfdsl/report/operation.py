"""The limiting operation: its share of time, the predicted mechanism and the physical change.

The study's own statements (`models_table`, `mechanism_sentence`) are printed
the same way in an imported study's report; the share and the physical change
are this run's.
"""

from __future__ import annotations

from perfdsl.bundle.evaluation.kernels import OperationResult
from perfdsl.nodes import Operation, Study
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext


def render_operation(ctx: ReportContext, out: Blocks) -> None:
    """The named operation, the predicted physical mechanism and the change in physical terms."""
    study = ctx.study
    for op in study.operations:
        lines = [
            f"baseline {fmt.code(op.baseline) if op.baseline else fmt.MISSING}",
            f"change {fmt.code(op.change) if op.change else fmt.MISSING}",
            f"reference {fmt.code(op.reference) if op.reference else fmt.MISSING}",
        ]
        out.add(f"Operation {fmt.code(op.name.id)}: " + "; ".join(lines) + ".")
        out.add(models_table(study, op))
    share = _share_sentence(ctx)
    if share:
        out.add(share)
    out.add(mechanism_sentence(study))
    if study.change is None:
        return
    for op in ctx.operations:
        physical = _physical_change(op)
        if physical:
            out.add(physical)


def models_table(study: Study, op: Operation) -> str:
    """The study's formulas for what one call of `op` moves, per arm; nothing when it models none."""
    if not op.models:
        return ""
    rows = [
        [
            fmt.code(m.quantity.id),
            fmt.code(fmt.snippet(study, m.baseline.span)),
            fmt.code(fmt.snippet(study, m.change.span)),
        ]
        for m in op.models
    ]
    return fmt.table(
        f"What {fmt.code(op.name.id)} moves, as the study models it per call",
        ["Quantity", "Baseline", "Change"],
        rows,
    )


def mechanism_sentence(study: Study) -> str:
    """The predicted mechanism's category and summary, or that the study states none."""
    change = study.change
    if change is None:
        return "The study states no mechanism."
    mechanism = fmt.code(change.mechanism.id) if change.mechanism else "no category"
    summary = fmt.text(change.summary.value) if change.summary else "no summary"
    return f"Predicted mechanism: {mechanism}. {summary}"


def _share_sentence(ctx: ReportContext) -> str:
    end = ctx.end_to_end
    if end is None:
        return ""
    shares = {s.arm: s for s in end.shares}
    base = shares.get("baseline")
    if base is None:
        return f"Share of critical time: not measured ({fmt.message(end.share_missing)})."
    # The f that Amdahl and page 1 use, with its interval, where there is one: this section
    # quoted the baseline arm's raw share instead, 83.9 % beside page 1's 83.3 %.
    f = end.amdahl.f if end.amdahl is not None else None
    held = fmt.percent(base.f)
    if f is not None:
        held = f"{fmt.percent(f.value)} [{fmt.percent(f.low)}, {fmt.percent(f.high)}]"
    return (
        f"The operation {fmt.code(end.operation)} holds {held} of "
        f"{fmt.code(end.application)}'s baseline request time (f, measured over "
        f"{fmt.count(base.requests)} instrumented requests)."
    )


def _physical_change(op: OperationResult) -> str:
    """At the shape production traffic weighs most (its declared weight, not its time: "the
    heaviest shape" read as the slowest one): each modelled quantity before and after."""
    shapes = op.shapes
    if not shapes:
        return ""
    weighed = max(shapes, key=lambda s: s.weight)
    quantities = weighed.mechanism.quantities
    if not quantities:
        return ""
    said = []
    for q in quantities:
        show = fmt.data_size if q.name == "bytes" else fmt.sig
        said.append(
            f"{fmt.text(q.name)} from {show(q.baseline)} to {show(q.change)} "
            f"(ratio {fmt.ratio(q.ratio)}, {q.label})"
        )
    return (
        f"In physical terms, at the shape with the most weight, {fmt.text(weighed.label)} as run, "
        f"one call of {fmt.code(op.name)} goes " + "; ".join(said) + "."
    )
