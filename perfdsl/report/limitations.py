"""Where the result stops: the study's declared limits and its fallback."""

from __future__ import annotations

from perfdsl.nodes import ShapeSet
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext


def render_limitations(ctx: ReportContext, out: Blocks) -> None:
    """The study's declared limits, the shapes measured to regress, and the fallback."""
    study = ctx.study
    items = []
    for limit in study.limits:
        item = f"**{fmt.text(limit.kind.id)}**: {fmt.text(limit.text.value) if limit.text else fmt.MISSING}"
        if limit.shapes:
            item += f" (shapes {fmt.text(_shape_set(limit.shapes))})"
        items.append(item)
    out.add(fmt.bullets(items) if items else "The study declares no limitations.")
    for op in ctx.operations:
        if op.regressions:
            out.add(
                fmt.callout(
                    "WARNING",
                    [
                        f"**Measured regression.** {fmt.code(op.name)} is slower with the change at "
                        + ", ".join(fmt.text(s) for s in op.regressions)
                        + "."
                    ],
                )
            )
    fallback = fmt.text(study.fallback.value) if study.fallback else "none stated"
    out.add(f"Fallback: {fallback}.")


def _shape_set(shapes: ShapeSet) -> str:
    symbols = ", ".join(s.id for s in shapes.symbols)
    listed = ", ".join("(" + ", ".join(str(v) for v in shape.sizes) + ")" for shape in shapes.shapes)
    return f"({symbols}) in [{listed}]"
