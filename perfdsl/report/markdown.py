"""The report as Markdown: the golden artefact that HTML and PDF render.

`render_markdown` lays the sections out in SPEC section 7's order, one
`render_<section>` per section (dispatched by name, so a new section is one
entry in SECTIONS and one function in a section module). The first section
(`report.decision`) leads with the decision and the quantified result; every
condition that weakens the evidence (a refuted prediction, a failed
correctness check, timings that are not evidence, modelled mechanism figures,
predictions edited after the run, a decision the evidence contradicts, a smoke
run) is a `> [!WARNING]` where it matters, and also on the first page when it
changes the conclusion. A result
the evaluation could not produce prints its `*_missing` reason, never nothing.

The Markdown is a pure function of the study text and the bundle's files: no
clock, no absolute paths unless given one, so a fixed bundle always gives the
same bytes.
"""

from __future__ import annotations

from collections.abc import Callable

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.verdicts import CurrentStudy
from perfdsl.bundle.opened import Bundle
from perfdsl.nodes import Study
from perfdsl.report import (
    correctness,
    decision,
    end_to_end,
    investigation,
    limitations,
    mechanism,
    operation,
    reproduction,
    timing,
    value,
    workload,
)
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, FigureDrawing, ReportContext

SECTIONS: tuple[tuple[str, str], ...] = (
    ("decision", "Decision and result"),
    ("workload", "Workload and baseline operating point"),
    ("operation", "Limiting operation and predicted mechanism"),
    ("correctness", "Correctness evidence"),
    ("mechanism", "Mechanism evidence"),
    ("timing", "Kernel timing"),
    ("end_to_end", "End-to-end effect"),
    ("value", "Value"),
    ("limitations", "Limitations and fallback"),
    ("investigation", "Investigation record"),
    ("reproduction", "Reproduction"),
)
"""(name, heading) in the order SPEC section 7 gives; the headings are stable (tests assert them)."""

_RENDERERS = (
    decision,
    workload,
    operation,
    correctness,
    mechanism,
    timing,
    end_to_end,
    value,
    limitations,
    investigation,
    reproduction,
)


def render_markdown(
    study: Study,
    evaluation: Evaluation,
    bundle: Bundle,
    *,
    bundle_label: str | None = None,
    current: CurrentStudy | None = None,
) -> tuple[str, dict[str, FigureDrawing]]:
    """The report's Markdown and the drawings of the figures it refers to (`context.draw_figures`).

    `evaluation` is evaluation.json's record; `bundle` the opened bundle
    (`bundle.opened.open_bundle`), whose records the report presents;
    `bundle_label` how the report prints its path (default: as opened);
    `current` the study file's `predict` section checked against the
    registered hash (None: not checked, and the report says so).
    """
    ctx = ReportContext(
        study=study,
        evaluation=evaluation,
        results=bundle.results,
        plan=bundle.plan,
        environment=bundle.environment,
        environment_missing=bundle.environment_missing,
        manifest=bundle.manifest,
        registration=bundle.registration,
        bundle_label=bundle_label if bundle_label is not None else str(bundle.path),
        current=current,
        bundle_study_text=bundle.study_text,
    )
    title = study.title.value if study.title else study.name.id
    parts = [f"# {fmt.text(title)}"]
    drawings: dict[str, FigureDrawing] = {}
    for name, heading in SECTIONS:
        blocks = Blocks()
        _renderer(name)(ctx, blocks)
        parts.append(f"## {heading}")
        parts.extend(blocks.parts)
        drawings.update(blocks.drawings)
    return "\n\n".join(parts) + "\n", drawings


def _renderer(name: str) -> Callable[[ReportContext, Blocks], None]:
    """`render_<name>` from one of the section modules."""
    for namespace in (vars(m) for m in _RENDERERS):
        found = namespace.get(f"render_{name}")
        if found is not None:
            return found
    raise LookupError(f"no renderer for section `{name}`")
