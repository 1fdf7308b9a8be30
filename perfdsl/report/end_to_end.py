"""The report's end-to-end effect: f, s, Amdahl's bound against measured, and the load curves.

The application's request time with and without the change, the operation's
measured share of it, the bound that share allows and the measured speedup
beside it, then the open-loop load test: p99 against offered rate for both
arms, the SLO and the two goodputs.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping, Sequence

from perfdsl.bundle.evaluation.end_to_end import EndToEnd, Reconciliation
from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.load import UNDECIDED, CurvePoint, Goodput
from perfdsl.bundle.plan import LoadPlan
from perfdsl.bundle.stopping import MIN_STRETCHES_TO_PASS
from perfdsl.probe_size import clean_count, probe_cap, requests_for_cap
from perfdsl.report import figures, load_rule
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext, shape_text
from perfdsl.report.stopping import describe_stop


def render_end_to_end(ctx: ReportContext, out: Blocks) -> None:
    """Request time, f, s, Amdahl's bound against measured, and the offered-load curves."""
    end = ctx.end_to_end
    if end is None:
        out.add(f"No end-to-end result: {fmt.message(ctx.evaluation.end_to_end_missing)}.")
        return
    if not ctx.timings_valid:
        out.add(
            fmt.callout(
                "WARNING",
                [
                    "**Timings are not evidence** on this target: the end-to-end "
                    "comparison and the load test have no verdict."
                ],
            )
        )
    app = fmt.code(end.application)
    c = end.comparison
    if c is None:
        out.add(f"Request time of {app}: not evidence ({fmt.message(end.comparison_missing)}).")
    else:
        out.add(
            f"Request time of {app} at shape {fmt.text(shape_text(ctx, end.shape))}: baseline median "
            f"{fmt.duration(c.baseline_dispersion.median)}, "
            f"change {fmt.duration(c.change_dispersion.median)}; "
            f"ratio {fmt.ratio(c.ratio)} {fmt.interval(c.ci_low, c.ci_high)}, **{c.verdict}** "
            f"({c.n_baseline} and {c.n_change} blocks; rank test p = {fmt.sig(c.rank_p_value, 2)})."
        )
        disagreement = fmt.rank_disagreement(app, c)
        if disagreement:
            out.add(fmt.RANK_CROSS_CHECK + disagreement + ".")
    if end.stop is not None:
        stopped = describe_stop(end.stop, end.stop_agrees)
        out.add(f"Its request blocks stopped by the sequential rule: {stopped}.")
    application = ctx.results.application
    if application is not None and application.preparations:
        out.add(_preparations(application.preparations))
    out.add(_amdahl(end))
    _load(ctx, out)


def _preparations(counts: Mapping[str, int]) -> str:
    """How many placements in memory each arm's figures rest on (`runtime.preparation`)."""
    said = " and ".join(f"{fmt.text(arm)} {count:,}" for arm, count in counts.items())
    return (
        f"Each arm's request was prepared afresh before its request blocks, share rounds and load "
        f"probes ({said} preparations; fewer than one each where preparing would have taken over a "
        f"quarter of the time): a preparation can stay fast or slow for as long as it lives (where "
        f"its arrays landed), and prepared afresh that draw varies within each arm instead of "
        f"telling the arms apart."
    )


PREMISE_UNTESTED = {
    "unmeasured": "not yet shown consistent: the rest of the request was not measured, so the bound's "
    "premise (the rest unchanged) is untested",
    "undetermined": "not yet shown consistent: the rest of the request is not shown unchanged, "
    "which the bound assumes",
}
"""What the bound still lacks, by the rest of the request's state, where the ratio lies in its band:
page 1 and the end-to-end table say it alike (the table said "consistent with the bound" where
page 1 said "not contradicted ... not yet shown consistent")."""

_STATUS = {
    "consistent": "consistent with the bound",
    "shortfall": "short of the bound, where the measured split does not place the loss",
    "accounting_broken": "NOT ADDING UP: the timed ratio misses the measured split too",
    "beyond_bound": "BEYOND the bound, with the rest of the request unmeasured: unexplained",
    "opposite_sign": "OPPOSITE SIGN: the operation got faster, the application slower",
    "not_established": "not established: the interval is too wide to tell",
}


