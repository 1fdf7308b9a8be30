"""The report's account of the stopping rule: what it was, and when and why each comparison stopped.

Under `stop sequential` a shape's blocks ended when the rule decided, at the
cap, or when an arm failed; the reader needs the rule, the stopping time, the
reason and the interval the verdict rests on, and for an inconclusive stop
how many pairs the spread measured would have needed. Under the fixed design
there is one sentence: the count was stated beforehand.
"""

from __future__ import annotations

import math

from perfdsl.bundle.evaluation.kernels import OperationResult
from perfdsl.bundle.plan import TimingPlan
from perfdsl.bundle.stopping import CAP, DECIDED, StopRecord
from perfdsl.report import formatting as fmt
from perfdsl.stats.sequential.boundary import pairs_to_fit


def rule_sentence(timing: TimingPlan) -> str:
    """How the kernel comparisons decided when to stop, in one paragraph."""
    rule = timing.stopping
    if rule is None:
        return (
            f"Stopping rule: the fixed design, {timing.blocks} blocks per arm stated before the run; "
            "the intervals are the paired bootstrap's at that count."
        )
    band = fmt.interval(1.0 / (1.0 + rule.threshold), 1.0 + rule.threshold)
    return (
        f"Stopping rule: sequential, registered with the predictions. After each block pair from pair "
        f"{rule.min_pairs} on, the {fmt.percent(rule.confidence, 2)} interval (a {fmt.text(rule.method)}; "
        f"mixture spread {fmt.sig(rule.rho)} on the standardised effect) is judged against the "
        f"practical band {band}: wholly below it is faster, wholly above slower, wholly inside no "
        f"meaningful change, and the shape's blocks stop there; at {rule.max_pairs} pairs they stop "
        "inconclusive. The interval holds at every look at once, so the stated error rate holds however "
        "early a comparison stopped; every measured block is kept, and the evaluation replays the rule "
        "from the samples. The weighted total over shapes is the paired bootstrap over the pairs "
        "measured, not a sequential interval."
    )


def stop_lines(op: OperationResult) -> list[str]:
    """One line per shape timed under the sequential rule: when and why it stopped."""
    return [
        f"{fmt.text(shape.label)}: {describe_stop(shape.stop, shape.stop_agrees)}"
        for shape in op.shapes
        if shape.stop
    ]


def describe_stop(stop: StopRecord, agrees: bool | None) -> str:
    """When and why one comparison stopped, its interval, and whether the replay reached the same stop."""
    interval = fmt.interval(stop.low, stop.high)
    if stop.reason == DECIDED:
        said = f"decided **{stop.verdict}** after {stop.pairs} pairs, interval {interval}"
    elif stop.reason == CAP:
        said = f"reached the cap of {stop.pairs} pairs **inconclusive**, interval {interval}"
        needed = _needed(stop)
        if needed is not None:
            said += f"; at the spread measured about {needed} pairs would have decided it"
    else:
        said = f"measuring ended after {stop.pairs} pairs before the rule stopped it, interval {interval}"
    if agrees is False:
        said += " (**the evaluation's replay of the rule does not reach the run's recorded stop**)"
    return said


def _needed(stop: StopRecord) -> int | None:
    """Pairs whose interval, at the measured spread and ratio, would lie wholly inside or beyond the band."""
    band, distance = math.log1p(stop.rule.threshold), abs(math.log(stop.ratio))
    room = abs(band - distance)
    if not math.isfinite(stop.sd_log) or stop.sd_log <= 0 or room == 0:
        return None
    return pairs_to_fit(stop.sd_log, room, stop.rule.confidence)
