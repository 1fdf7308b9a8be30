"""evaluation.json's value: what the end-to-end effect is worth, and the capacity change."""

from __future__ import annotations

import attrs

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.load import CapacityInterval


@attrs.frozen
class Value:
    """Value per period from the end-to-end effect, or why there is none."""

    established: bool
    reason: str | None
    """Why the value is not established; None when it is."""
    saved_time: Estimate | None
    """Seconds saved per unit of work (negative: a loss), after the cap."""
    value: Estimate | None
    unit: str
    capped: bool
    """The Amdahl cap at the declared production share lowered the saving."""
    explained: float | None = None
    """The share of the saving the named operation explains, f (1 - r) / (1 - D), when the rest of
    the request was measured to move; None when the operation explains all of it."""
    cross_effect: float | None = None
    """The share of the saving that is the change's effect on the rest of the request,
    (1 - f) (1 - rho) / (1 - D): not the stated mechanism, and not scaled by the share."""


@attrs.frozen
class ValueResult:
    """What the change is worth, from the end-to-end effect, and the capacity change."""

    basis: str
    frequency: float
    frequency_unit: str
    scale: float
    scale_unit: str
    per_unit: Value
    fleet: Value
    share_basis: str
    """Which share of time the value extrapolates from, and how it stands against the measured f."""
    capacity: CapacityInterval | None
    capacity_missing: str | None
