"""The report's account of the stopping rule: what it was, and when and why each comparison stopped.

Under `stop sequential` a shape's blocks ended when the rule decided, at the
cap, or when an arm failed; the reader needs the rule, the stopping time, the
reason and the interval the verdict rests on, and for an inconclusive stop
how many pairs the spread measured would have needed. Under the fixed design
there is one sentence: the count was stated beforehand. The first page says
the same in one sentence over every comparison (`stops_sentence`), so the
reader of the decision knows how much was measured and why it ended.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from perfdsl.bundle.evaluation.kernels import OperationResult, ShapeResult
from perfdsl.bundle.plan import Plan, TimingPlan
from perfdsl.bundle.stopping import CAP, DECIDED, StoppingRule, StopRecord
from perfdsl.report import formatting as fmt

_HELD = (
    "so the stated error rate holds however early a comparison stopped; every measured block is kept, "
    "and the evaluation replays the rule from the samples. The weighted total over shapes has the "
    "interval that holds whenever every shape's does: the "
    "shapes' intervals at their stops, mixed by their shares of the baseline's time (each shape "
    "stopped at its share of the study's error rate, so the mix holds at the study's confidence)."
)


def rule_sentence(timing: TimingPlan, held_open: Sequence[str] = ()) -> str:
    """How the kernel comparisons decided when to stop, in one paragraph; `held_open` names each
    comparison a prediction's bound kept measuring and the bounds ("`normalize` shapes at 0.7")."""
    rule = timing.stopping
    if rule is None:
        return (
            f"Stopping rule: the fixed design, {timing.blocks} blocks per arm stated before the run; "
            "the intervals are the paired bootstrap's at that count."
        )
    band = fmt.interval(1.0 / (1.0 + rule.threshold), 1.0 + rule.threshold)
    shared = (
        f", the study's {fmt.percent(timing.confidence, 2)} shared over its family of {timing.family} "
        "comparisons so that Holm's adjustment keeps every decided stop"
        if timing.family > 1
        else ""
    )
    bounds = (
        " A decided comparison keeps measuring while its interval straddles the numeric bound of a "
        "registered prediction that rests on it (" + "; ".join(held_open) + "), since that prediction "
        "still depends on it."
        if held_open
        else ""
    )
    if rule.planned:
        return _planned_sentence(rule, band, shared) + bounds
    return (
        f"Stopping rule: sequential, registered with the predictions. After each block pair from pair "
        f"{rule.min_pairs} on, the {fmt.percent(rule.confidence, 4)} interval{shared} "
        f"(a {fmt.text(rule.method)}; mixture spread {fmt.sig(rule.rho)} on the standardised effect) "
        "is judged against the "
        f"practical band {band}: wholly below it is faster, wholly above slower, wholly inside no "
        f"meaningful change, and the shape's blocks stop there; at {rule.max_pairs} pairs they stop "
        "inconclusive. The interval holds at every look at once, " + _HELD + bounds
    )


def held_open(plan: Plan) -> list[str]:
    """Each comparison that registered predictions' bounds keep measuring, with the bounds:
    "`normalize` shapes at 0.7", "`decode_step` request time at 0.9" (`rule_sentence`)."""
    bounds = [(f"{fmt.code(op.name)} shapes", op.stop_edges) for op in plan.operations]
    if plan.application is not None:
        bounds.append((f"{fmt.code(plan.application.name)} request time", plan.application.stop_edges))
    return [
        f"{subject} at {' and '.join(_edge(edge) for edge in edges)}" for subject, edges in bounds if edges
    ]


def _planned_sentence(rule: StoppingRule, band: str, shared: str) -> str:
    """`rule_sentence` for the group-sequential design: the planned looks and their boundaries."""
    looks = ", ".join(
        f"{pairs} ({fmt.sig(z, 3)})" for pairs, z in zip(rule.looks, rule.boundaries, strict=True)
    )
    return (
        f"Stopping rule: group-sequential, registered with the predictions: {len(rule.looks)} looks "
        f"planned at block pairs {looks} (each look's z boundary in brackets, O'Brien-Fleming, "
        f"computed for the cap of {rule.max_pairs} pairs before the run). At each look the "
        f"{fmt.percent(rule.confidence, 4)} repeated confidence interval{shared} "
        f"(a {fmt.text(rule.method)}) is judged against the practical band {band}: wholly below it is "
        "faster, wholly above slower, wholly inside no meaningful change, and the shape's blocks stop "
        "there; at the last look they stop inconclusive. Between looks nothing is decided. The "
        "intervals hold at every planned look at once, " + _HELD
    )


def stop_lines(op: OperationResult) -> list[str]:
    """One line per shape timed under the sequential rule: when and why it stopped."""
    return [
        f"{fmt.text(shape.label)}{invalid_note(shape)}: {describe_stop(shape.stop, shape.stop_agrees)}"
        for shape in op.shapes
        if shape.stop
    ]