_CROSS_EFFECT = {
    "beyond": "beyond the bound, explained by the rest of the request moving: a cross-effect",
    "within": "within the bound's band, with the rest of the request moving: a cross-effect",
    "across": "across an edge of the bound's band (neither within it nor beyond it shown), with "
    "the rest of the request moving: a cross-effect",
}
"""A cross-effect's row by where its interval lies (`Reconciliation.band_position`)."""


def _status(r: Reconciliation) -> str:
    """The reconciliation's outcome in the table's words, the untested premise included."""
    if r.status == "consistent" and r.rest in PREMISE_UNTESTED:
        return f"not contradicted, but {PREMISE_UNTESTED[r.rest]}"
    if r.status == "cross_effect":
        return _CROSS_EFFECT[r.band_position]
    return _STATUS.get(r.status, fmt.text(r.status))


def _estimate(e: Estimate, shown: Callable[[float | None], str] = fmt.ratio) -> str:
    return f"{shown(e.value)} [{shown(e.low)}, {shown(e.high)}]"


_WHY_TWO_ESTIMANDS = (
    "Two estimands, on purpose. The split is of mean times per request, because only means add "
    "up: a request's mean time is its operation's mean plus its rest's, which no median obeys. "
    "Its times are clipped first (a request a preemption stretched would otherwise set f), so its "
    "means are of the clipped times, and a raw ratio of sums in results.json can differ. "
    "The verdict on request time is of block medians, because one block a busy machine slowed "
    "cannot move a median. The two are compared only after each is widened by the practical "
    "threshold, so a skewed request-time distribution, which sets a mean apart from a median, "
    "is not read as a broken account unless it exceeds the threshold. The consistent band is the "
    "bound widened by the threshold on each side and, on its slow side, by up to half the effect "
    "the bound allows: losing that much of the gain to launch gaps or the rest of the pipeline is "
    "normal, losing more means another bottleneck absorbs it (a shortfall)."
)


def _amdahl(end: EndToEnd) -> str:
    """Amdahl as a consistency test, all in time ratios, with every interval and its source."""
    a = end.amdahl
    if a is None:
        return f"Amdahl's bound: not computed ({fmt.message(end.amdahl_missing)})."
    low, high = a.bound_range
    rows = [
        ["f, the operation's share of baseline request time", _estimate(a.f, fmt.percent), "measured"],
        ["r = 1 / s, the operation's time ratio", _estimate(a.op_ratio), fmt.text(a.s_source)],
        [
            f"B = (1 {fmt.MINUS} f) + f r, the smallest application time ratio the change can give",
            f"{fmt.ratio(a.bound_time_ratio)} [{fmt.ratio(low)}, {fmt.ratio(high)}]",
            f"speedup at most {fmt.ratio(a.bound)}",
        ],
    ]
    d = a.decomposition
    if d is not None:
        rows += [
            [
                f"{fmt.RHO}, the rest of the request's time ratio (request time {fmt.MINUS} operation time)",
                _estimate(d.rest_ratio),
                f"mean rest {fmt.duration(d.baseline_rest_ns)} baseline, {fmt.duration(d.change_rest_ns)} "
                f"change; faster in {d.rest_faster_rounds} of {d.rounds} rounds",
            ],
            [
                f"D = (1 {fmt.MINUS} f) {fmt.RHO} + f r, the share pass's own request time ratio",
                _estimate(d.request_ratio),
                f"{d.requests[0]} and {d.requests[1]} instrumented requests, {d.rounds} paired rounds",
            ],
        ]
    else:
        rows.append(
            [
                "The rest of the request",
                fmt.MISSING,
                f"not measured: {fmt.message(a.decomposition_missing or 'no share pass in both arms')}",
            ]
        )
    r = a.reconciliation
    if r:
        rows.append(
            [
                "Measured application time ratio",
                _estimate(r.measured),
                f"{_status(r)} (consistent band [{fmt.ratio(r.band_low)}, {fmt.ratio(r.band_high)}])",
            ]
        )
    table = fmt.table(
        "Amdahl as a consistency test, its premise measured: f, r and the rest of the request from the "
        "share pass (ratios of mean times per request, each request's operation time and rest first "
        "clipped to their median +- 5 scaled MADs on a log scale; t intervals over its paired rounds) "
        "against the timed pass's ratio of block medians (all time ratios, change / baseline)",
        ["Quantity", "Value", "Note"],
        rows,
        numeric=(1,),
    )
    table += "\n\n" + _WHY_TWO_ESTIMANDS
    notes = [f"**s borrowed.** {fmt.sentence(a.s_fallback)}."] if a.s_fallback else []
    check = a.share_check
    if check and not check.compatible:
        notes.append(f"**Declared share contradicted.** {fmt.sentence(check.message)}.")
    if r is None:
        text = f"Reconciliation: not possible ({fmt.message(a.reconciliation_missing)})."
        return "\n\n".join([table, text, *([fmt.callout("WARNING", notes)] if notes else [])])
    message = fmt.message(r.message) + "."
    if a.contradicted:
        notes.insert(
            0,
            f"**Does not add up.** {message} Until it does, the end-to-end effect cannot be credited to "
            "this change: no value, capacity attribution or decision rests on it.",
        )
        return table + "\n\n" + fmt.callout("WARNING", notes)
    if r.cross_effect_loss:
        notes.insert(0, f"**A cost outside the operation.** {message}")
        return table + "\n\n" + fmt.callout("WARNING", notes)
    return "\n\n".join(
        [table, f"{message[0].upper()}{message[1:]}", *([fmt.callout("WARNING", notes)] if notes else [])]
    )


