"""evaluation.json's kernel timing: each operation's shapes, comparisons and combination.

Comparison also carries one field the file never holds, the independent
analysis's bootstrap replicates: a history combines shapes from them, and the
interval summarises them. It is marked `WRITTEN: False` and reads back as None.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

import attrs

from perfdsl.bundle.evaluation.correctness import CorrectnessSummary
from perfdsl.bundle.evaluation.mechanism import KernelCounts, ShapeMechanism
from perfdsl.bundle.evaluation.verdicts import Verdict
from perfdsl.bundle.plain import NOT_WRITTEN, field
from perfdsl.bundle.stopping import StopRecord

if TYPE_CHECKING:
    import numpy as np


Analysis = Literal["paired", "independent"]
Severity = Literal["warning", "error"]


@attrs.frozen
class Finding:
    """One measurement-quality finding about a subject (an arm, a shape, a rate)."""

    code: str = attrs.field(converter=str)
    """A `PQ` code, stored as its plain string ("PQ001")."""
    severity: Severity
    message: str
    subject: str


@attrs.frozen
class Dispersion:
    """Spread of one arm's block medians, relative to their median.

    `iqr_rel` is IQR / median (torch.utils.benchmark warns at 10 %); `mad_rel`
    is the raw median absolute deviation / median (multiply by 1.4826 for a
    normal-consistent sigma).
    """

    median: float
    iqr_rel: float
    mad_rel: float


@attrs.frozen
class Comparison:
    """One baseline-vs-change comparison and everything a report must show with it."""

    ratio: float
    """median(change blocks) / median(baseline blocks); < 1 is faster."""
    ci_low: float | None
    """None when there are too few blocks for an interval (`interval_missing` says why)."""
    ci_high: float | None
    level: float
    theta: float
    """Practical threshold: max(1 %, the user's minimum effect)."""
    verdict: Verdict
    n_baseline: int
    n_change: int
    rank_p_value: float
    """Two-sided Mann-Whitney U p-value on the block medians."""
    rank_disagrees: bool
    """The verdict is faster/slower but the rank test is not significant at 1 - level."""
    baseline_dispersion: Dispersion
    change_dispersion: Dispersion
    sigma_log: float
    """Pooled between-block standard deviation of log block medians."""
    mde: float
    """Minimum detectable effect as a relative change (80 % power by default)."""
    effect_of_interest: float
    underpowered: bool
    """The MDE exceeds the effect of interest: "no change" cannot be claimed from power."""
    seed: int
    analysis: Analysis = "independent"
    """"paired" (adjacent ABBA blocks, `stats.paired`) or "independent" (each arm on its own)."""
    n_pairs: int = 0
    """Block pairs the paired analysis rests on (0 for the independent one)."""
    p_value: float | None = None
    """The paired bootstrap-t p-value of ratio 1 (None for the independent analysis)."""
    replicates: np.ndarray | None = attrs.field(default=None, eq=False, repr=False, metadata=NOT_WRITTEN)
    """Bootstrap replicates of the independent ratio (read-only); not written to evaluation.json."""
    interval_missing: str | None = None
    """Why there is no interval (too few block pairs); the verdict is then inconclusive."""
    family: str | None = None
    """Set when the interval alone said faster or slower but Holm's adjustment over the study's
    family of comparisons did not keep it: the verdict is then inconclusive, and this says why."""

    @property
    def interval(self) -> tuple[float, float] | None:
        """The interval widened to hold the ratio, or None when there is none."""
        if self.ci_low is None or self.ci_high is None:
            return None
        return min(self.ci_low, self.ratio), max(self.ci_high, self.ratio)


@attrs.frozen
class ArmSummary:
    """One arm's timing at one shape."""

    arm: str
    blocks: int
    samples: int
    invalid: int
    median_ns: float
    """Median of the block medians."""
    block_medians_ns: tuple[float, ...]


@attrs.frozen
class ArmContention:
    """How many of one arm's blocks at a shape read the machine's load, how many of them
    competed with other work (`evaluate.contention.contended_blocks`), and how many were
    too short for the clock tick to say either way."""

    arm: str
    read: int
    contended: int
    unresolved: int = field(default=0, absent=0, when=lambda arm: arm.unresolved > 0)
    """Blocks too short, alone and with the arm's other short ones, for the 10 ms tick to
    resolve other work: counted in `read`, never in `contended`, and not shown quiet either."""


@attrs.frozen
class ShapeResult:
    """One shape of one operation: the comparison (if evidence), quality and mechanism."""

    label: str
    sizes: dict[str, int]
    weight: float
    evidence: bool
    missing: str | None
    """Why there is no comparison: not timed, invalid samples, too few blocks."""
    arms: tuple[ArmSummary, ...]
    comparison: Comparison | None
    invalid: str | None
    """Why the comparison, though measured, may not be used in any conclusion; None when valid."""
    findings: tuple[Finding, ...]
    mechanism: ShapeMechanism
    stop: StopRecord | None = None
    """The sequential rule's stop, replayed from the samples (None: the fixed design)."""
    stop_agrees: bool | None = None
    """Whether that replay is the stop the run recorded (None: the fixed design)."""
    stop_pairs_needed: int | None = None
    """For a stop at the cap: the pairs that would have decided it at the spread measured."""
    contention: tuple[ArmContention, ...] = ()
    """Per arm with a block that read the machine's load: the counts the report's steady-state
    table prints, judged here so that the report reads them and judges nothing."""

    @property
    def usable(self) -> Comparison | None:
        """The comparison when it is evidence and valid: the only one a conclusion may rest on."""
        return None if self.invalid else self.comparison


@attrs.frozen
class OperationResult:
    """Everything measured about one operation."""

    name: str
    baseline: str
    change: str
    shapes: tuple[ShapeResult, ...]
    combined: Combined | None
    combined_missing: str | None
    regressions: tuple[str, ...]
    """Valid shapes whose own verdict is "slower"."""
    correctness: CorrectnessSummary
    static: dict[str, tuple[KernelCounts, ...]]
    """Per arm, counts read from its compiled kernels."""
    limits: tuple[ShapeResult, ...] = ()
    """Shapes timed only because a `limit regression` names them: weight 0, in no combination,
    family, prediction or decision of the workload's (their own family is `limit_family`)."""

    def shape(self, sizes: Mapping[str, int]) -> ShapeResult | None:
        """The shape with exactly these sizes, if it was planned."""
        return next((s for s in self.shapes if s.sizes == dict(sizes)), None)

    def timed(self, sizes: Mapping[str, int]) -> ShapeResult | None:
        """The shape timed at these sizes, the workload's or a limit's: a limit's shape that is also
        a workload shape was timed once, as the workload's."""
        return self.shape(sizes) or next((s for s in self.limits if s.sizes == dict(sizes)), None)


@attrs.frozen
class Exclusion:
    """A shape left out of a conclusion, and why."""

    shape: str
    reason: str


@attrs.frozen
class ShapeShare:
    """One shape in the combination: its weight and its share of the baseline's total time."""

    shape: str
    weight: float
    """The workload weight as given (how often the shape occurs)."""
    time_share: float
    """w_i t_base_i / sum_j w_j t_base_j: how much of the workload's time the shape is."""


@attrs.frozen
class Combined:
    """The weighted total-time ratio over the valid shapes, and what was left out."""

    ratio: float
    ci_low: float
    ci_high: float
    level: float
    theta: float
    verdict: Verdict
    p_value: float
    basis: str
    """What the ratio is: "ratio of weighted total times"."""
    shares: tuple[ShapeShare, ...]
    """Each included shape's weight and share of the baseline's weighted total time."""
    regressions: tuple[str, ...]
    """Included shapes whose own verdict is "slower"."""
    excluded: tuple[Exclusion, ...]
    mde: float
    """Smallest relative change of the total this run detects (`stats.combine`)."""
    spread_log: float
    """The spread of one round over all shapes, for the pairs a smaller effect needs."""
    family: str | None = None
    """Set when Holm's adjustment did not keep the interval's faster or slower (see Comparison)."""
    sequential: bool = field(default=False, absent=False, when=lambda combined: combined.sequential)
    """True when the shapes stopped by a sequential rule: the interval, verdict and p-value are then
    the ones that hold whenever every shape's sequential interval does (`stats.sequential.total`),
    not the bootstrap's over the pairs measured. Written only when true."""