def invalid_note(shape: ShapeResult) -> str:
    """` (invalid: left out of every conclusion)` after a shape whose result is excluded, else "".

    The rule stopped an invalid shape's blocks as it stops any other's, and its verdict
    was listed among the stops on the same page that excluded the shape: "262144 after
    6 pairs ...: slower" beside "Invalid results excluded ...: 262144".
    """
    return " (invalid: left out of every conclusion)" if shape.invalid else ""


def describe_stop(stop: StopRecord, agrees: bool | None, needed: int | None = None) -> str:
    """When and why one comparison stopped, its interval, and whether the replay reached the same stop;
    `needed`, for a stop at the cap, the pairs that would have decided it at the spread measured."""
    interval = fmt.interval(stop.low, stop.high)
    if stop.reason == DECIDED:
        said = f"decided **{stop.verdict}** after {stop.pairs} pairs, interval {interval}{_clear(stop)}"
    elif stop.reason == CAP and stop.verdict != "inconclusive":
        said = (
            f"reached the cap of {stop.pairs} pairs, interval {interval}: **{stop.verdict}** against "
            f"the band, still across {_bounds(stop)}"
        )
        if needed is not None:
            said += f"; at the spread measured about {needed} pairs would have cleared it"
    elif stop.reason == CAP:
        said = f"reached the cap of {stop.pairs} pairs **inconclusive**, interval {interval}"
        if needed is not None:
            said += f"; at the spread measured about {needed} pairs would have decided it"
    else:
        said = f"measuring ended after {stop.pairs} pairs before the rule stopped it, interval {interval}"
    if agrees is False:
        said += " (**the evaluation's replay of the rule does not reach the run's recorded stop**)"
    return said


@attrs.frozen
class Stopped:
    """One comparison's stop as the first page lists it: what was compared, and the stop."""

    subject: str
    """Already Markdown: `normalize` 2048x4096, or `decode_step` request time."""
    stop: StopRecord
    agrees: bool | None
    needed: int | None = None
    """For a stop at the cap, the pairs that would have decided it at the spread measured."""


_WHERE = {"faster": "below", "slower": "above", "no meaningful change": "inside"}


def stops_sentence(rule: StoppingRule, stopped: Sequence[Stopped]) -> str | None:
    """When and why every sequentially stopped comparison ended, in one sentence; None without any."""
    if not stopped:
        return None
    looks = (
        f"looks planned at pairs {', '.join(str(t) for t in rule.looks)}"
        if rule.planned
        else f"looks from pair {rule.min_pairs}, cap {rule.max_pairs} pairs"
    )
    return (
        f"Measuring stopped by the registered sequential rule ({looks}): "
        + "; ".join(_brief(s) for s in stopped)
        + "."
    )


def _edge(bound: float) -> str:
    """A prediction's bound as the study states it: `0.7`, not `0.700`."""
    return f"{bound:.4g}"


def _bounds(stop: StopRecord) -> str:
    """`the prediction bound 0.7`, or `the prediction bounds 0.5 and 0.7`, that the interval straddles."""
    edges = [_edge(edge) for edge in stop.rule.straddled(stop.low, stop.high)]
    return f"the prediction bound{'s' if len(edges) > 1 else ''} {' and '.join(edges)}"


def _clear(stop: StopRecord) -> str:
    """For a decided stop whose rule had prediction bounds: that the interval cleared them."""
    if not stop.rule.edges:
        return ""
    edges = [_edge(edge) for edge in stop.rule.edges]
    return f", clear of the prediction bound{'s' if len(edges) > 1 else ''} {' and '.join(edges)}"


def _brief(stopped: Stopped) -> str:
    """One comparison's stop, short: the pairs, why, and the verdict it carries."""
    stop = stopped.stop
    interval = fmt.interval(stop.low, stop.high)
    if stop.reason == DECIDED:
        said = (
            f"after {stop.pairs} pairs, its interval {interval} wholly "
            f"{_WHERE.get(stop.verdict, 'beyond')} the band{_clear(stop)}: **{stop.verdict}**"
        )
    elif stop.reason == CAP and stop.verdict != "inconclusive":
        said = (
            f"at the cap, {stop.pairs} pairs, its interval {interval} wholly "
            f"{_WHERE.get(stop.verdict, 'beyond')} the band but across {_bounds(stop)}: "
            f"**{stop.verdict}**"
        )
        if stopped.needed is not None:
            said += f" (about {stopped.needed} pairs would have cleared it)"
    elif stop.reason == CAP:
        said = (
            f"at the cap, {stop.pairs} pairs, its interval {interval} across an edge of the band: "
            "**inconclusive**"
        )
        if stopped.needed is not None:
            said += f" (about {stopped.needed} pairs would have decided it)"
    else:
        said = f"after {stop.pairs} pairs, before the rule decided (an arm stopped): **{stop.verdict}**"
    if stopped.agrees is False:
        said += " (**the evaluation's replay does not reach this stop**)"
    return f"{stopped.subject} {said}"
