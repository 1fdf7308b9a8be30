"""The workload as declared, and the baseline's latency and throughput at its operating point.

The declared workload (`declared_workload`) is study prose, printed the same
way in an imported study's report; the operating point is this run's.
"""

from __future__ import annotations

from perfdsl.bundle.evaluation.load import P99_UNDECIDED, UNDECIDED, RateResult
from perfdsl.expectations import expectations
from perfdsl.nodes import Study
from perfdsl.report import formatting as fmt
from perfdsl.report import load_rule
from perfdsl.report.context import Blocks, ReportContext, shape_text, shrunk_by


def render_workload(ctx: ReportContext, out: Blocks) -> None:
    """The workload as declared, and the baseline's latency and throughput side by side."""
    out.add(declared_workload(ctx.study, ctx.evaluation.target))
    if ctx.study.workload is None:
        return
    out.add(
        f"This run was on {fmt.code(ctx.evaluation.target)}"
        + (f", with shapes scaled down by {shrunk_by(ctx)}." if ctx.quick else ".")
        + " Each operation's shapes carry the production weights below."
    )
    for op in ctx.operations:
        rows = []
        for shape in op.shapes:
            arms = {a.arm: a for a in shape.arms}
            base = arms.get("baseline")
            rows.append(
                [
                    fmt.text(shape.label),
                    fmt.sig(shape.weight, 2),
                    fmt.duration(base.median_ns) if base else fmt.MISSING,
                    fmt.count(base.blocks) if base else fmt.MISSING,
                ]
            )
        out.add(
            fmt.table(
                f"Shapes of {fmt.code(op.name)} as run, with the baseline's kernel time",
                ["Shape", "Weight", "Baseline median", "Blocks"],
                rows,
                numeric=(1, 2, 3),
            )
        )
    out.add(*_baseline_operating_point(ctx))


def declared_workload(study: Study, target: str | None) -> str:
    """The workload as the study declares it, and the objective a run on `target` is held to where
    that is the target's own (None: no run on a target of the study's, as for imported files)."""
    workload = study.workload
    if workload is None:
        return "The study declares no workload."
    facts = []
    if workload.summary:
        facts.append(fmt.text(workload.summary.value))
    if workload.dtype:
        facts.append(f"element type {fmt.code(workload.dtype.id)}")
    if workload.targets:
        facts.append("targets " + ", ".join(fmt.code(t.id) for t in workload.targets))
    if workload.objective:
        facts.append(f"objective {fmt.code(fmt.condition(fmt.snippet(study, workload.objective.span)))}")
    own = expectations(study, target).objective if target is not None else None
    if own is not None and own is not workload.objective:
        facts.append(
            f"objective on {fmt.code(target)}, which this run is held to, "
            f"{fmt.code(fmt.condition(fmt.snippet(study, own.span)))}"
        )
    facts += [f"correct when {fmt.code(fmt.condition(fmt.snippet(study, c.span)))}" for c in workload.correct]
    return "; ".join(facts) + "."


def _baseline_operating_point(ctx: ReportContext) -> list[str]:
    """Latency distribution and throughput of the baseline application, together."""
    end = ctx.end_to_end
    parts = []
    if end is None:
        parts.append(
            f"Baseline operating point: no application result "
            f"({fmt.message(ctx.evaluation.end_to_end_missing)})."
        )
    elif end.comparison is not None:
        d = end.comparison.baseline_dispersion
        parts.append(
            f"Baseline operating point of {fmt.code(end.application)} at shape "
            f"{fmt.text(shape_text(ctx, end.shape))}, one request at a time: the median of "
            f"{end.comparison.n_baseline} blocks' median request times is {fmt.duration(d.median)}, "
            f"their interquartile range {fmt.percent(d.iqr_rel)} of it."
        )
    else:
        parts.append(f"Baseline request time: not evidence ({fmt.message(end.comparison_missing)}).")
    load = ctx.load
    if load is None:
        parts.append(f"Baseline under load: not measured ({fmt.message(ctx.evaluation.load_missing)}).")
        return parts
    baseline = next((g for g in load.arms if g.arm == "baseline"), None)
    named = fmt.percentile_name(load.percentile)
    if baseline is None:
        return parts
    rows = []
    for point in baseline.curve:
        r = point.result
        if r is None:
            rows.append(
                [
                    fmt.sig(point.rate),
                    fmt.MISSING,
                    fmt.MISSING,
                    fmt.MISSING,
                    fmt.MISSING,
                    fmt.message(point.missing),
                ]
            )
            continue
        rows.append(
            [
                fmt.sig(point.rate),
                fmt.sig(r.achieved_rate),
                fmt.seconds(r.p50),
                fmt.seconds(r.slo_quantile),
                load_rule.probe_requests(r),
                _verdict(r, load.percentile),
            ]
        )
    parts.append(
        fmt.table(
            f"The baseline under open-loop load: throughput and latency at each offered rate "
            f"(SLO {named} ≤ {fmt.seconds(load.slo_seconds)}; goodput {fmt.rate(baseline.goodput)}"
            f"{' or more' if baseline.lower_bound else ''}"
            f"{'' if baseline.confirmed else ', unconfirmed'})",
            ["Offered (rps)", "Achieved (rps)", "p50", named, "Requests", "SLO"],
            rows,
            numeric=(0, 1, 2, 3, 4),
        )
    )
    return parts


def _verdict(result: RateResult, percentile: float) -> str:
    """`passes`, or `fails` with the criteria that failed, so a reader can tell a
    latency miss from a generator that fell behind."""
    if result.passed:
        return "passes"
    # A sequential probe open at its cap did not show the percentile over the SLO: it is undecided.
    named = fmt.percentile_name(percentile)
    checked = fmt.criterion(P99_UNDECIDED, percentile) if result.decision == UNDECIDED else named
    failed = [
        name
        for ok, name in (
            (result.p99_ok, checked),
            (result.throughput_ok, "throughput"),
            (result.lag_ok, "generator lag"),
        )
        if not ok
    ]
    if failed == [checked] and result.decision == UNDECIDED:
        return f"undecided ({named} open at the cap)"
    return f"fails ({', '.join(failed)})" if failed else "fails"
