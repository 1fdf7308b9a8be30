"""Page 1's decision section: the decision and quantified result, the warnings, the predictions.

It has a module of its own because it is the one section that reads every
other section's evidence: its first paragraph says, in one sentence each, the
end-to-end effect, the capacity, each kernel's weighted ratio, correctness,
the verdict band and when the sequential rule stopped; its warnings gather
every condition elsewhere that changes how the result must be read (SPEC
section 7: on the first page when it changes the conclusion). The other
section modules each present one link of evidence and change when that link
does; this one changes when what leads the page does. The imported study's
page 1 (`report.imported`) opens with the same decision sentence
(`decision_sentence`), writes its bounds with the same comparators, warns of
a decision edited after the run (`decision_changed`) and of the same
predictions (`prediction_warnings`), and calls its warnings out the same way
(`warnings_callout`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from perfdsl.bundle.evaluation.end_to_end import straddle_note
from perfdsl.bundle.evaluation.kernels import OperationResult
from perfdsl.bundle.evaluation.load import P99_UNDECIDED, UNDECIDED, Goodput
from perfdsl.bundle.evaluation.mechanism import Explanation
from perfdsl.bundle.evaluation.verdicts import COMBINED, PredictionResult, member
from perfdsl.nodes import Study
from perfdsl.probe_size import sequential_clean
from perfdsl.report import formatting as fmt
from perfdsl.report import stopping
from perfdsl.report.context import Blocks, ReportContext, run_objective, shape_text
from perfdsl.report.end_to_end import PREMISE_UNTESTED
from perfdsl.report.study_edits import edited_lines, line_ranges
from perfdsl.report.timing import unread_blocks

COMPARATORS = {"<=": "≤", ">=": "≥", "<": "<", ">": ">"}
"""How a prediction's comparator is printed."""


def decision_sentence(declared: str | None) -> str:
    """Page 1's opening words: the decision the study declares."""
    return f"**Decision: {fmt.text(declared or 'none stated')}.**"


def warnings_callout(warnings: list[str]) -> str:
    """The first page's warnings as one callout, a paragraph each; nothing when there are none."""
    return fmt.callout("WARNING", warnings) if warnings else ""


def render_decision(ctx: ReportContext, out: Blocks) -> None:
    """Decision and quantified result in one paragraph, the load test in a second, how the
    verdicts were reached in a third, then the warnings, then the predictions.

    The load test has a paragraph of its own: its sentence is the longest on the page, and
    between the request time and the kernel it left the kernel verdict ninth of the first
    paragraph's sentences.
    """
    out.add(" ".join(_headline(ctx)))
    out.add(_capacity_sentence(ctx))
    out.add(" ".join(_how_decided(ctx)))
    out.add(warnings_callout(first_page_warnings(ctx)))
    out.add(*_prediction_table(ctx))


def _how_decided(ctx: ReportContext) -> list[str]:
    """The second paragraph: the verdict rule and, under the sequential rule, where each comparison
    stopped. Apart from the results, so that the first paragraph reads as the result."""
    # Where no timing is evidence no verdict is judged, and the band would only be noise.
    sentences = [_threshold_sentence(ctx)] if ctx.timings_valid else []
    stops = _stops_sentence(ctx)
    if stops:
        sentences.append(stops)
    return sentences


def _headline(ctx: ReportContext) -> list[str]:
    """The sentences of the first paragraph: decision, end to end, kernel, correctness."""
    ev = ctx.evaluation
    decision = ctx.decision
    sentences = [decision_sentence(decision.declared)]
    wrong = [op for op in ctx.operations if not op.correctness.passed]
    if not decision.consistent and ctx.smoke and not wrong and ev.model_level.passed is not False:
        # A smoke run's timings exercise the chain and are evidence of nothing: its page 1 led
        # with "The evidence contradicts it" beside a banner that said so. A failed correctness
        # check is evidence at any size, and keeps the plain words.
        sentences.append(
            "**This smoke run's numbers contradict it** (see the warning below), but a smoke run is "
            "not evidence-grade: run without `--quick` before reading them as a verdict."
        )
    elif not decision.consistent:
        sentences.append("**The evidence contradicts it** (see the warning below).")
    elif wrong or ev.model_level.passed is False:
        sentences.append(_failing_sentence(ctx))
    elif decision.unsupported:
        sentences.append(
            "**The evidence does not yet support it**: "
            + "; ".join(fmt.message(u) for u in decision.unsupported)
            + "."
        )
    else:
        sentences.append("The evidence below does not contradict it.")
    sentences.append(_end_to_end_sentence(ctx))
    sentences.extend(_kernel_sentence(ctx, op) for op in ctx.operations)
    sentences.append(_correctness_sentence(ctx))
    return sentences


def _failing_sentence(ctx: ReportContext) -> str:
    """Page 1's second sentence when a correctness check failed, naming the arms that failed it.

    "The change fails" was said whatever failed: a new user's application raised in
    both arms, and page 1 blamed the change for it.
    """
    arms = {case.arm for op in ctx.operations if not op.correctness.passed for case in op.correctness.failing}
    arms |= {arm for arm, result in ctx.evaluation.model_level.arms.items() if not result.passed}
    if arms == {"baseline"}:
        return (
            "**The baseline fails its correctness check**, so no comparison with it supports this or "
            "any decision."
        )
    if {"baseline", "change"} <= arms:
        return (
            "**The baseline and the change both fail their correctness checks**, so no timing of "
            "either supports this or any decision."
        )
    return "**The change fails its correctness check**, so none of its timings supports this or any decision."


