"""evaluation.json of a wholly imported study: each operation's ratio from imported entries."""

from __future__ import annotations

import attrs

from perfdsl.bundle import plain, versions
from perfdsl.bundle.evaluation.value import Value
from perfdsl.bundle.evaluation.verdicts import PredictionResult


@attrs.frozen
class SideResult:
    """One imported side, labelled as the report prints it beside its number."""

    entry: str
    file: str
    source: str
    format: str
    tool: str
    tool_version: str | None
    granularity: str
    interleaved: str
    environment: tuple[tuple[str, str], ...]
    sha256: str
    blocks: int
    samples: int
    calls_per_sample: int | None
    median_ns: float | None
    """The median of the block medians, or the file's own median when it holds statistics only."""


@attrs.frozen
class ImportedTiming:
    """An operation's (or an application's) imported time ratio, and how far it can be trusted."""

    operation: str
    """The operation's name; an application's where this is its end-to-end timing."""
    method: str
    """`paired`, `unpaired`, or `medians` (the files' own medians: a point, no interval)."""
    ratio: float | None
    low: float | None
    high: float | None
    indicated: str | None
    """The statistical call (`faster`, ...) where an interval exists."""
    evidence_grade: bool
    caveats: tuple[str, ...]
    verdict: str
    """`indicated` when evidence-grade, else "not evidence-grade: <caveats>"."""
    baseline: SideResult
    change: SideResult


@attrs.frozen
class CountedArm:
    """One implementation's profiled launches."""

    kernels: tuple[str, ...]
    launches: int


@attrs.frozen
class CountedQuantity:
    """One measure for both arms, from the profile; None where the profile lacks its metrics."""

    name: str
    baseline: float | None
    change: float | None
    ratio: float | None


@attrs.frozen
class ImportedCounted:
    """An operation's imported counters: what they count, where from, and whether predictions rest on them."""

    operation: str
    label: str
    source: str
    file: str
    sha256: str
    tool: str
    environment: tuple[tuple[str, str], ...]
    baseline: CountedArm
    change: CountedArm
    quantities: tuple[CountedQuantity, ...]
    judged: bool
    """The counts describe what was timed: predictions on these quantities are judged on them."""
    mismatch: str | None
    """Why they are not (the profile is a GPU's, the timing is not); None when judged."""

    def quantity(self, name: str) -> CountedQuantity | None:
        return next((q for q in self.quantities if q.name == name), None)


@attrs.frozen
class ImportedEndToEnd:
    """One imported application: its timing, what Amdahl can and cannot say, and its value."""

    application: str
    uses: tuple[str, ...]
    timing: ImportedTiming
    amdahl: str
    declared_share: float | None
    claimed_bound: float | None
    """(1 - share) + share x r from the declared share and the operation's imported ratio: a claim."""
    value: Value | None
    value_missing: str | None
    capacity_missing: str


@attrs.frozen
class ImportedEvaluation(plain.Plain):
    """evaluation.json of a wholly imported study."""

    DIGITS = plain.DIGITS
    VERSIONS = (versions.IMPORTED_EVALUATION,)
    FILE = versions.EVALUATION_FILE
    REMEDY = "evaluate the bundle again"

    schema: str
    study: str
    run_id: str
    level: float
    threshold: float
    timings: tuple[ImportedTiming, ...]
    sizes: dict[str, dict[str, int]]
    """Operation -> the one shape its files measured."""
    models: dict[str, dict[str, dict[str, float]]]
    """Operation -> modelled quantity -> arm -> value, at the one shape."""
    predictions: tuple[PredictionResult, ...]
    correctness_not_run: str | None
    counted: tuple[ImportedCounted, ...]
    """Operations' mechanism evidence from imported Nsight Compute profiles ("counted, imported")."""
    applications: tuple[ImportedEndToEnd, ...]
    """Applications timed by imported request times."""
    end_to_end_not_run: str | None
    decision: str | None
    findings: tuple[str, ...]
