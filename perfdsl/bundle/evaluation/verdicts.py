"""evaluation.json's judgements: predictions, the decision, registration, Holm's family, contention."""

from __future__ import annotations

from typing import Literal

import attrs

from perfdsl.bundle.plain import field

Verdict = Literal["faster", "slower", "no meaningful change", "inconclusive"]
"""A time ratio's reading against the study's threshold: kernels, shapes combined, end to end."""
PredictionVerdict = Literal["confirmed", "refuted", "inconclusive", "not evidence", "invalid"]
Basis = Literal["measured", "modelled", "counted", "mixed", "none"]


@attrs.frozen
class PredictionResult:
    """One `predict` line, its verdict and the numbers behind it."""

    text: str
    line: int
    target: str
    comparator: str
    bound: float | None
    bound_source: str
    """"stated" or "amdahl (B = (1 - f) + f / s from measured f and s)"."""
    value: float | None
    ci: tuple[float, float] | None
    basis: Basis
    verdict: PredictionVerdict
    message: str
    detectable: float | None = None
    """The smallest time ratio the run detects on the bound's side of 1 (`evaluate.detection`)."""


@attrs.frozen
class DecisionCheck:
    """The declared decision, every piece of evidence that contradicts it, and what it still lacks.

    A contradiction is a measured effect against the decision (a failed check, a
    slower or unchanged request, a refuted time prediction, a cost outside the
    operation); missing or unusable evidence is not one, and is listed apart as
    what would be needed to support the decision.
    """

    declared: str | None
    consistent: bool
    """No evidence contradicts the decision (it may still be unsupported)."""
    findings: tuple[str, ...]
    """The contradictions."""
    unsupported: tuple[str, ...] = ()
    """What the decision lacks: evidence not collected or not usable, each with what would supply it."""


@attrs.frozen
class CurrentStudy:
    """The study file a report is being built from, against the registered hash."""

    path: str
    predict_hash: str | None
    matches: bool
    message: str


@attrs.frozen
class Registration:
    """The registered predict hash and what it was checked against."""

    registered_hash: str | None
    registered_at: str | None
    bundle_hash: str
    """The hash of the `predict` section of the bundle's study.perf."""
    matches: bool
    current: CurrentStudy | None
    message: str


COMBINED = "(combined)"
"""What stands for the shape in an operation's combination over shapes, in `member`."""


def member(operation: str, shape: str) -> str:
    """A comparison's name in a family: `normalize 2048x4096`, or `normalize (combined)` for the
    combination; the application's request time goes by the application's own name."""
    return f"{operation} {shape}"


@attrs.frozen
class FamilyAdjustment:
    """A family of hypotheses, named, with Holm-adjusted p-values and decisions."""

    family: str
    """What the family is, stated in the report (e.g. "kernel time, every shape of every operation")."""
    names: tuple[str, ...]
    p_values: tuple[float, ...]
    adjusted: tuple[float, ...]
    """Holm-adjusted p-values, in the order given."""
    rejected: tuple[bool, ...]
    """adjusted < alpha."""
    alpha: float
    interval_level: float
    """The confidence level to give each interval: 1 - alpha / m."""


@attrs.frozen
class ContendedSummary:
    """Whether the kernel verdicts rest on blocks that competed with other work (PQ009)."""

    blocks: int
    """Blocks (of every arm, roofs included) whose machine load was recorded."""
    contended: int
    """Of those, the blocks that competed with other work."""
    shapes: tuple[str, ...]
    """`operation shape` where a baseline or change block competed."""
    verdicts_rest_on_contended: bool
    """True when a shape with a baseline/change comparison has a contended baseline or change block."""
    missing: str | None
    """Why nothing was judged (a bundle from before the load was recorded), else None."""
    unresolved: int = field(default=0, absent=0, when=lambda summary: summary.unresolved > 0)
    """Of `blocks`, those too short, alone and together, for the clock tick to tell whether
    other work competed (`evaluate.contention.unresolved_blocks`): counted in `blocks`, never
    in `contended`, so "27 of 48 competed" must not read as 21 quiet ones."""