def _load(ctx: ReportContext, out: Blocks) -> None:
    load = ctx.load
    if load is None:
        out.add(f"Offered-load test: no result ({fmt.message(ctx.evaluation.load_missing)}).")
        return
    slo_ms = load.slo_seconds * 1e3
    named = fmt.percentile_name(load.percentile)
    series: dict[str, list[tuple[float, float]]] = {}
    goodputs: dict[str, float] = {}
    rows = []
    for g in load.arms:
        points = [(p.rate, p.result.slo_quantile * 1e3) for p in g.curve if p.result]
        if points:
            series[g.arm] = points
            if g.goodput > 0:
                goodputs[g.arm] = g.goodput
        criteria = [fmt.criterion(c, load.percentile) for c in g.limited_by]
        limited = ", ".join(criteria) or "no failing rate probed"
        failing = g.failing
        rows.append(
            [
                g.arm,
                fmt.rate(g.goodput)
                + (" or more" if g.lower_bound or failing is None else f", below {fmt.rate(failing)}"),
                "yes"
                if g.confirmed
                else "no: " + ", ".join(fmt.rate(r) for r in g.passed_above) + " passed above a failure"
                if g.passed_above
                else "no",
                limited,
                _generator(g.curve),
                str(len(g.curve)) + load_rule.decided_early(load, [p.result for p in g.curve if p.result]),
            ]
        )
    out.add(
        fmt.table(
            f"Goodput: the highest offered rate at and below which every probe's {named} met the SLO "
            f"({load_rule.p99_check(load)}) and the lowest rate above it that failed on the system's "
            "account; confirmed when a second pass, on a fresh arrival schedule, repeated the goodput "
            "and no higher rate passed after a failure. "
            "The generator fell behind when its issue lag grew over a probe by more "
            f"than {fmt.sig(slo_ms * 0.05)} ms (5 % of the SLO) and by more than 2 % of the time elapsed: "
            "a rate lost that way leaves the goodput a lower bound; wake-up jitter does not",
            ["Arm", "Goodput", "Confirmed", "Limited by", "Load generator", "Probes"],
            rows,
            numeric=(1, 5),
        )
    )
    if load.capacity:
        caveat = fmt.capacity_caveat(load)
        out.add(
            f"Capacity change at the same SLO: goodput ratio {fmt.capacity_ratio(load)}"
            + (f" ({caveat})." if caveat else ".")
        )
    else:
        out.add(f"Capacity change: not computed ({fmt.message(load.capacity_missing)}).")
    if ctx.plan.load is not None:
        undecided = open_bracket(load.arms, ctx.plan.load, _full_requests(ctx))
        if undecided:
            out.add(undecided)
    if series:
        out.figure(
            "load",
            functools.partial(figures.load_curve, series, slo_ms, goodputs, named),
            f"{named} latency against offered load (open loop, latency from the scheduled arrival), "
            "with the SLO and each arm's goodput",
        )


