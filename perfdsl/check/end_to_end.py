"""The application-level links: end-to-end evidence under load, and the value it supports."""

from __future__ import annotations

from perfdsl import probe_size
from perfdsl import vocabulary as words
from perfdsl.bundle.stopping import SEQUENTIAL
from perfdsl.check.context import Context
from perfdsl.check.names import choice, statistic
from perfdsl.check.units import EPSILON, dimension, fraction
from perfdsl.diagnostics import suggest
from perfdsl.nodes import Application, Condition, EndToEndEvidence, Num
from perfdsl.numbers import percentile_name
from perfdsl.plan_rules import slo_percentile


def check_end_to_end(ctx: Context) -> None:
    study = ctx.study
    if _stated_not_run(ctx):
        return
    if not study.applications or study.end_to_end is None:
        absent = [
            part
            for part, present in (
                ("application", study.applications),
                ("end-to-end evidence", study.end_to_end),
            )
            if not present
        ]
        ctx.missing(
            "PD110",
            f"study `{study.name.id}` has no {' and no '.join(absent)}",
            help="add `application <name> { entry pkg.mod:main; uses <operation> }` "
            "and `evidence end_to_end { ... }`",
        )
    for application in study.applications:
        _application(ctx, application)
    if study.end_to_end is not None:
        _load_test(ctx)


def _stated_not_run(ctx: Context) -> bool:
    """A wholly imported study that says why its application is not measured.

    Its operations are never called, so no application can be run, and the
    value, computed from the end-to-end effect, has nothing to start from.
    """
    study = ctx.study
    return study.imported and study.end_to_end is not None and study.end_to_end.not_run is not None


def _application(ctx: Context, application: Application) -> None:
    name = application.name
    if application.entry is None and not application.imported:
        ctx.report(
            "PD213",
            f"application `{name.id}` has no entry point",
            name.span,
            label="`entry` missing",
            help="add `entry package.module:function`",
        )
    if not application.uses:
        ctx.report(
            "PD210",
            f"application `{name.id}` does not say which operation it uses",
            name.span,
            label="`uses` missing",
            help="add `uses <operation>`",
        )
    for used in application.uses:
        if ctx.study.operation(used.id) is None:
            operations = [o.name.id for o in ctx.study.operations]
            ctx.report(
                "PD301",
                f"no operation named `{used.id}`",
                used.span,
                label="not defined",
                help=suggest(used.id, operations) or "`uses` names operations the study defines",
            )
    fraction(ctx, application.share, "a share", "share 10%")
    operation = ctx.study.operation(name.id)
    if operation is not None:
        later, earlier = sorted((operation.name, name), key=lambda n: n.span.start, reverse=True)
        ctx.report(
            "PD303",
            f"`{name.id}` names both an operation and an application",
            later.span,
            label="second definition",
            help=f"rename one of them: `{name.id}` is already defined on line "
            f"{ctx.study.source.position(earlier.span.start).line}",
        )


def _load_test(ctx: Context) -> None:
    """Load and SLO: present where latency is the objective, and agreeing with it."""
    evidence = ctx.study.end_to_end
    assert evidence is not None
    header = ctx.header(evidence.span)
    if ctx.study.applications and all(a.imported for a in ctx.study.applications):
        _no_load_from_imports(ctx)
        return
    if evidence.load is not None:
        choice(ctx, evidence.load.arrivals, words.ARRIVALS, "arrival process")
        dimension(
            ctx, evidence.load.rates.start, ("rate",), "an offered load", "load poisson 50..800 step 50 rps"
        )
    if evidence.slo is not None:
        check_slo(ctx, evidence.slo)
    _probe_room(ctx, evidence)
    objective = ctx.study.workload.objective if ctx.study.workload else None
    if objective is None or objective.subject[-1].id != "latency":
        return
    for part, present, example in (
        ("load", evidence.load, "load poisson 50..800 step 50 rps"),
        ("SLO", evidence.slo, "slo p99 <= 25 ms"),
    ):
        if present is None:
            ctx.report(
                "PD209",
                f"end-to-end evidence has no {part} while latency is the objective",
                header,
                label=f"{part} missing",
                help=f"add `{example}`",
            )
    bounds = (objective.bound, evidence.slo.bound) if evidence.slo else ()
    if bounds and all(isinstance(b, Num) and b.quantity.dimension == "time" for b in bounds):
        slo_agrees(ctx, objective, evidence.slo)


