"""The links that are mostly a matter of presence: decision, limitations, investigation, artifacts."""

from __future__ import annotations

from perfdsl import vocabulary as words
from perfdsl.check.context import Context
from perfdsl.check.names import choice, shape_symbols


def check_decision(ctx: Context) -> None:
    decision = ctx.study.decision
    if decision is None:
        ctx.missing("PD101", f"study `{ctx.study.name.id}` declares no decision",
                    help="add `decision adopt` (or `reject`, `investigate`)")
        return
    choice(ctx, decision, words.DECISIONS, "decision")


def check_limitations(ctx: Context) -> None:
    study = ctx.study
    if not study.limits:
        ctx.missing("PD112", f"study `{study.name.id}` states no limitations",
                    help='add `limit regression "..." { shapes ... }`, `limit unsupported '
                    '"..."` and the others that apply')
    if study.fallback is None:
        ctx.missing("PD214", f"study `{study.name.id}` gives no fallback",
                    help='add `fallback "..."`: how to restore the previous path')
    for limit in study.limits:
        if limit.kind.id:
            choice(ctx, limit.kind, words.LIMIT_KINDS, "kind of limit")
        shape_symbols(ctx, limit.shapes, "the limit's shapes")
    regressions = [limit for limit in study.limits if limit.kind.id == "regression"]
    if study.limits and not any(limit.shapes for limit in regressions):
        first = (regressions or list(study.limits))[0]
        ctx.report("PD502", "no regressing shape is listed", ctx.header(first.span),
                   label="where is the change slower?",
                   help='add `limit regression "..." { shapes ... }`')


def check_investigation(ctx: Context) -> None:
    study = ctx.study
    if not study.rejected:
        ctx.missing("PD113", f"study `{study.name.id}` records no rejected hypothesis",
                    help='add `rejected "<alternative explanation>" { because "<evidence>" }`')
    for rejected in study.rejected:
        if rejected.because is None:
            ctx.report("PD212", "the rejected hypothesis does not say why",
                       ctx.header(rejected.span), label="`because` missing",
                       help='add `because "<the evidence that rules it out>"`')


def check_artifacts(ctx: Context) -> None:
    if ctx.study.artifacts is None:
        ctx.missing("PD114", f"study `{ctx.study.name.id}` names no artifact location",
                    help='add `artifacts "artifacts/"`')
