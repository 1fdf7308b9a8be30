"""The stopping rules: of kernel timing, a fixed count of blocks or sequential until decided;
of each load probe (`probe` in `evidence end_to_end`), the same two words.

`stop sequential` measures block pairs from `min_blocks` until the interval is
decided or `max_blocks` is reached; `stop fixed` (or no `stop`) measures
exactly `blocks`. Each rule's settings belong to it alone: a study mixing them
would leave the reader to guess which one ran. A sequential cap must leave
the rule a chance to decide: at least the pairs whose interval fits inside the
practical band when one pair's noise is as large as the threshold itself.
`looks K` makes the sequential rule the group-sequential design: K looks at
planned pair counts up to a cap the study must size itself (a planned
maximum is what the design's boundaries are computed for).
"""

from __future__ import annotations

import math

from perfdsl.bundle.stopping import FIXED, SEQUENTIAL, STOPS
from perfdsl.check.context import Context
from perfdsl.check.names import choice
from perfdsl.nodes import Num, TimingEvidence
from perfdsl.plan_rules import (
    DEFAULT_CONFIDENCE,
    DEFAULT_SEQUENTIAL,
    DEFAULT_THRESHOLD,
    MAX_LOOKS,
    MIN_THRESHOLD,
)


def check_stopping(ctx: Context) -> None:
    timing = ctx.study.timing
    if timing is None or all(
        value is None for value in (timing.stop, timing.min_blocks, timing.max_blocks, timing.looks)
    ):
        return
    if ctx.study.imported:
        ctx.report(
            "PD413",
            "an imported study cannot choose when its harness stopped",
            (timing.stop or timing.min_blocks or timing.max_blocks or timing.looks).span,
            label="the imported files hold what the other harness measured",
            help="remove the stopping settings: the imported samples are compared as they are",
        )
        return
    if timing.stop is not None and not choice(ctx, timing.stop, STOPS, "stopping rule"):
        return
    if timing.stop is not None and timing.stop.id == SEQUENTIAL:
        _sequential(ctx, timing)
    else:
        _fixed(ctx, timing)


def check_load_probe(ctx: Context) -> None:
    """`probe sequential` or `probe fixed` in `evidence end_to_end`, and only where probes run.

    The word picks how each load probe's SLO question is decided (`bundle.plan.LoadPlan.probe`);
    an imported study's requests were timed by another harness, with no probe to decide.
    """
    evidence = ctx.study.end_to_end
    if evidence is None or evidence.probe is None:
        return
    if ctx.study.imported:
        ctx.report(
            "PD413",
            "an imported study cannot choose how its harness decided a load probe",
            evidence.probe.span,
            label="the imported files hold what the other harness measured",
            help="remove `probe`: the imported request times are judged as they are",
        )
        return
    choice(ctx, evidence.probe, STOPS, "load probe rule")


def _fixed(ctx: Context, timing: TimingEvidence) -> None:
    for count in (timing.min_blocks, timing.max_blocks, timing.looks):
        if count is not None:
            ctx.report(
                "PD413",
                "`min_blocks`, `max_blocks` and `looks` belong to the sequential rule",
                count.span,
                label=f"the {FIXED} design measures exactly `blocks`",
                help="write `stop sequential` to stop when the verdict is decided, or `blocks N` alone",
            )


def _sequential(ctx: Context, timing: TimingEvidence) -> None:
    if timing.blocks is not None:
        ctx.report(
            "PD413",
            "`blocks` is the fixed design's count, not the sequential rule's",
            timing.blocks.span,
            label="the sequential rule measures until decided",
            help=f"write `max_blocks {timing.blocks.value:g}` for its cap, or `stop fixed`",
        )
    low = _value(timing.min_blocks, DEFAULT_SEQUENTIAL["min_blocks"])
    high = _value(timing.max_blocks, DEFAULT_SEQUENTIAL["max_blocks"])
    if low > high:
        ctx.report(
            "PD413",
            f"the sequential rule's first look ({low:g} blocks) is after its cap ({high:g})",
            (timing.min_blocks or timing.max_blocks or timing.stop).span,
            label="no look could stop it",
            help=f"make `min_blocks` at most `max_blocks`, like `min_blocks {min(6, high):g}`",
        )
        return
    if timing.looks is not None:
        _planned(ctx, timing, high)
        return
    _cap(ctx, timing, high)


def _planned(ctx: Context, timing: TimingEvidence, high: float) -> None:
    """`looks K`: between one and MAX_LOOKS looks, no more than the cap's pairs, and a cap stated."""
    looks = timing.looks.value
    if not 1 <= looks <= min(MAX_LOOKS, high):
        ctx.report(
            "PD413",
            f"{looks:g} planned looks cannot be spread over a cap of {high:g} block pairs",
            timing.looks.span,
            label=f"between 1 and {min(MAX_LOOKS, int(high))} looks",
            help=f"write `looks {min(5, int(high))}`, or leave `looks` out to look after every pair",
        )
    elif timing.max_blocks is None:
        ctx.report(
            "PD413",
            "planned looks need the cap they were planned for",
            timing.looks.span,
            label="the boundaries are computed for a stated maximum of block pairs",
            help="write `max_blocks N`, N about 1.03x the pairs a fixed design would need; "
            "or leave `looks` out, and the rule looks after every pair up to its default cap",
        )


def _cap(ctx: Context, timing: TimingEvidence, high: float) -> None:
    """A cap below the pairs whose interval fits the band at a pair noise as large as the threshold."""
    from perfdsl.stats.sequential.boundary import pairs_to_fit

    confidence = _fraction(timing.confidence, DEFAULT_CONFIDENCE)
    threshold = max(_fraction(timing.threshold, DEFAULT_THRESHOLD), MIN_THRESHOLD)
    if not (0.0 < confidence < 1.0 and threshold < 1.0):
        return  # PD409 says what is wrong with them
    band = math.log1p(threshold)
    needed = pairs_to_fit(band, band, confidence)
    if needed is not None and high < needed:
        ctx.report(
            "PD414",
            f'a sequential cap of {high:g} blocks cannot conclude "no meaningful change"',
            (timing.max_blocks or timing.stop).span,
            label=f"{needed} pairs are needed even when one pair's noise is "
            f"as small as the {100 * threshold:g}% threshold",
            help=f"raise the cap to at least `max_blocks {needed}`",
        )


def _value(count: Num | None, default: int) -> float:
    return count.value if count is not None else float(default)


def _fraction(quantity: Num | None, default: float) -> float:
    return quantity.quantity.base if quantity is not None else default