def _reference_suspect(ctx: ReportContext) -> str:
    """A clause where both arms miss the reference alike at every case either fails: two
    implementations agreeing with each other and not with it point at the reference (a new user's
    reference off by 0.001 read as both correct arms failing)."""
    failing = [case for op in ctx.operations for case in op.correctness.failing]
    by_case: dict[tuple[object, ...], dict[str, float | None]] = {}
    for case in failing:
        key = (tuple(sorted(case.shape.items())), case.seed, case.adversarial)
        by_case.setdefault(key, {})[case.arm] = case.rel_l2
    alike = bool(by_case) and all(
        set(errors) == {"baseline", "change"}
        and None not in errors.values()
        and math.isclose(errors["baseline"], errors["change"], rel_tol=0.01)  # type: ignore[arg-type]
        for errors in by_case.values()
    )
    if not alike:
        return ""
    return (
        ": the baseline and the change miss the reference by the same relative L2 error, within 1 %, "
        "at every case either fails, so the reference may be the one that is wrong"
    )


def _stops_sentence(ctx: ReportContext) -> str | None:
    """When and why each comparison the sequential rule watched stopped (None: the fixed design)."""
    rule = ctx.plan.timing.stopping
    if rule is None:
        return None
    stopped = [
        stopping.Stopped(
            f"{fmt.code(op.name)} {fmt.text(shape.label)}{stopping.invalid_note(shape)}",
            shape.stop,
            shape.stop_agrees,
            shape.stop_pairs_needed,
        )
        for op in ctx.operations
        for shape in op.shapes
        if shape.stop
    ]
    end = ctx.end_to_end
    if end is not None and end.stop is not None:
        subject = f"{fmt.code(end.application)} request time"
        stopped.append(stopping.Stopped(subject, end.stop, end.stop_agrees))
    return stopping.stops_sentence(rule, stopped)


def _threshold_sentence(ctx: ReportContext) -> str:
    """What decides faster, slower, no meaningful change and inconclusive, and where it is set."""
    ev = ctx.evaluation
    theta = ev.threshold
    shared = (
        f" (the study's {fmt.percent(ev.level, 4)} shared by its {ctx.plan.timing.family} comparisons, "
        "so that all hold together)"
        if ctx.interval_level != ev.level
        else ""
    )
    return (
        f"Verdicts judge each {fmt.percent(ctx.interval_level, 4)} interval{shared} against the "
        "practical band "
        f"[{fmt.ratio(1 / (1 + theta))}, {fmt.ratio(1 + theta)}] (threshold {fmt.percent(theta)}, "
        "set by `threshold` in `evidence timing`, at least 1 %): faster or slower only when the whole "
        "interval lies beyond it, no meaningful change when inside it, inconclusive when it straddles "
        "an edge."
    )


def _end_to_end_sentence(ctx: ReportContext) -> str:
    end = ctx.end_to_end
    if end is None:
        return f"End to end: no result ({fmt.message(ctx.evaluation.end_to_end_missing)})."
    app = fmt.code(end.application)
    c = end.comparison
    if c is None:
        return f"End to end, {app}: no timing evidence ({fmt.message(end.comparison_missing)})."
    interval = (
        f"{fmt.percent(ctx.interval_level, 4)} interval {fmt.interval(c.ci_low, c.ci_high)}"
        if c.ci_low is not None
        else f"no interval ({fmt.message(c.interval_missing)})"
    )
    shown = (
        f"End to end, {app} request time (change / baseline) is {fmt.ratio(c.ratio)}, "
        f"{interval}: **{c.verdict}**{_family_note(c.family)}"
    )
    amdahl = end.amdahl
    r = amdahl.reconciliation if amdahl else None
    if amdahl and not r:
        return (
            f"{shown}; against Amdahl's bound on it, {fmt.ratio(amdahl.bound_time_ratio)}: **not "
            f"established** ({fmt.message(amdahl.reconciliation_missing)}). {_rest_sentence(ctx)}"
        ).rstrip()
    if amdahl is None or r is None:
        return f"{shown}."
    low, high = amdahl.bound_range
    status = _AMDAHL_STATUS.get(r.status, fmt.text(r.status))
    if r.status == "cross_effect":
        status = _CROSS_EFFECT_POSITION[r.band_position]
    edge = straddle_note(r.measured, r.band_low, r.band_high) if r.status == "consistent" else ""
    if r.status == "consistent" and r.rest in PREMISE_UNTESTED:
        # Inside the band is not yet consistency: the bound holds only with the rest unchanged,
        # and `<= amdahl` stays inconclusive until a run shows that (a new user read "consistent"
        # beside a table that said "inconclusive").
        status = "not contradicted"
        edge = f"{edge}, but {PREMISE_UNTESTED[r.rest]}"
    # Not the kernel's weighted ratio beside it: the operation timed inside the requests, unless
    # it had to be borrowed from the kernel shapes (its own warning says so).
    where = "from its kernel shapes" if amdahl.s_fallback else "inside the requests"
    return (
        f"{shown}; against Amdahl's bound on it, {fmt.ratio(amdahl.bound_time_ratio)} "
        f"[{fmt.ratio(low)}, {fmt.ratio(high)}] (f = {fmt.percent(amdahl.f.value)}, the operation's "
        f"time ratio {where} {fmt.ratio(amdahl.op_ratio.value)}), it is **{status}**{fmt.text(edge)}. "
        f"{_rest_sentence(ctx)}"
    ).rstrip()


