"""Did the time follow the mechanism? The time ratio set against the mechanism quantity's ratio.

A change claims a mechanism (fewer bytes, fewer launches); the quantity's ratio
q (change / baseline) says which way, and how far, the time should move if
the quantity is what limits it. Against the time ratio's interval and verdict:

* realised: the time moved beyond noise the way q points, with the fraction
  of q's change realised, (1 - t) / (1 - q): a 5 % speedup from bytes at 0.2
  realises 6 % of what the bytes allow, which is not "explained";
* contradicted: the time moved beyond noise against q (slower at 1.295 while
  modelled bytes fell to 0.40);
* not realised: the time is inconclusive (an interval such as [0.164, 6.889]
  is no evidence either way) or shows no meaningful change (another limit
  holds it); the time verdict says which;
* unexplained: q did not move (inside the practical band) but the time did;
* no change: neither moved.

Over shapes, the quantity combines like time, as the ratio of weighted totals;
each shape gives its counted value where it has one, else the modelled one,
and a mix of the two is labelled "mixed".
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import attrs

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.verdicts import Verdict
from perfdsl.stats.verdict import classify

Label = Literal["counted", "modelled", "mixed"]
Status = Literal["realised", "not realised", "contradicted", "unexplained", "no change"]


@attrs.frozen
class ShapeQuantity:
    """One shape's mechanism quantity for both arms, its workload weight and its source."""

    weight: float
    baseline: float
    change: float
    label: Literal["counted", "modelled"]


@attrs.frozen
class QuantityRatio:
    """The mechanism quantity's ratio of weighted totals over shapes, and where it comes from."""

    ratio: float
    label: Label


def combine_quantity(shapes: Sequence[ShapeQuantity]) -> QuantityRatio:
    """sum w q_change / sum w q_baseline over shapes, labelled counted, modelled or mixed."""
    if not shapes:
        raise ValueError("no shapes to combine")
    if any(s.weight < 0 or s.baseline < 0 or s.change < 0 for s in shapes):
        raise ValueError("weights and quantities must be non-negative")
    base = sum(s.weight * s.baseline for s in shapes)
    if not base > 0:
        raise ValueError("the weighted baseline quantity is zero: its ratio is undefined")
    labels = {s.label for s in shapes}
    label: Label = "mixed" if len(labels) > 1 else next(iter(labels))
    return QuantityRatio(sum(s.weight * s.change for s in shapes) / base, label)


@attrs.frozen
class MechanismReconciliation:
    """The time ratio against the mechanism quantity's ratio."""

    status: Status
    quantity: QuantityRatio
    time: Estimate
    time_verdict: Verdict
    fraction_realised: Estimate | None
    """(1 - t) / (1 - q) with its interval from the time's; None when q did not move."""
    message: str


def reconcile_mechanism(time: Estimate, quantity: QuantityRatio, theta: float) -> MechanismReconciliation:
    """Classify the time ratio (with its interval) against q, at the practical threshold theta."""
    q = quantity.ratio
    verdict = classify(time.low, time.high, theta)
    moved = classify(q, q, theta)
    what = (
        f"{quantity.label} quantity ratio {q:.4g}, "
        f"time ratio {time.value:.4g} [{time.low:.4g}, {time.high:.4g}]"
    )
    if moved == "no meaningful change":
        if verdict in ("faster", "slower"):
            message = f"the time moved while the quantity did not ({what})"
            return MechanismReconciliation("unexplained", quantity, time, verdict, None, message)
        message = f"neither the time nor the quantity moved ({what})"
        return MechanismReconciliation("no change", quantity, time, verdict, None, message)
    # (1 - t) / (1 - q) falls as t rises when q < 1 and rises when q > 1.
    ends = sorted(((1.0 - time.high) / (1.0 - q), (1.0 - time.low) / (1.0 - q)))
    fraction = Estimate((1.0 - time.value) / (1.0 - q), ends[0], ends[1], time.level)
    status: Status
    if verdict == moved:
        status = "realised"
        shown = f"{fraction.value:.0%} [{fraction.low:.0%}, {fraction.high:.0%}]"
        message = f"realised {shown} of the change the quantity allows ({what})"
    elif verdict in ("faster", "slower"):
        status = "contradicted"
        message = f"the time moved against the mechanism ({what})"
    else:
        status = "not realised"
        why = "inconclusive: no evidence either way" if verdict == "inconclusive" else "unchanged"
        message = f"the time is {why} ({what})"
    return MechanismReconciliation(status, quantity, time, verdict, fraction, message)
