"""evaluation.json's mechanism evidence: quantities, bandwidths against roofs, the explanation."""

from __future__ import annotations

from typing import Literal

import attrs

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.plain import field

Label = Literal["modelled", "counted"]
Explained = Literal[
    "realised",
    "not bound",
    "not realised",
    "contradicted",
    "unexplained",
    "no change",
    "not evidence",
    "invalid",
]


@attrs.frozen
class MechanismQuantity:
    """One mechanism quantity for both arms, and where the numbers come from."""

    name: str
    baseline: float
    change: float
    ratio: float | None
    """change / baseline; None when the baseline is zero."""
    label: Label


@attrs.frozen
class Roof:
    """One measured roof at one shape."""

    arm: str
    bytes_per_s: float
    spread: float
    """How much slower its second-fastest block ran than its fastest, relative: the roof's own
    measured spread at its best, within which a kernel above it is not distinguishable."""
    regime: str | None
    """"dram" or "cache", or None where the run did not record it."""
    median_bytes_per_s: float
    """Bytes over the median block: below the roof by whatever slowed the roof's blocks."""


@attrs.frozen
class MixRoof:
    """The roof for one kernel's read/write mix, and how it was formed."""

    bytes_per_s: float
    spread: float
    regime: str | None
    basis: str
    """In words: which measured roofs, in which shares."""


@attrs.frozen
class Bandwidth:
    """An arm's achieved bandwidth from modelled bytes and its median block time."""

    arm: str
    bytes: float
    median_ns: float
    bytes_per_s: float
    roof_fraction: float | None
    """Of the roof for this arm's mix, in its regime; None with `roof_missing`."""
    invalid: str | None = None
    """Set when the measurement shows this figure impossible (above the measured roof): it is then
    the byte model that is wrong, and the figure is no bandwidth."""
    read_share: float | None = None
    read_share_source: str = ""
    regime: str | None = None
    """"dram" or "cache": where this arm's rotated working set ran."""
    roof: MixRoof | None = None
    """The roof for this arm's mix; None with `roof_missing`."""
    roof_missing: str | None = None


@attrs.frozen
class Explanation:
    """Whether the time change is what the mechanism quantity's change explains."""

    status: Explained
    quantity: str | None
    quantity_ratio: float | None
    label: str | None
    """Where the quantity comes from: "counted" or "modelled"."""
    time_ratio: float | None
    fraction_realised: Estimate | None
    """(1 - t) / (1 - q): how much of the change the quantity allows the time realised."""
    flagged: bool
    """The time moved against the mechanism, or moved while the quantity did not."""
    message: str


@attrs.frozen
class ShapeMechanism:
    """Mechanism evidence for one shape."""

    quantities: tuple[MechanismQuantity, ...]
    counters_missing: str | None
    """Why this shape has no counted quantities (not cuda, not the counted shape, no ncu)."""
    roof_bytes_per_s: float | None
    """The copy roof at this shape."""
    roof_missing: str | None
    bandwidth: tuple[Bandwidth, ...]
    explanation: Explanation
    roofs: tuple[Roof, ...] = ()
    """Every roof measured at this shape (read, write, copy), with its spread and regime."""


@attrs.frozen
class KernelCounts:
    """Counts read from one compiled kernel of an arm (labelled "static")."""

    kernel: str
    kind: Literal["cuda", "cpu"]
    counts: dict[str, int]
    missing: str | None = field(default=None, absent=None, when=lambda k: k.missing is not None)
    """Why there are no counts (evaluation/15): the archived code is not what the measured calls ran."""