_CROSS_EFFECT_POSITION = {
    "beyond": "beyond it, because the change also moved the rest of the request",
    "within": "within it, though the change also moved the rest of the request",
    "across": "neither shown within it nor beyond it (its interval crosses an edge of the band), "
    "and the change also moved the rest of the request",
}

_AMDAHL_STATUS = {
    "consistent": "consistent",
    "shortfall": "short of the bound (part of the gain is lost where the split does not place it)",
    "accounting_broken": "beyond what the measured split explains: the numbers do not add up",
    "beyond_bound": "beyond the bound, with the rest of the request unmeasured: not explained",
    "opposite_sign": "of the opposite sign to the operation's",
    "not_established": "too uncertain to tell",
}


def _rest_sentence(ctx: ReportContext) -> str:
    """The rest of the request (its time outside the operation), measured in both arms."""
    end = ctx.end_to_end
    amdahl = end.amdahl if end else None
    d = amdahl.decomposition if amdahl else None
    if end is None or amdahl is None:
        return ""
    if d is None:
        return f"The rest of the request was not measured ({fmt.message(amdahl.decomposition_missing)})."
    theta = fmt.percent(ctx.evaluation.threshold)
    rho = d.rest_ratio
    r = amdahl.reconciliation
    state = r.rest if r else None
    meaning = {
        "faster": f"faster beyond the {theta} threshold: an effect outside {fmt.code(end.operation)} "
        "that the stated mechanism does not explain",
        "slower": f"**slower** beyond the {theta} threshold: a cost of the change outside "
        f"{fmt.code(end.operation)}",
        "unchanged": f"unchanged within the {theta} threshold, as Amdahl's bound assumes",
        "undetermined": f"not shown to lie inside or outside the {theta} threshold",
    }.get(state or "", "")
    return (
        f"The rest of {fmt.code(end.application)} (request time less the operation's) has time ratio "
        f"{fmt.ratio(rho.value)} {fmt.interval(rho.low, rho.high)}"
        + (f", {meaning}" if meaning else "")
        + f" (share pass, {d.rounds} paired rounds; the rest faster in {d.rest_faster_rounds} of them)."
    )


def objective_text(ctx: ReportContext) -> str | None:
    """The run's objective as the study wrote it, e.g. `p99 latency <= 25 ms at 400 rps`."""
    objective = run_objective(ctx)
    return None if objective is None else fmt.condition(ctx.study.source.snippet(objective.span))


def target_rate(ctx: ReportContext) -> float | None:
    """The run's objective's `at` load in requests per second, if it states one."""
    objective = run_objective(ctx)
    at = objective.at if objective else None
    quantity = getattr(at, "quantity", None)
    return float(quantity.value) if quantity is not None else None


def _capacity_sentence(ctx: ReportContext) -> str:
    load = ctx.load
    objective = objective_text(ctx)
    against = f" (objective {fmt.code(objective)})" if objective else ""
    if load is None:
        return f"Capacity at the SLO{against}: not measured ({fmt.message(ctx.evaluation.load_missing)})."
    goodputs = {g.arm: g for g in load.arms}
    base, change = goodputs.get("baseline"), goodputs.get("change")
    slo = f"{fmt.percentile_name(load.percentile)} ≤ {fmt.seconds(load.slo_seconds)}"
    shown = (
        f"goodput at the SLO ({slo}) goes from {fmt.rate(base.goodput if base else None)} "
        f"to {fmt.rate(change.goodput if change else None)}"
    )
    shown += _undecided_above(base, change)
    if load.capacity:
        shown += f": capacity ratio {fmt.capacity_ratio(load)}"
        caveat = fmt.capacity_caveat(load)
        shown += f" ({caveat})" if caveat else ""
        worth = ctx.evaluation.value
        withdrawn = (worth.capacity_missing if worth else None) or ""
        if withdrawn.startswith("not attributed"):
            shown += (
                ", **not attributed to the change** (the end-to-end effect does not add up against "
                "Amdahl's bound)"
            )
    else:
        shown += f": no capacity ratio ({fmt.message(load.capacity_missing)})"
    rate = target_rate(ctx)
    if rate is not None and base and change:
        at_target = _at_target(rate, base, change, percentile=load.percentile)
        shown += f"; at the target load of {fmt.rate(rate)}, {at_target}"
    return f"Under load{against}, {shown}."


