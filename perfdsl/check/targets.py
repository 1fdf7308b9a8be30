"""Expectations per target: `predict <target> { }` and `target <target> { }` name a run target.

A qualifier is a promise about which runs a statement judges: one that names a
target the study never runs on judges nothing, and a run target left with no
prediction at all (only another target's) can confirm nothing about the change.
What a target states for itself is checked like the study-wide statement it
replaces: an objective like the workload's, an SLO like the end-to-end one, and
the two agreeing.
"""

from __future__ import annotations

from perfdsl import vocabulary as words
from perfdsl.check.context import Context
from perfdsl.check.end_to_end import check_slo, slo_agrees
from perfdsl.check.names import choice
from perfdsl.check.units import dimension
from perfdsl.check.workload import check_objective
from perfdsl.diagnostics import suggest
from perfdsl.expectations import STATED_AS, expectations
from perfdsl.nodes import Name, Num, TargetExpectations


def check_targets(ctx: Context) -> None:
    study = ctx.study
    declared = tuple(t.id for t in study.workload.targets) if study.workload else ()
    qualifiers = [p.on for p in study.predictions if p.on is not None]
    qualifiers += [t.name for t in study.target_expectations]
    for name in {q.span: q for q in qualifiers}.values():
        _declared(ctx, name, declared)
    for target in study.target_expectations:
        _statements(ctx, target)
    if study.predictions:
        for name in study.workload.targets if study.workload else ():
            _judged(ctx, name)


def _declared(ctx: Context, name: Name, declared: tuple[str, ...]) -> None:
    if name.id in STATED_AS:
        ctx.report(
            "PD313",
            f"a `{name.id}` run is held to `{STATED_AS[name.id]}`'s expectations",
            name.span,
            label="no run is judged by this qualifier",
            help=f"write `{STATED_AS[name.id]}`: its timings are never evidence, so it has none of its own",
        )
        return
    if name.id in declared:
        return
    listed = ", ".join(f"`{t}`" for t in declared) or "no target"
    ctx.report(
        "PD313",
        f"`{name.id}` is not one of the study's targets",
        name.span,
        label="no run on this target is judged by it",
        help=suggest(name.id, declared) or f"the workload lists {listed}: add `{name.id}` to `targets`",
    )


def _statements(ctx: Context, target: TargetExpectations) -> None:
    if target.objective is not None:
        check_objective(ctx, target.objective)
    if target.slo is not None:
        check_slo(ctx, target.slo)
    if target.load is not None:
        choice(ctx, target.load.arrivals, words.ARRIVALS, "arrival process")
        example = "load poisson 5..100 step 5 rps"
        dimension(ctx, target.load.rates.start, ("rate",), "an offered load", example)
    chosen = expectations(ctx.study, target.name.id)
    if (target.objective or target.slo) and chosen.objective and chosen.slo:
        bounds = (chosen.objective.bound, chosen.slo.bound)
        if all(isinstance(b, Num) and b.quantity.dimension == "time" for b in bounds):
            slo_agrees(ctx, chosen.objective, chosen.slo)
    _application_shape(ctx, target)


def _application_shape(ctx: Context, target: TargetExpectations) -> None:
    """One shape over the workload's symbols: the application runs at one operating point."""
    shapes, workload = target.application, ctx.study.workload
    if shapes is None or workload is None or workload.shapes is None:
        return
    wanted = tuple(s.id for s in workload.shapes.symbols)
    given = tuple(s.id for s in shapes.symbols)
    if given != wanted:
        problem, label = f"the symbols ({', '.join(given)}) are not the workload's", "other symbols"
    elif len(shapes.shapes) != 1:
        problem, label = f"{len(shapes.shapes)} shapes where the application runs at one", "one shape"
    else:
        return
    ctx.report(
        "PD314",
        f"target `{target.name.id}`'s application shape: {problem}",
        shapes.span,
        label=label,
        help=f"write `application ({', '.join(wanted)}) in [(...)]` with one shape",
    )


def _judged(ctx: Context, name: Name) -> None:
    chosen = expectations(ctx.study, name.id)
    if chosen.predictions:
        return
    ctx.report(
        "PD507",
        f"no prediction applies to target `{name.id}`",
        name.span,
        label=f"a `{name.id}` run is judged against nothing",
        help=f"add `predict {name.id} {{ ... }}` with what this target's physics supports, "
        "or move a prediction into `predict { }` for every target",
    )
