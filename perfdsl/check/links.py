"""The links that are mostly a matter of presence: decision, limitations, investigation, artifacts.

The investigation record is also checked for the evidence each rejected
hypothesis cites, so the report has numbers to print beside it.
"""

from __future__ import annotations

from perfdsl import vocabulary as words
from perfdsl.check.context import Context
from perfdsl.check.evidence import observed
from perfdsl.check.names import choice, quantity_of, shape_symbols, subject
from perfdsl.nodes import Application, Operation, QuantityRef, Study


def check_decision(ctx: Context) -> None:
    decision = ctx.study.decision
    if decision is None:
        ctx.missing(
            "PD101",
            f"study `{ctx.study.name.id}` declares no decision",
            help="add `decision adopt` (or `reject`, `investigate`)",
        )
        return
    choice(ctx, decision, words.DECISIONS, "decision")


def check_limitations(ctx: Context) -> None:
    study = ctx.study
    if not study.limits:
        ctx.missing(
            "PD112",
            f"study `{study.name.id}` states no limitations",
            help='add `limit regression "..." { shapes ... }`, `limit unsupported '
            '"..."` and the others that apply',
        )
    if study.fallback is None:
        ctx.missing(
            "PD214",
            f"study `{study.name.id}` gives no fallback",
            help='add `fallback "..."`: how to restore the previous path',
        )
    for limit in study.limits:
        if limit.kind.id:
            choice(ctx, limit.kind, words.LIMIT_KINDS, "kind of limit")
        shape_symbols(ctx, limit.shapes, "the limit's shapes")
    regressions = [limit for limit in study.limits if limit.kind.id == "regression"]
    if study.limits and not any(limit.shapes for limit in regressions):
        first = (regressions or list(study.limits))[0]
        ctx.report(
            "PD502",
            "no regressing shape is listed",
            ctx.header(first.span),
            label="where is the change slower?",
            help='add `limit regression "..." { shapes ... }`',
        )


def check_investigation(ctx: Context) -> None:
    study = ctx.study
    if not study.rejected:
        ctx.missing(
            "PD113",
            f"study `{study.name.id}` records no rejected hypothesis",
            help='add `rejected "<alternative explanation>" { because "<evidence>" }`',
        )
    for rejected in study.rejected:
        if rejected.because is None:
            ctx.report(
                "PD212",
                "the rejected hypothesis does not say why",
                ctx.header(rejected.span),
                label="`because` missing",
                help='add `because "<the evidence that rules it out>"`',
            )
        for cited in rejected.evidence:
            _cited(ctx, cited)


def _cited(ctx: Context, cited: QuantityRef) -> None:
    """Cited evidence names a defined subject, a quantity it has, and one the study collects."""
    found = subject(ctx, cited.subject, "cite a quantity of an operation or application the study defines")
    if found is None:
        return
    options = words.OPERATION_EVIDENCE if isinstance(found, Operation) else words.APPLICATION_EVIDENCE
    if not quantity_of(
        ctx, found, cited.quantity, options, code="PD309", label="no such quantity", verb="cite"
    ):
        return
    missing = _uncollected(ctx.study, found, cited.quantity.id)
    if missing:
        ctx.report(
            "PD410",
            f"the study does not collect `{cited.target}`",
            cited.span,
            label="no run will measure this",
            help=missing,
        )


def _uncollected(study: Study, found: Operation | Application, quantity: str) -> str | None:
    """What the study must add to collect `quantity`; None when it collects it.

    Time is not checked here: kernel timing and end-to-end evidence are links of
    their own, reported when missing (PD109, PD110). Static counts are read from
    every run's compiled code.
    """
    if isinstance(found, Application):
        end = study.end_to_end
        if quantity in ("throughput", "goodput") and (end is None or end.load is None):
            return "add `load poisson 50..800 step 50 rps` to `evidence end_to_end`"
        return None
    if quantity == words.BANDWIDTH:
        if study.mechanism is None or study.mechanism.roof is None:
            return "add `roof kernels.copy:copy` to `evidence mechanism`"
        if not any(m.quantity.id == "bytes" for m in found.models):
            return f"model `bytes baseline <formula>, change <formula>` in `operation {found.name.id}`"
        return None
    if quantity in words.MEASURES and not observed(study, found, quantity):
        return f"add `{quantity}` to `evidence mechanism {{ measure ... }}`"
    return None


def check_artifacts(ctx: Context) -> None:
    if ctx.study.artifacts is None:
        ctx.missing(
            "PD114",
            f"study `{ctx.study.name.id}` names no artifact location",
            help='add `artifacts "artifacts/"`',
        )