def _undecided_above(*arms: Goodput | None) -> str:
    """A clause for goodputs whose next rate up stayed undecided at its cap rather than failing.

    Such a goodput is the highest rate the probes could show, not where the arm stops
    meeting the SLO: "goes from 138 rps to 77.4 rps" read as a capacity loss where no
    probe of the change had failed. A next rate that also fell short of its throughput did
    fail, and is left out ("which is no failure" sat beside a table that said it failed).
    """
    limited = [g.arm for g in arms if g is not None and g.limited_by == (P99_UNDECIDED,)]
    if not limited:
        return ""
    if len(limited) > 1:
        said = "both goodputs are the highest rates their probes could show"
    else:
        said = f"the {limited[0]}'s goodput is the highest rate its probes could show"
    return f" ({said}: the next rate up stayed undecided at its cap, which is no failure)"


def _at_target(rate: float, *arms: Goodput, percentile: float) -> str:
    """Which arms meet the SLO at the objective's load, which were shown not to, and which neither.

    An arm meets it when its goodput reaches the load, and misses it when a probe at
    or below the load failed on the system's account (the bracket's failing end). A
    goodput below the load with no such failure (the probes above it stayed open at
    their cap, or the generator fell behind) shows neither, and saying "does not meet"
    there would claim a failure that no probe showed.
    """
    groups: dict[str, list[str]] = {"meet": [], "miss": [], "open": []}
    for g in arms:
        missed = g.failing is not None and g.failing <= rate
        groups["meet" if g.goodput >= rate else "miss" if missed else "open"].append(g.arm)
    said = []
    for state, names in groups.items():
        if not names:
            continue
        both = len(names) > 1
        who = " and the ".join(names)
        if state == "meet":
            said.append(f"the {who} {'meet' if both else 'meets'} the SLO")
        elif state == "miss":
            verb = "do" if both else "does"
            said.append(f"the {who} {verb} not meet the SLO (a probe at or below that load failed)")
        else:
            said += [
                f"the {g.arm} is not shown to meet the SLO or to miss it ({_unshown(g, rate, percentile)})"
                for g in arms
                if g.arm in names
            ]
    return "; ".join(said)


def _unshown(arm: Goodput, target: float, percentile: float) -> str:
    """Why a goodput below the target load leaves the target's SLO question open.

    Where probes at or below the load stayed undecided, the worst of them is quoted: a p99
    far over the SLO that the test still could not call (its slow requests came in long
    runs, so they counted as few independent ones) must not read as a probe near the SLO.
    """
    undecided = [
        p.result
        for p in arm.curve
        if arm.goodput < p.rate <= target and p.result is not None and p.result.decision == UNDECIDED
    ]
    if undecided:
        worst = max(undecided, key=lambda r: r.slo_quantile)
        independent = fmt.count(round(worst.n / worst.dependence))
        runs = (
            f"; their latencies came in runs, so the {fmt.count(worst.n)} count as {independent} "
            "independent ones"
            if worst.dependence > 1.0
            else ""
        )
        over = f"{fmt.count(worst.misses)} of {fmt.count(worst.n)} requests over it"
        if worst.misses == 0:
            needed = fmt.count(sequential_clean(percentile))
            over += f" (with none over, showing it within the SLO takes {needed} independent requests)"
        return (
            f"its probes between its goodput and the load stayed undecided at their cap; the worst, "
            f"at {fmt.rate(worst.offered_rate)}, had {fmt.percentile_name(percentile)} "
            f"{fmt.seconds(worst.slo_quantile)} against the SLO's {fmt.seconds(worst.slo)}, {over}{runs}"
        )
    if arm.failing is not None:
        return f"the load lies between its goodput and {fmt.rate(arm.failing)}, which failed"
    if P99_UNDECIDED in arm.limited_by:
        return "the probes above its goodput stayed undecided at their cap"
    if arm.limited_by:
        return f"the probes above its goodput failed on {' and '.join(arm.limited_by)}, not on the SLO"
    return "no rate above its goodput was probed"


def _kernel_sentence(ctx: ReportContext, op: OperationResult) -> str:
    name = fmt.code(op.name)
    combined = op.combined
    if combined is None:
        return f"Kernel {name}: no weighted effect ({fmt.message(op.combined_missing)})."
    shapes = len(combined.shares)
    excluded = combined.excluded
    left_out = (
        f" ({len(excluded)} invalid shape{'s' if len(excluded) != 1 else ''} left out: "
        + ", ".join(fmt.text(e.shape) for e in excluded)
        + ")"
        if excluded
        else ""
    )
    regressions = op.regressions
    slower = f" It is slower at {', '.join(fmt.text(r) for r in regressions)}." if regressions else ""
    return (
        # "valid" only beside shapes left out: alone, "1 valid shape" read as others being invalid.
        f"The {name} kernel time ratio of weighted total times over {shapes} {'valid ' if excluded else ''}"
        f"workload shape{'s' if shapes != 1 else ''}{left_out} "
        f"is {fmt.ratio(combined.ratio)} {fmt.interval(combined.ci_low, combined.ci_high)}: "
        f"**{combined.verdict}**{_family_note(combined.family)}.{slower}"
    )