def _probe_room(ctx: Context, evidence: EndToEndEvidence) -> None:
    """A stated `requests` whose probe cap leaves a probe with no miss room to pass.

    Each probe's test counts n / tau independent requests (`probe_size`), so a
    cap at the clean count passes a probe only while its tail is independent: with
    `requests 500` and the sequential probe (cap 702, 644 needed), a service whose p99
    was a seventh of its SLO stayed open at 702 of 702, and the goodput fell below
    every rate that had passed. Every SLO the study states, its targets' included,
    sets a percentile; the strictest one sizes the suggestion.
    """
    count = evidence.requests
    slos = [evidence.slo, *(t.slo for t in ctx.study.target_expectations)]
    loads = [evidence.load, *(t.load for t in ctx.study.target_expectations)]
    if count is None or count.value < 1 or not any(loads) or not any(slos):
        return  # no count, or one PD310 rejects; no load test, or no SLO to pass
    probe = evidence.probe.id if evidence.probe else SEQUENTIAL
    requests = int(count.value)
    percentile = max(slo_percentile(slo) for slo in slos if slo is not None)
    cap = probe_size.probe_cap(requests, probe, percentile)
    clean = probe_size.clean_count(probe, percentile)
    if cap >= probe_size.DEPENDENCE_ROOM * clean:
        return
    ctx.report(
        "PD510",
        f"a {probe} load probe of `requests {requests:g}` can pass only if its requests are independent",
        count.span,
        label=f"each probe stops at {cap} requests, and a {percentile_name(percentile)} with no miss "
        f"needs {clean} independent ones to pass",
        help=f"write `requests {probe_size.requests_for_room(probe, percentile)}`, so that a probe "
        f"far inside the SLO passes while its slow requests come in runs of up to "
        f"{probe_size.DEPENDENCE_ROOM:g}",
    )


def _no_load_from_imports(ctx: Context) -> None:
    """Imported request times were taken one after another, at no offered rate: no load curve.

    A latency objective therefore goes untested by the run; the report says so
    rather than reading goodput into times no open-loop generator produced.
    """
    evidence = ctx.study.end_to_end
    assert evidence is not None
    for part, given in (("load", evidence.load), ("slo", evidence.slo)):
        if given is not None:
            ctx.report(
                "PD412",
                f"`{part}` asks for a load test, but the application's times are imported",
                given.span,
                label="an imported file holds request times, not an open-loop load test",
                help=f"remove `{part}`: capacity is not computed from imported times",
            )


def check_slo(ctx: Context, slo: Condition) -> None:
    """Known statistics and a time bound: the SLO the load test counts good requests by."""
    *statistics, last = slo.subject
    if last.id != "latency":
        statistics.append(last)
    for word in statistics:
        statistic(ctx, word)
    if isinstance(slo.bound, Num):
        dimension(ctx, slo.bound, ("time",), "an SLO", "slo p99 <= 25 ms")


def slo_agrees(ctx: Context, objective: Condition, slo: Condition) -> None:
    """The load test's SLO is the objective's latency bound, not a second one."""
    assert isinstance(objective.bound, Num) and isinstance(slo.bound, Num)
    wanted, bound = objective.bound.quantity, slo.bound.quantity
    if _statistic(objective) != _statistic(slo):
        span = slo.subject[0].span.to(slo.subject[-1].span)
    elif objective.comparator != slo.comparator or abs(wanted.base - bound.base) > EPSILON * abs(wanted.base):
        span = slo.bound.span
    else:
        return
    ctx.report(
        "PD408",
        "the SLO disagrees with the workload's objective",
        span,
        label=f"the objective is `{objective.metric} {objective.comparator} {wanted}`",
        help=f"write `slo {_statistic(objective)} {objective.comparator} {wanted}`",
    )


def _statistic(condition: Condition) -> str:
    """`p99` for both `p99 latency <= 25 ms` and `p99 <= 25 ms`."""
    return " ".join(word.id for word in condition.subject if word.id != "latency") or "mean"


def check_value(ctx: Context) -> None:
    value = ctx.study.value
    if value is None and _stated_not_run(ctx):
        return
    if value is None:
        ctx.missing(
            "PD111",
            f"study `{ctx.study.name.id}` states no value",
            help="add `value { frequency 80 per token; scale 12000 gpu_hours per day; from <application> }`",
        )
        return
    header = ctx.header(value.span)
    parts = (
        ("frequency", value.frequency, "frequency 80 per token"),
        ("scale", value.scale, "scale 12000 gpu_hours per day"),
    )
    for part, num, example in parts:
        if num is None:
            ctx.report(
                "PD211",
                f"the value has no {part}",
                header,
                label=f"`{part}` missing",
                help=f"add `{example}`",
            )
        else:
            dimension(ctx, num, (part,), f"a {part}", example)
    _basis(ctx)


def _basis(ctx: Context) -> None:
    """The value rests on an application's measured effect, not the kernel's."""
    study = ctx.study
    value = study.value
    assert value is not None
    basis = value.basis
    if basis is None:
        if len(study.applications) != 1:
            ctx.report(
                "PD403",
                "the value has no end-to-end basis",
                ctx.header(value.span),
                label="no application to measure the effect on",
                help="add `from <application>`: the value comes from its measured effect",
            )
        return
    if study.operation(basis.id) is not None:
        apps = [a.name.id for a in study.applications]
        ctx.report(
            "PD403",
            f"the value is computed from operation `{basis.id}`",
            basis.span,
            label="a kernel speedup ignores the rest of the application",
            help=f"write `from {apps[0]}`" if apps else "compute it from an application",
        )
    elif study.application(basis.id) is None:
        names = [a.name.id for a in study.applications]
        ctx.report(
            "PD301",
            f"no application named `{basis.id}`",
            basis.span,
            label="not defined",
            help=suggest(basis.id, names) or "`from` names an application the study defines",
        )
