"""What a run could detect, set beside each time prediction: the MDE and the run that would see more.

The MDE is the smallest effect the run calls faster or slower with 80 % power:
past the practical threshold by the interval's reach, the verdict the report
prints, not merely clear of 1 (`stats.power`). A predicted effect smaller than
that is one this run would usually leave inconclusive if it were true, and
the reader needs that next to the verdict, with the size of the run that would
call it: block pairs per shape for an operation, requests per arm for an
application. Whether the prediction itself can be confirmed depends on how far
the truth lies from its bound, not on the MDE: `ratio <= 0.99` is confirmed
easily when the truth is 0.55.
"""

from __future__ import annotations

import math

import attrs

from perfdsl.bundle.evaluation.end_to_end import EndToEnd
from perfdsl.bundle.evaluation.kernels import OperationResult
from perfdsl.stats.power import pairs_needed
from perfdsl.stats.sequential.power import Part, cap_needed


@attrs.frozen
class Detection:
    """The smallest relative change a comparison detects, and how to scale the run for a smaller one."""

    mde: float
    spread_log: float
    """The spread of one pair (of rounds over shapes, for an operation) on the log scale."""
    level: float
    per_pair: int
    """What one pair costs in `unit`: 1 block pair, or the requests in a block."""
    unit: str
    theta: float
    """The practical threshold the verdict must clear."""
    parts: tuple[Part, ...] = ()
    """Under the sequential rule, each comparison's rule, spread and share: the cap, not the
    pairs measured, sets what the run reaches (`stats.sequential.power`); empty for the fixed design."""


def detection(
    subject: str, quantity: str, ops: dict[str, OperationResult], end_to_end: EndToEnd | None
) -> Detection | None:
    """What the comparison a time prediction is judged on could detect; None when there is none."""
    if quantity != "time":
        return None
    if subject in ops:
        op = ops[subject]
        c = op.combined
        if c is None:
            return None
        stops = {s.label: s.stop for s in op.shapes}
        shared = [(stops.get(share.shape), share.time_share) for share in c.shares]
        parts = tuple((stop.rule, stop.sd_log, v) for stop, v in shared if stop is not None)
        sequential = c.sequential and len(parts) == len(shared)
        return Detection(
            c.mde, c.spread_log, c.level, 1, "block pairs per shape", c.theta, parts if sequential else ()
        )
    comparison = end_to_end.comparison if end_to_end else None
    if end_to_end is None or comparison is None or comparison.analysis != "paired":
        return None
    stop = end_to_end.stop
    return Detection(
        comparison.mde,
        comparison.sigma_log,
        comparison.level,
        end_to_end.requests_per_block or 1,
        "requests per arm",
        comparison.theta,
        ((stop.rule, stop.sd_log, 1.0),) if stop is not None else (),
    )


def detectable_ratio(found: Detection, bound: float) -> float:
    """The MDE as a time ratio on the side of 1 the bound is on (1 / (1 + MDE) for a speed-up)."""
    return 1.0 / (1.0 + found.mde) if bound < 1.0 else 1.0 + found.mde


def too_small(found: Detection, bound: float) -> str | None:
    """Why an effect of `bound` (a time ratio) is below what the run detects, or None when it is not."""
    effect = math.expm1(abs(math.log(bound))) if bound > 0 else math.inf
    if effect == 0.0 or effect >= found.mde:
        return None
    if found.parts:
        cap = cap_needed(found.parts, effect)
        more = (
            f"a cap of about {cap * found.per_pair} {found.unit} would"
            if cap is not None
            else "no practical cap would"
        )
    else:
        needed = pairs_needed(found.spread_log, effect, found.level, threshold=found.theta)
        more = (
            f"about {needed * found.per_pair} {found.unit} would"
            if needed is not None
            else "no practical run would"
        )
    # "Detect" is a rate, not a certainty: a run can still decide a smaller effect, so the sentence
    # reads right beside "confirmed" as well as beside "inconclusive".
    return (
        f"the predicted effect {effect:.2%} is smaller than this run can detect ({found.mde:.2%}, "
        f"the effect it calls in 80% of runs); {more} detect it as reliably"
    )