def _family_note(family: str | None) -> str:
    """Why an interval that cleared the band is inconclusive: Holm did not keep it."""
    return f" (the interval alone clears the band, but it is {fmt.message(family)})" if family else ""


def _correctness_sentence(ctx: ReportContext) -> str:
    failed = [op for op in ctx.operations if not op.correctness.passed]
    cases = sum(a.cases for op in ctx.operations for a in op.correctness.arms)
    adversarial = sum(a.adversarial_cases for op in ctx.operations for a in op.correctness.arms)
    model = ctx.evaluation.model_level
    if failed or model.failure is not None:
        what = [f"{fmt.code(op.name)}: {_failing_cases(ctx, op)}" for op in failed]
        if model.failure is not None:
            what.append(model.failure)
        return f"Correctness: **FAILED** ({'; '.join(what)}){_reference_suspect(ctx)}."
    application = _model_level_clause(ctx) if model.passed else ""
    shown = f"{fmt.count(cases)} cases ({fmt.count(adversarial)} adversarial)"
    return f"Correctness: **passed**, {shown}{application}."


def _model_level_clause(ctx: ReportContext) -> str:
    """What the application's model-level check showed: that the change leaves its output no
    further from its float64 run than the baseline's, which is not that either matches it (both
    arms of a new user's application missed it by rel_l2 1.0, and page 1 said "matches")."""
    arms = ctx.evaluation.model_level.arms
    errors = [arms[arm].rel_l2 for arm in ("change", "baseline") if arm in arms]
    if len(errors) < 2 or None in errors:
        return " and the application's output is no further from its float64 run than the baseline's"
    change, baseline = errors
    return (
        " and the change leaves the application's output no further from its float64 run than the "
        f"baseline's (rel_l2 {fmt.sci(change)} against {fmt.sci(baseline)})"
    )


_PAGE_ONE_CASES = 4
"""Failing cases named on page 1; the correctness section's table lists every one."""


def _failing_cases(ctx: ReportContext, op: OperationResult) -> str:
    """The first failing cases named: variant, shape, seed and what went wrong, in the run's
    own words ("`y` rel_l2 1.67e-05 > 1e-05", "reference `f` failed: ..."), not only its kind:
    a reference that returned the wrong shape read as both arms over tolerance."""
    failing = op.correctness.failing
    if not failing:
        return "its correctness check failed"
    shown = []
    for case in failing[:_PAGE_ONE_CASES]:
        shape = shape_text(ctx, case.shape, "its shape")
        why = fmt.message(case.message) if case.message else ", ".join(case.kinds or ["tolerance"])
        seed = "no seed" if case.seed is None else f"seed {case.seed}"
        shown.append(f"{fmt.code(case.variant or case.arm)} at {shape}, {seed}: {why}")
    more = len(failing) - len(shown)
    if more:
        shown.append(f"and {more} more, each in the correctness section")
    return f"{len(failing)} failing case{'s' if len(failing) != 1 else ''} ({'; '.join(shown)})"


def _amdahl_warnings(ctx: ReportContext) -> list[str]:
    """A contradiction of Amdahl's bound (it leads the page), a borrowed s, a contradicted share."""
    end = ctx.end_to_end
    amdahl = end.amdahl if end else None
    if end is None or amdahl is None:
        return []
    out = []
    r = amdahl.reconciliation
    if r is not None and amdahl.contradicted:
        out.append(
            f"**End to end does not add up.** {fmt.sentence(r.message)}. Until it does, no value, "
            "capacity attribution or decision rests on the end-to-end effect."
        )
    elif r is not None and r.cross_effect_loss:
        out.append(
            f"**A cost outside the operation.** {fmt.sentence(r.message)}: the change makes "
            f"{fmt.code(end.application)} slower outside {fmt.code(end.operation or '')}, which the "
            "stated mechanism does not account for."
        )
    elif r is not None and r.status == "cross_effect":
        out.append(
            f"**An effect outside the operation.** {fmt.sentence(r.message)}. The arms differ only by the "
            "change, so the effect is the change's, and the capacity figure stays attributed to it; but the "
            "stated mechanism does not explain this part: what does?"
        )
    if amdahl.s_fallback:
        out.append(f"**s not at the operating point.** {fmt.sentence(amdahl.s_fallback)}.")
    if amdahl.power:
        out.append(f"**Underpowered end to end.** {fmt.sentence(amdahl.power)}.")
    check = amdahl.share_check
    if check is not None and not check.compatible:
        out.append(
            f"**Declared share contradicted**{_share_line(ctx, end.application)}. "
            f"{fmt.sentence(check.message)}; the value section says which share it extrapolates from."
        )
    return out


def _share_line(ctx: ReportContext, application: str) -> str:
    """` (line 42)`, where the study declares the contradicted share, as the predictions' warnings
    name theirs; empty where the study does not say (an imported study's)."""
    declared = ctx.study.application(application)
    share = declared.share if declared is not None else None
    return f" (line {ctx.study.source.position(share.span.start).line})" if share is not None else ""