def _full_requests(ctx: ReportContext) -> int | None:
    """The `requests` a full run of the study takes, for a quick run's advice; None for a full run
    (its own plan says it) or a study that no longer plans."""
    if not ctx.plan.quick:
        return None
    from perfdsl.plan import PlanError, plan

    try:
        full = plan(ctx.study, ctx.evaluation.target, quick=False).load
    except PlanError:
        return None
    return full.requests if full is not None else None


def open_bracket(arms: Sequence[Goodput], plan: LoadPlan, full_requests: int | None = None) -> str | None:
    """Why a goodput's bracket is wide where probes inside it stayed open, and what would decide
    the nearest: a sequential probe with no miss passes on `probe_size.clean_count` independent
    requests, and its n requests count as n / tau of them (tau, their tail's dependence), so a
    probe near capacity, where requests come in long runs, needs that many times more.

    In a quick run (`full_requests`, the study's own count) the advice is the full run's: a
    quick run told a study of `requests 1000` to write `requests 600`, because its own probes
    had been capped lower."""
    clean = clean_count(plan.probe, plan.slo_percentile)
    inside = [
        (g.arm, p.rate, p.result)
        for g in arms
        for p in g.curve
        if p.result is not None
        and p.result.decision == UNDECIDED
        and p.result.misses == 0
        and g.goodput < p.rate < (g.failing if g.failing is not None else math.inf)
    ]
    if not inside:
        return None
    by_arm: dict[str, list[float]] = {}
    for arm, rate, _ in inside:
        by_arm.setdefault(arm, []).append(rate)
    # Every rate, not a range: an open probe with misses between two of them is not among them.
    rates = ", ".join(
        f"the {arm}'s at {', '.join(fmt.rate(r) for r in sorted(set(found)))}"
        for arm, found in by_arm.items()
    )
    taus = [result.dependence for _, _, result in inside]
    held = [result.n / result.dependence for _, _, result in inside]
    arm, rate, nearest = min(inside, key=lambda probe: probe[1])
    needed = max(
        math.ceil(clean * nearest.dependence),
        math.ceil(MIN_STRETCHES_TO_PASS * nearest.n / max(nearest.stretches, 1e-9)),
    )
    requests = requests_for_cap(needed, plan.probe, plan.slo_percentile)
    said = (
        f"Probes inside the brackets stayed open with no request over the SLO ({rates}): their requests "
        f"came in runs (tau {fmt.sig(min(taus), 2)} to {fmt.sig(max(taus), 2)}), so each held only "
        f"{fmt.sig(min(held), 2)} to {fmt.sig(max(held), 2)} independent requests, where a pass with "
        f"no miss needs {clean:,}. Deciding the nearest ({arm}, {fmt.rate(rate)}) would take about "
        f"{float(f'{needed:.2g}'):,.0f} requests, {fmt.seconds(needed / rate)} at that rate: "
    )
    if full_requests is not None and requests <= full_requests:
        cap = probe_cap(full_requests, plan.probe, plan.slo_percentile)
        return said + (
            f"a full run's probes, capped at {cap:,} requests by the study's `requests {full_requests}`, "
            "hold that; this quick run's were capped lower."
        )
    return said + f"`requests {requests}` in `evidence end_to_end`."


def _generator(curve: Sequence[CurvePoint]) -> str:
    """How the load generator kept its schedule over an arm's probes: the lowest rate where
    it fell behind, else its worst issue-lag p99 (wake-up jitter), said late where a probe's
    jitter passed its limit: "kept up (issue-lag p99 up to 93.0 ms)" beside a 10 ms SLO read
    as a generator that kept to its schedule."""
    lags = [(p.rate, p.result.generator) for p in curve if p.result is not None]
    if not lags:
        return fmt.MISSING
    behind = [(rate, lag) for rate, lag in lags if lag.verdict == "behind"]
    if behind:
        rate, lag = min(behind, key=lambda pair: pair[0])
        return f"behind at {fmt.rate(rate)} (backlog grew {fmt.seconds(lag.backlog_growth)})"
    worst = max(lag.p99 for _, lag in lags)
    if any(lag.verdict == "jitter" for _, lag in lags):
        return f"woke late, not behind (issue-lag p99 up to {fmt.seconds(worst)})"
    return f"on time (issue-lag p99 up to {fmt.seconds(worst)})"
