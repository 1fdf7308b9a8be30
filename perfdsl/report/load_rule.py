"""How the report words the load test's p99 check: the rule every probe was decided by, and
where each probe stopped.

A bundle from results/10 on records a sequential rule (`bundle.stopping.ProbeRule`); an older
one was decided by the fixed probe, and the report says which, so a reader knows whether
a probe's requests were a stated count or ran until the question was decided.
"""

from __future__ import annotations

from perfdsl.bundle.evaluation.load import LoadEvaluation, RateResult
from perfdsl.bundle.stopping import MIN_STRETCHES_TO_PASS, PROBE_FALSE_PASSES
from perfdsl.report import formatting as fmt


def p99_check(load: LoadEvaluation) -> str:
    """The clause that says how a probe's p99 was judged against the SLO."""
    slo = f"{fmt.percentile_name(load.percentile)} ≤ {fmt.sig(load.slo_seconds * 1e3)} ms"
    rule = load.probe_rule
    if rule is None:
        return (
            f"{slo} at 99 % confidence over the requests' effective number: latencies under "
            "load are serially correlated, so n / tau of them count, tau measured per probe; "
            f"{_STRETCHES_RULE}"
        )
    share = fmt.percent(1.0 - rule.percentile)
    # The simulations behind PROBE_FALSE_PASSES ran the p99 rule; another percentile's were not run.
    simulated = "" if rule.percentile == 0.99 else " of the p99 rule"
    measured = ", ".join(
        f"{fmt.percent(passes / probes, 2)} for {scenario}" for scenario, passes, probes in PROBE_FALSE_PASSES
    )
    return (
        f"{slo}, decided sequentially: after every {rule.window} requests a one-sided test of "
        f"the share of requests over the SLO against {share}, over their effective number "
        "n / tau (latencies under load are serially correlated; tau measured on the requests "
        "so far), stops the probe when it shows the share below (a pass) or above (a fail), "
        f"with the chance of a false pass stated at {fmt.percent(1.0 - rule.confidence)} however "
        f"often it looked (by simulation{simulated}: {measured}); {_STRETCHES_RULE}; a probe still open at "
        f"{fmt.count(rule.max_requests)} requests is not passed"
    )


_STRETCHES_RULE = (
    f"a pass also needs the requests to hold {fmt.count(MIN_STRETCHES_TO_PASS)} independent "
    "stretches of their own drift (n over their latencies' autocorrelation time), so that a "
    "quiet stretch of a slowly drifting service time is not taken for the whole"
)


def probe_requests(result: RateResult) -> str:
    """A probe's requests, and for a sequential probe the look it stopped at and what it decided."""
    needed = fmt.count(MIN_STRETCHES_TO_PASS)
    short = (
        f"{fmt.sig(result.stretches, 2)} independent stretches, {needed} needed to pass"
        if not result.p99_ok and result.decision != "fail" and result.stretches < MIN_STRETCHES_TO_PASS
        else ""
    )
    if result.decision is None or result.decided_at is None:
        return f"{fmt.count(result.n)} ({short})" if short else fmt.count(result.n)
    at = fmt.count(result.decided_at)
    said = "undecided at the cap" if result.decision == "open" else f"{result.decision} at {at}"
    if result.decision == "open" and result.misses and result.dependence > 1.0:
        # 39 of 983 over the SLO, and still open: say why, or it reads as a missed check.
        independent = fmt.count(round(result.n / result.dependence))
        said += (
            f": {fmt.count(result.misses)} over the SLO, but in runs, so the {fmt.count(result.n)} "
            f"count as {independent} independent"
        )
    return f"{fmt.count(result.n)} ({said}{'; ' + short if short else ''})"


def decided_early(load: LoadEvaluation, points: list[RateResult]) -> str:
    """How many of an arm's probes stopped before the cap, for the goodput table."""
    rule = load.probe_rule
    if rule is None:
        return ""
    early = sum(1 for r in points if r.decided_at is not None and r.decided_at < rule.max_requests)
    return f", {early} decided before the cap"