def _busy_machine_warnings(ctx: ReportContext) -> list[str]:
    """Verdicts and goodputs measured while other work competed for the machine (PQ009)."""
    out = []
    contended = ctx.evaluation.contended
    if contended.verdicts_rest_on_contended:
        read = contended.blocks - contended.unresolved
        out.append(
            f"**The machine was busy.** {contended.contended} of the {read} timed blocks whose load "
            f"could be read competed with other work{unread_blocks(contended.unresolved)}, among them "
            "blocks of a verdict above: "
            + ", ".join(fmt.text(s) for s in contended.shapes)
            + ". A rerun on a quiet machine decides whether the verdicts are the change's."
        )
    load = ctx.load
    if load is not None and load.service_mismatch:
        out.append(f"**Capacity does not follow the request time.** {fmt.sentence(load.service_mismatch)}.")
    busy = [(g.arm, g.contended) for g in load.arms if g.contended] if load else []
    if busy:
        shown = "; ".join(f"{g} at {', '.join(fmt.rate(r) for r in rates)}" for g, rates in busy)
        out.append(
            f"**Load probes competed with other work** ({shown}): a goodput decided by a contended probe "
            "measures the machine's other work as much as the arm, and so does the capacity bracket."
        )
    return out


def _machine_state_warnings(ctx: ReportContext) -> list[str]:
    """Conclusions timed while the CPU's clock was free to change or the load generator shared
    the requests' cores (PQ011, PQ012); silent where nothing rests on that state."""
    machine = ctx.evaluation.machine
    if not machine.rests_on:
        return []
    found = "; ".join(f"{fmt.message(f.message)} ({f.code})" for f in machine.findings)
    *first, last = machine.rests_on
    rests = f"{', '.join(first)} and {last}" if first else last
    return [
        f"**The machine's state was not steady.** {found[0].upper()}{found[1:]}. Timed in that state: "
        f"{rests}. perfdsl records the state and never changes it: a rerun with a fixed clock and cores "
        "of its own decides whether these results are the change's."
    ]


def _invalid_warnings(ctx: ReportContext) -> list[str]:
    """Every measured result left out of the conclusions, and why."""
    out = []
    for op in ctx.operations:
        invalid = [s for s in op.shapes if s.invalid]
        if invalid:
            out.append(
                f"**Invalid results excluded** from every conclusion for {fmt.code(op.name)}: "
                + "; ".join(f"{fmt.text(s.label)}: {fmt.message(s.invalid)}" for s in invalid)
                + "."
            )
    return out


def _contradictions(declared: str | None, findings: Sequence[str]) -> str:
    """Every finding against the declared decision in one sentence: "adopt, but X; Y; and Z".

    Each finding is written to stand alone (the terminal and the machine formats list them
    apart), so each opens with "<decision>, but"; together they say it once."""
    if len(findings) == 1:
        return findings[0]
    opening = f"{declared}, but "
    *first, last = (f.removeprefix(opening) for f in findings)
    return f"{opening}{'; '.join(first)}; and {last}"


def first_page_warnings(ctx: ReportContext) -> list[str]:
    """Every condition that changes how the result must be read, one paragraph each."""
    ev = ctx.evaluation
    out: list[str] = _amdahl_warnings(ctx)
    if ctx.predict_edited and ctx.current is not None:
        out.append(
            f"**Predictions edited after the run.** {fmt.sentence(ctx.current.message)}; the verdicts "
            "below judge the registered predictions, in the bundle's study."
        )
    edited = edited_lines(ctx.study, ctx.bundle_study_text)
    if edited:
        plural = "s" if len(edited) > 1 else ""
        out.append(
            f"**Study edited after the run.** Line{plural} {line_ranges(edited)} of "
            f"{fmt.code(Path(ctx.study.source.path).name)} differ{'' if plural else 's'} "
            "from the study that ran, "
            "outside its `predict` section: what this report quotes of the study (its objective, SLO, "
            "formulas, shapes and limits) is the file's, while every measurement and verdict was made "
            "under the study that ran (the bundle's `study.perf`). Run the study again, or build from "
            "that copy."
        )
    registration = ev.registration
    if not registration.matches:
        out.append(f"**Registration broken.** {fmt.sentence(registration.message)}.")
    decision = ctx.decision
    out.extend(decision_changed(ctx.study, ev.decision.declared, rechecked=True))
    if decision.findings:
        against = _contradictions(decision.declared, decision.findings)
        out.append(f"**Decision contradicted.** {fmt.sentence(against)}.")
    if ev.expectations_missing is not None and any(p.on is not None for p in ctx.study.predictions):
        out.append(
            f"**No expectations for this target.** {fmt.sentence(ev.expectations_missing)}: nothing this "
            f"run measured confirms or refutes a prediction; add `predict {ev.expectations_target} {{ }}` "
            "to the study to state what this target should show."
        )
    if ctx.quick:
        # The simulator always runs at its tiny sizes, `--quick` or not; its adversarial shapes are
        # shrunk too, which a reader of "Correctness: passed" must know (255-257 became 63, 64, 33).
        out.append(
            "**Smoke run** (the simulator's tiny sizes). Shapes, the adversarial ones included, are "
            "scaled down and blocks are few: these numbers exercise the chain of evidence, they are not "
            "evidence-grade; the correctness section lists the shapes that ran."
            if ctx.simulated
            else "**Smoke run** (`--quick`). Shapes are scaled down and blocks are few: these numbers "
            "exercise the chain of evidence, they are not evidence-grade."
        )
    if not ctx.timings_valid:
        out.append(
            "**Timings are not evidence.** "
            f"{fmt.message(ev.timings_note or 'the target does not time: no timing result has a verdict')}."
        )
    for op in ctx.operations:
        if not op.correctness.passed:
            out.append(f"**Correctness failed** for {fmt.code(op.name)}: {_failing_cases(ctx, op)}.")
    out.extend(_invalid_warnings(ctx))
    out.extend(_busy_machine_warnings(ctx))
    out.extend(_machine_state_warnings(ctx))
    if ev.model_level.passed is False:
        out.append("**Correctness failed** for the application's output against its float64 run.")
    out.extend(prediction_warnings(ev.predictions))
    out.extend(_mechanism_warnings(ctx))
    return out


