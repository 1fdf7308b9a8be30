"""evaluation.json's end-to-end evidence: the application's comparison, f, and Amdahl's check."""

from __future__ import annotations

from typing import Literal

import attrs

from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.kernels import Comparison, Finding
from perfdsl.bundle.stopping import StopRecord

Status = Literal[
    "consistent",
    "cross_effect",
    "shortfall",
    "accounting_broken",
    "beyond_bound",
    "opposite_sign",
    "not_established",
]
CONTRADICTIONS = ("accounting_broken", "beyond_bound", "opposite_sign")
"""Reconciliation outcomes under which the measured numbers do not add up, so no claim built on
the end-to-end effect (value, capacity attribution, the decision's support) may rest on it:
the timed pass disagrees with the share pass's own decomposition (`accounting_broken`), the
operation and the application moved in opposite directions with no measured rest to explain
it (`opposite_sign`), or the application beat the bound while the rest of the request was not
measured (`beyond_bound`)."""

BandPosition = Literal["beyond", "within", "across"]
"""A measured interval against the bound's consistent band: wholly outside it, wholly inside it,
or across an edge (neither shown)."""

RestState = Literal["unchanged", "faster", "slower", "undetermined", "unmeasured"]
"""The rest of the request (request time less the operation's time inside it), against the
practical band [1 / (1 + theta), 1 + theta]: wholly inside, wholly below, wholly above,
straddling an edge, or not measured (no share pass in both arms)."""


def straddle_note(measured: Estimate, band_low: float, band_high: float) -> str:
    """What a consistent interval that crosses an edge of the band leaves open; "" inside it.

    Consistent means "not contradicted", not "confirmed": an interval that reaches
    past the band's faster edge still allows an effect the change alone cannot
    make, and one past its slower edge a bottleneck, so a reader is told which.
    """
    if measured.low < band_low:
        return (
            f", at the edge: part of its interval is faster than the bound allows (band from {band_low:.4g})"
        )
    if measured.high > band_high:
        return (
            f", at the edge: part of its interval is slower than the band allows (band to {band_high:.4g}): "
            "a bottleneck may absorb part of the gain"
        )
    return ""


@attrs.frozen
class Decomposition:
    """The share pass's requests split into the operation and the rest, per arm (`stats.decomposition`).

    Every ratio is change / baseline of mean times per request, with a t interval
    over the share pass's paired rounds; `request_ratio` is (1 - f) rest_ratio + f op_ratio
    exactly.
    """

    f: Estimate
    op_ratio: Estimate
    rest_ratio: Estimate
    request_ratio: Estimate
    baseline_rest_ns: float
    """The baseline's mean rest per request."""
    change_rest_ns: float
    rounds: int
    """Paired share rounds the intervals resample."""
    rest_faster_rounds: int
    """Rounds in which the change's mean rest was below the baseline's."""
    requests: tuple[int, int]
    """Instrumented requests per arm (baseline, change)."""


@attrs.frozen
class Reconciliation:
    """The application's measured time ratio set against Amdahl's bound, all as time ratios."""

    f: Estimate
    op_ratio: Estimate
    bound: Estimate
    """B = (1 - f) + f r and its corner range."""
    band_low: float
    """B's range low end divided by 1 + theta: below it the application is beyond the bound."""
    band_high: float
    """The worst consistent ratio: B's high end, plus the shortfall allowance (or times 1 + theta)."""
    measured: Estimate
    theta: float
    status: Status
    signs_disagree: bool
    """The operation and the application moved in opposite directions, each beyond noise."""
    message: str
    rest: RestState = "unmeasured"
    """The rest of the request against the threshold (`Amdahl.decomposition` holds its numbers)."""
    agrees: bool | None = None
    """The timed pass's ratio meets the share pass's own request ratio D within the practical
    threshold; None without a decomposition."""

    @property
    def cross_effect_loss(self) -> bool:
        """The change made the rest of the request slower: a cost outside the operation."""
        return self.status == "cross_effect" and self.rest == "slower"

    @property
    def band_position(self) -> BandPosition:
        """Where the measured interval lies against the consistent band: page 1 and the Amdahl
        table both say it from here (a cross-effect whose interval crossed the band's edge was
        "within" the bound on page 1 and "beyond" it in the table)."""
        if self.measured.high < self.band_low or self.measured.low > self.band_high:
            return "beyond"
        if self.band_low <= self.measured.low and self.measured.high <= self.band_high:
            return "within"
        return "across"


@attrs.frozen
class ShareCheck:
    """A declared share against the measured f."""

    declared: float
    measured: Estimate
    compatible: bool
    message: str


@attrs.frozen
class Share:
    """f for one arm, from the instrumented requests."""

    arm: str
    f: float
    requests: int
    op_ns: int
    total_ns: int


@attrs.frozen
class Amdahl:
    """Amdahl's bound from measured f and r, and how the end-to-end result sits against it."""

    f: Estimate
    """The operation's share of the baseline's request time, with its interval."""
    op_ratio: Estimate
    """r, the operation's time ratio at the application's operating point (s = 1 / r)."""
    s: float
    s_ci: tuple[float, float]
    s_source: str
    """Where r comes from: the in-app operation times of both arms, or what it was borrowed from."""
    s_fallback: str | None
    """Set when r was not measured inside the application: the finding that says so."""
    bound: float
    """Amdahl's speedup bound 1 / B."""
    bound_time_ratio: float
    """B = (1 - f) + f r: the smallest application time ratio the change can produce."""
    bound_range: tuple[float, float]
    """B over the f and r intervals."""
    reconciliation: Reconciliation | None
    reconciliation_missing: str | None
    share_check: ShareCheck | None
    """The study's declared share against the measured f; None when it declares none."""
    theta: float
    """The practical threshold the reconciliation's band was drawn with."""
    power: str | None
    """Set when the end-to-end design cannot see the effect Amdahl allows: its MDE is larger,
    and how many block pairs would see it."""
    decomposition: Decomposition | None = None
    """The share pass split into the operation and the rest of the request, both arms."""
    decomposition_missing: str | None = None

    @property
    def contradicted(self) -> bool:
        """The measured end-to-end effect cannot come from this change."""
        return self.reconciliation is not None and self.reconciliation.status in CONTRADICTIONS


@attrs.frozen
class EndToEnd:
    """The application's end-to-end evidence."""

    application: str
    operation: str | None
    shape: dict[str, int]
    comparison: Comparison | None
    comparison_missing: str | None
    baseline_median_ns: float | None
    shares: tuple[Share, ...]
    share_missing: str | None
    amdahl: Amdahl | None
    amdahl_missing: str | None
    findings: tuple[Finding, ...]
    requests_per_block: int | None = None
    """Requests the baseline timed per block: what a number of block pairs costs in requests."""
    stop: StopRecord | None = None
    """The sequential rule's stop of the request blocks, replayed from the samples (None: fixed design)."""
    stop_agrees: bool | None = None
    """Whether that replay is the stop the run recorded (None: the fixed design)."""
