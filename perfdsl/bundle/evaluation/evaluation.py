"""evaluation.json: the whole evaluation of one bundle, and how it is written and read."""

from __future__ import annotations

import attrs

from perfdsl.bundle import plain, versions
from perfdsl.bundle.evaluation.correctness import ModelLevel
from perfdsl.bundle.evaluation.end_to_end import EndToEnd
from perfdsl.bundle.evaluation.kernels import Finding, OperationResult
from perfdsl.bundle.evaluation.load import LoadEvaluation
from perfdsl.bundle.evaluation.machine import MachineSummary
from perfdsl.bundle.evaluation.value import ValueResult
from perfdsl.bundle.evaluation.verdicts import (
    ContendedSummary,
    DecisionCheck,
    FamilyAdjustment,
    PredictionResult,
    Registration,
)


@attrs.frozen
class Evaluation(plain.Plain):
    """Everything `perfdsl evaluate` concludes from one bundle."""

    DIGITS = plain.DIGITS
    VERSIONS = (versions.EVALUATION,)
    FILE = versions.EVALUATION_FILE
    REMEDY = "evaluate the bundle again"

    schema: str
    study: str
    run_id: str
    target: str
    timings_valid: bool
    timings_note: str | None
    """Set when the target's timings are not evidence: every timing result says so."""
    quick: bool
    level: float
    threshold: float
    operations: tuple[OperationResult, ...]
    model_level: ModelLevel
    end_to_end: EndToEnd | None
    end_to_end_missing: str | None
    load: LoadEvaluation | None
    load_missing: str | None
    expectations_target: str
    """The target whose predictions were judged (`cuda` for a cudasim run)."""
    expectations_missing: str | None
    """Set when no prediction applies to the run's target: "no expectations exist for target cpu"."""
    predictions: tuple[PredictionResult, ...]
    value: ValueResult | None
    value_missing: str | None
    decision: DecisionCheck
    registration: Registration
    quality: tuple[Finding, ...]
    """Every measurement-quality finding, kernels first, then the application, then the machine."""
    family: FamilyAdjustment | None
    """Holm's adjustment over every valid time comparison (see `evaluate.family`)."""
    contended: ContendedSummary
    """Whether the kernel verdicts rest on blocks that competed with other work (PQ009)."""
    machine: MachineSummary
    """Whether the CPU's recorded state made host timings unstable, and what rests on them (PQ011, PQ012)."""
    limit_family: FamilyAdjustment | None = None
    """Holm's adjustment over the limit shapes' comparisons alone (`evaluate.family.adjust_limits`)."""

    @property
    def interval_level(self) -> float:
        """The level the comparisons' intervals hold, where they share one: under the sequential rule
        the study's `level` shared over its family (0.9875 of 0.95 over 4 comparisons, evaluation/20),
        else `level` itself, which is also the answer where they differ."""
        found = {
            c.level
            for op in self.operations
            for c in (op.combined, *(shape.comparison for shape in op.shapes))
            if c is not None
        }
        if self.end_to_end is not None and self.end_to_end.comparison is not None:
            found.add(self.end_to_end.comparison.level)
        return found.pop() if len(found) == 1 else self.level
