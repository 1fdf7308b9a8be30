"""The limiting operation: its share of time, the predicted mechanism and the physical change."""

from __future__ import annotations

from perfdsl.bundle.evaluation.kernels import OperationResult
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
        if op.models:
            rows = [
                [
                    fmt.code(m.quantity.id),
                    fmt.code(fmt.snippet(study, m.baseline.span)),
                    fmt.code(fmt.snippet(study, m.change.span)),
                ]
                for m in op.models
            ]
            out.add(
                fmt.table(
                    f"What {fmt.code(op.name.id)} moves, as the study models it per call",
                    ["Quantity", "Baseline", "Change"],
                    rows,
                )
            )
    share = _share_sentence(ctx)
    if share:
        out.add(share)
    change = study.change
    if change is None:
        out.add("The study states no mechanism.")
        return
    mechanism = fmt.code(change.mechanism.id) if change.mechanism else "no category"
    summary = fmt.text(change.summary.value) if change.summary else "no summary"
    out.add(f"Predicted mechanism: {mechanism}. {summary}")
    for op in ctx.operations:
        physical = _physical_change(op)
        if physical:
            out.add(physical)


def _share_sentence(ctx: ReportContext) -> str:
    end = ctx.end_to_end
    if end is None:
        return ""
    shares = {s.arm: s for s in end.shares}
    base = shares.get("baseline")
    if base is None:
        return f"Share of critical time: not measured ({fmt.message(end.share_missing)})."
    return (
        f"The operation {fmt.code(end.operation)} holds {fmt.percent(base.f)} of "
        f"{fmt.code(end.application)}'s baseline request time (f, measured over "
        f"{fmt.count(base.requests)} instrumented requests)."
    )


def _physical_change(op: OperationResult) -> str:
    """At the heaviest-weighted shape: each modelled quantity before and after."""
    shapes = op.shapes
    if not shapes:
        return ""
    heaviest = max(shapes, key=lambda s: s.weight)
    quantities = heaviest.mechanism.quantities
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
        f"In physical terms, at the heaviest shape {fmt.text(heaviest.label)} as run, one call of "
        f"{fmt.code(op.name)} goes " + "; ".join(said) + "."
    )
