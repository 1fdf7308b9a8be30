"""The report's end-to-end effect: f, s, Amdahl's bound against measured, and the load curves.

The application's request time with and without the change, the operation's
measured share of it, the bound that share allows and the measured speedup
beside it, then the open-loop load test: p99 against offered rate for both
arms, the SLO and the two goodputs.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from perfdsl.report import figures
from perfdsl.report import formatting as fmt
from perfdsl.report.context import Blocks, ReportContext


def render_end_to_end(ctx: ReportContext, out: Blocks) -> None:
    """Request time, f, s, Amdahl's bound against measured, and the offered-load curves."""
    end = ctx.end_to_end
    if end is None:
        out.add(f"No end-to-end result: {fmt.message(ctx.evaluation.get('end_to_end_missing'))}.")
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
    app = fmt.code(end["application"])
    c = end.get("comparison")
    if c is None:
        out.add(f"Request time of {app}: not evidence ({fmt.message(end.get('comparison_missing'))}).")
    else:
        out.add(
            f"Request time of {app} at shape {fmt.text(_sizes(end.get('shape')))}: baseline median "
            f"{fmt.duration(c['baseline_dispersion']['median'])}, "
            f"change {fmt.duration(c['change_dispersion']['median'])}; "
            f"ratio {fmt.ratio(c['ratio'])} {fmt.interval(c['ci_low'], c['ci_high'])}, **{c['verdict']}** "
            f"({c['n_baseline']} and {c['n_change']} blocks; rank test p = {fmt.sig(c['rank_p_value'], 2)})."
        )
    out.add(_amdahl(end))
    _load(ctx, out)


def _amdahl(end: Mapping[str, Any]) -> str:
    a = end.get("amdahl")
    if a is None:
        return f"Amdahl's bound: not computed ({fmt.message(end.get('amdahl_missing'))})."
    rows = [
        ["f, the operation's share of baseline time", fmt.percent(a["f"]), "measured"],
        [
            "s, the operation's speedup",
            fmt.ratio(a["s"]),
            f"{fmt.interval(*a['s_ci'])}, from {fmt.text(a['s_source'])}",
        ],
        [
            "Amdahl's bound 1 / ((1 \N{MINUS SIGN} f) + f / s)",
            fmt.ratio(a["bound"]),
            "the most the application can gain",
        ],
    ]
    r = a.get("reconciliation")
    if r:
        rows.append(
            [
                "Measured end-to-end speedup",
                fmt.ratio(r["measured"]),
                f"{fmt.interval(r['measured_low'], r['measured_high'])}: {fmt.message(r['status'])}",
            ]
        )
    table = fmt.table(
        "Amdahl's bound from the measured f and s, against the measured end-to-end speedup",
        ["Quantity", "Value", "Note"],
        rows,
        numeric=(1,),
    )
    if r is None:
        return table + f"\n\nReconciliation: not possible ({fmt.message(a.get('reconciliation_missing'))})."
    note = fmt.message(r["message"]) + "."
    if r.get("flagged"):
        return table + "\n\n" + fmt.callout("WARNING", [f"**Beyond Amdahl's bound.** {note}"])
    return table + f"\n\n{note[0].upper()}{note[1:]}"


def _load(ctx: ReportContext, out: Blocks) -> None:
    load = ctx.load
    if load is None:
        out.add(f"Offered-load test: no result ({fmt.message(ctx.evaluation.get('load_missing'))}).")
        return
    slo_ms = load["slo_seconds"] * 1e3
    series: dict[str, list[tuple[float, float]]] = {}
    goodputs: dict[str, float] = {}
    rows = []
    for g in load.get("arms") or []:
        points = [(p["rate"], p["result"]["p99"] * 1e3) for p in g.get("curve") or [] if p.get("result")]
        if points:
            series[g["arm"]] = points
            if g["goodput"] > 0:
                goodputs[g["arm"]] = g["goodput"]
        limited = ", ".join(g.get("limited_by") or []) or "no failing rate probed"
        failing = g.get("failing")
        rows.append(
            [
                g["arm"],
                fmt.rate(g["goodput"])
                + (" or more" if g.get("lower_bound") or failing is None else f", below {fmt.rate(failing)}"),
                "yes" if g.get("confirmed") else "no",
                limited,
                _generator(g.get("curve") or []),
                str(len(g.get("curve") or [])),
            ]
        )
    out.add(
        fmt.table(
            f"Goodput: the highest offered rate whose p99 met the SLO (p99 ≤ {fmt.sig(slo_ms)} ms) and the "
            "lowest rate above it that failed on the system's account; confirmed when a second pass "
            "repeated both. The generator fell behind when its issue lag grew over a probe by more "
            f"than {fmt.sig(slo_ms * 0.05)} ms (5 % of the SLO) and by more than 2 % of the time elapsed: "
            "a rate lost that way leaves the goodput a lower bound; wake-up jitter does not",
            ["Arm", "Goodput", "Confirmed", "Limited by", "Load generator", "Probes"],
            rows,
            numeric=(1, 5),
        )
    )
    if load.get("capacity"):
        caveat = fmt.capacity_caveat(load)
        out.add(
            f"Capacity change at the same SLO: goodput ratio {fmt.capacity_ratio(load)}"
            + (f" ({caveat})." if caveat else ".")
        )
    else:
        out.add(f"Capacity change: not computed ({fmt.message(load.get('capacity_missing'))}).")
    if series:
        out.figure(
            "load",
            functools.partial(figures.load_curve, series, slo_ms, goodputs),
            "p99 latency against offered load (open loop, latency from the scheduled arrival), "
            "with the SLO and each arm's goodput",
        )


def _generator(curve: list[Mapping[str, Any]]) -> str:
    """How the load generator kept its schedule over an arm's probes: the lowest rate where
    it fell behind, else its worst issue-lag p99 (wake-up jitter)."""
    lags = [(p["rate"], p["result"]["generator"]) for p in curve if (p.get("result") or {}).get("generator")]
    if not lags:
        return fmt.MISSING
    behind = [(rate, lag) for rate, lag in lags if lag["verdict"] == "behind"]
    if behind:
        rate, lag = min(behind, key=lambda pair: pair[0])
        return f"behind at {fmt.rate(rate)} (backlog grew {fmt.seconds(lag['backlog_growth'])})"
    worst = max(lag["p99"] for _, lag in lags)
    return f"kept up (issue-lag p99 up to {fmt.seconds(worst)})"


def _sizes(sizes: Mapping[str, int] | None) -> str:
    return f" {fmt.TIMES} ".join(f"{k} = {v}" for k, v in (sizes or {}).items()) or "as planned"