def decision_changed(study: Study, at_run: str | None, *, rechecked: bool) -> list[str]:
    """The study file's decision where it is not the one the run's study declared (`at_run`), and
    which of the two the page checks against the evidence: the file's where it is `rechecked`
    (`ReportContext.decision`), else the run's."""
    declared = study.decision.id if study.decision else None
    if not (declared and at_run and declared != at_run):
        return []
    checked = (
        f"this page checks {fmt.code(declared)} against the run's evidence; evaluation.json holds the "
        f"check of {fmt.code(at_run)}"
        if rechecked
        else f"the check against the evidence is of {fmt.code(at_run)}"
    )
    return [
        f"**Decision changed after the run**, from {fmt.code(at_run)} to {fmt.code(declared)}: {checked}."
    ]


def _mechanism_warnings(ctx: ReportContext) -> list[str]:
    """Shapes where the stated mechanism does not explain the time change (`evaluate.mechanism`).

    The mechanism section says so at length; page 1 must too, since a confirmed time
    prediction beside a mechanism that did not act is a gain the study does not explain.
    """
    out = []
    for op in ctx.operations:
        flagged = [s for s in op.shapes if s.evidence and s.mechanism.explanation.flagged]
        if flagged:
            where = "; ".join(
                f"{fmt.text(s.label)}: {fmt.message(s.mechanism.explanation.message)}" for s in flagged
            )
            out.append(
                f"**The mechanism does not explain the time change** of {fmt.code(op.name)} at {where}."
            )
        timed = [s.mechanism.explanation for s in op.shapes if s.evidence and s.usable is not None]
        unobserved = {e.quantity for e in timed}
        if timed and all(_unobserved(e) for e in timed) and len(unobserved) == 1:
            # Only the mechanism section said so: page 1 led with a modelled prediction of
            # another quantity, and the stated mechanism had no evidence at all.
            out.append(
                f"**The mechanism is not observed** in {fmt.code(op.name)}: "
                f"{fmt.code(unobserved.pop())}, the quantity the stated mechanism changes, is neither "
                "modelled nor counted on this target, so nothing here ties the time change to it."
            )
    return out


def _unobserved(explanation: Explanation) -> bool:
    """The stated mechanism's quantity has no model and no count, so nothing judged it."""
    return explanation.status == "not evidence" and explanation.quantity is not None


def prediction_warnings(
    predictions: Sequence[PredictionResult], uncounted: str = "no counter measured it"
) -> list[str]:
    """A refuted prediction, one that rests on an invalid result, one confirmed only from the
    study's formulas (`uncounted` says why no count judged it)."""
    out = []
    for p in predictions:
        if p.verdict == "refuted":
            out.append(
                f"**Prediction refuted** (line {p.line}): {fmt.code(p.text)}: {fmt.message(p.message)}."
            )
        elif p.verdict == "invalid":
            out.append(
                f"**Prediction rests on an invalid result** (line {p.line}): {fmt.code(p.text)}: "
                f"{fmt.message(p.message)}."
            )
        elif p.verdict == "confirmed" and p.basis == "modelled":
            out.append(
                f"**Modelled, not counted** (line {p.line}): {fmt.code(p.text)} is "
                f"confirmed from the study's own formulas; {uncounted}."
            )
    return out


def _bound(bound: float | None) -> str:
    """A bound as stated (0.05, not 0.05000); a computed one (Amdahl's) to four figures."""
    return fmt.MISSING if bound is None else f"{bound:.4g}"


