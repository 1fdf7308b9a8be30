"""An operation's time ratio over its shapes: the ratio of weighted total times of the valid shapes.

A shape whose comparison is invalid (an error-severity quality finding, or the
operation failing correctness) is left out of the total and named with its
reason, so the report can say which results were excluded and why. The
statistic is `stats.combine`'s: sum w t_change / sum w t_base over the
shapes, with the stratified bootstrap of the paired block medians, never a
weighted mean of ratios (which can call a workload faster while its total time
rises). Under a sequential rule the interval, verdict and p-value are instead
those that hold whenever every shape's sequential interval does
(`stats.sequential.total`): the bootstrap over pairs that stopped when they
looked decided is not valid.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from perfdsl.bundle.evaluation.kernels import Combined, Comparison, Exclusion
from perfdsl.bundle.stopping import StopRecord
from perfdsl.stats.combine import combine_shapes
from perfdsl.stats.paired import Pairs
from perfdsl.stats.sequential.power import detectable
from perfdsl.stats.sequential.total import total_interval, total_p_value, total_ratio
from perfdsl.stats.verdict import classify


@attrs.frozen
class ShapeInput:
    """One shape as the combination sees it."""

    label: str
    weight: float
    comparison: Comparison | None
    missing: str | None
    invalid: str | None
    pairs: Pairs | None = None
    """The block pairs the shape's paired interval rests on; None when it has none."""
    stop: StopRecord | None = None
    """The sequential rule's stop of the shape, replayed from the samples; None under the fixed design."""


def combine(shapes: Sequence[ShapeInput], level: float) -> tuple[Combined | None, str | None]:
    """The total-time ratio over the valid shapes, or why there is none."""
    if not shapes:
        return None, "no shapes were planned"
    lacking = [s.label for s in shapes if s.comparison is None]
    if lacking:
        return None, f"shape {', '.join(lacking)} has no timing evidence"
    excluded = tuple(Exclusion(s.label, s.invalid) for s in shapes if s.invalid)
    valid = [s for s in shapes if not s.invalid]
    if not valid:
        return None, f"every shape is invalid ({', '.join(e.shape for e in excluded)})"
    few = [
        f"shape {s.label}: {s.comparison.interval_missing}"
        for s in valid
        if s.comparison is not None and s.comparison.interval_missing
    ]
    if few:
        return None, "; ".join(few)
    unpaired = [s.label for s in valid if s.pairs is None]
    if unpaired:
        return None, (
            f"shape {', '.join(unpaired)} has too few adjacent block pairs to combine by total time"
        )
    combined = combine_shapes(
        {s.label: s.pairs for s in valid if s.pairs is not None},
        {s.label: s.weight for s in valid},
        level=level,
        theta=max(s.comparison.theta for s in valid if s.comparison is not None),
        regressions=tuple(s.label for s in valid if s.comparison and s.comparison.verdict == "slower"),
        excluded=excluded,
    )
    stops = [s.stop for s in valid if s.stop is not None]
    if len(stops) < len(valid):  # the fixed design
        return combined, None
    return _sequential_total(combined, stops), None


def _sequential_total(combined: Combined, stops: list[StopRecord]) -> Combined:
    """The total with the ratio and interval every shape's stop supports (`stats.sequential.total`).

    The ratio is the same mix of the shapes' stopped ratios as the interval is of their
    ends, so it lies inside it. The bootstrap's ratio of totals, kept before, weighs
    unwinsorized pairs: a total of 0.76 [0.65, 0.77] stood beside shapes at 0.74 and 0.71.
    """
    shares = [share.time_share for share in combined.shares]
    low, high = total_interval(stops, shares)
    return attrs.evolve(
        combined,
        level=min(s.rule.confidence for s in stops),  # the level each shape's interval holds
        mde=detectable([(s.rule, s.sd_log, v) for s, v in zip(stops, shares, strict=True)]),
        ratio=total_ratio(stops, shares),
        ci_low=low,
        ci_high=high,
        verdict=classify(low, high, combined.theta),
        p_value=total_p_value(stops, shares),
        sequential=True,
    )