def _prediction_table(ctx: ReportContext) -> list[str]:
    predictions = list(ctx.evaluation.predictions)
    if not predictions:
        return [_no_predictions(ctx)]
    rows = []
    reasons = []
    for p in predictions:
        ci = p.ci
        shown_ci = fmt.MISSING if not ci or ci[0] == ci[1] else fmt.interval(ci[0], ci[1])
        bound = f"{COMPARATORS.get(p.comparator, fmt.text(p.comparator))} {_bound(p.bound)}"
        if p.bound_source.startswith("amdahl"):
            # `time <= amdahl` asks for the ratio Amdahl's bound gives, within the band, not
            # below it: "≤ 0.9599" beside a confirmed 0.9646 read as a verdict upside down.
            bound = f"≈ {_bound(p.bound)} (Amdahl)" if p.comparator == "<=" else f"{bound} (Amdahl)"
        verdict = p.verdict
        rows.append(
            [
                str(p.line),
                fmt.code(p.text),
                fmt.text(p.basis),
                fmt.ratio(p.value),
                shown_ci,
                bound,
                fmt.ratio(p.detectable),
                f"**{verdict}**" if verdict in ("refuted", "not evidence", "invalid") else verdict,
            ]
        )
        # A decided prediction was decided: what the run would usually detect is beside the point.
        undetected = verdict == "inconclusive" and "smaller than this run can detect" in p.message
        if verdict in ("not evidence", "invalid") or undetected:
            reasons.append(f"line {p.line} ({verdict}): {fmt.message(p.message)}")
    table = fmt.table(
        "Every registered prediction, its verdict and the smallest ratio the run could detect on the "
        "bound's side of 1 (ratios are change / baseline)",
        ["Line", "Prediction", "Basis", "Value", "Interval", "Bound", "Detectable", "Verdict"],
        rows,
        numeric=(0, 3, 4, 6),
    )
    missing = f"Without a verdict, or below what the run detects: {'; '.join(reasons)}." if reasons else ""
    return [table, _whose_expectations(ctx), missing, _family(ctx)]


def _whose_expectations(ctx: ReportContext) -> str:
    """Which target's predictions were judged: a run is held only to its own target's (SPEC 6a)."""
    ev = ctx.evaluation
    held = fmt.code(ev.expectations_target)
    if ev.expectations_target != ev.target:
        run = fmt.code(ev.target)
        return f"Judged against the expectations for target {held}, which a {run} run is held to."
    return f"Judged against the expectations for target {held}."


def _no_predictions(ctx: ReportContext) -> str:
    """No prediction was judged: either none exists, or none is this run's target's."""
    ev = ctx.evaluation
    elsewhere = sorted({p.on.id for p in ctx.study.predictions if p.on is not None})
    if ev.expectations_missing is None or not elsewhere:
        return "The study registers no predictions."
    return (
        f"No prediction was judged: {fmt.message(ev.expectations_missing)}. The study's predictions are "
        f"stated for {', '.join(fmt.code(t) for t in elsewhere)}; a run is judged only against its own "
        "target's expectations, never another target's."
    )


def _family(ctx: ReportContext) -> str:
    """Which family Holm's adjustment covered, and the calls it does not keep."""
    family = ctx.evaluation.family
    if not family:
        return ""
    names, rejected = family.names, family.rejected
    lost = [
        n
        for n, keep, p in zip(names, rejected, family.p_values, strict=True)
        if not keep and p < family.alpha
    ]
    shown = (
        f" Significant alone but not after the adjustment: {', '.join(fmt.text(n) for n in lost)}."
        if lost
        else ""
    )
    planned = ctx.plan.timing.family
    # The error rate was shared before the run over every planned comparison; Holm tests the ones
    # that hold a p-value of their own ("shared by its 4 comparisons" beside "3 tests" read as two
    # families).
    tested = (
        f"{len(names)} of the {planned} comparisons the error rate was shared over: a total over shapes "
        "under the sequential rule (it holds whenever its shapes' intervals do) and an invalid "
        "comparison are not tested"
        if ctx.interval_level != ctx.evaluation.level and planned != len(names)
        else f"{len(names)} tests"
    )
    return (
        f'Many comparisons: Holm\'s adjustment over the family "{fmt.text(family.family)}" '
        f"({tested}, family-wise error {fmt.percent(family.alpha)}): "
        f"{sum(rejected)} remain significant{_significant_yet_open(ctx)}.{shown}"
    )


def _significant_yet_open(ctx: ReportContext) -> str:
    """A clause naming the comparisons Holm finds significant whose verdict is inconclusive.

    "3 remain significant" beside a request time called inconclusive, its interval holding 1,
    read as a contradiction. Significant is a difference from ratio 1; a verdict needs the
    whole interval beyond the practical threshold; and Holm's step-down rejects where the
    interval, which shares the error among the comparisons as Bonferroni's rule does, may
    still hold 1.
    """
    family = ctx.evaluation.family
    verdicts = {
        member(op.name, shape.label): shape.comparison.verdict
        for op in ctx.operations
        for shape in op.shapes
        if shape.comparison is not None
    }
    verdicts |= {member(op.name, COMBINED): op.combined.verdict for op in ctx.operations if op.combined}
    end = ctx.end_to_end
    if end is not None and end.comparison is not None:
        verdicts[end.application] = end.comparison.verdict
    open_ = [
        n
        for n, keep in zip(family.names, family.rejected, strict=True)
        if keep and verdicts.get(n) == "inconclusive"
    ]
    if not open_:
        return ""
    return (
        f" (a difference from ratio 1, which is not a verdict: {', '.join(fmt.code(n) for n in open_)} "
        f"{'are' if len(open_) > 1 else 'is'} significant yet inconclusive, the interval not wholly "
        "beyond the practical threshold; "
        "Holm's step-down can reject where that interval, sharing the error among the comparisons "
        "as Bonferroni's rule does, still holds 1)"
    )
