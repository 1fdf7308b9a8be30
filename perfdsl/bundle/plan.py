"""plan.json as records: what `perfdsl run` was asked to do, resolved to plain values.

`perfdsl.plan.plan(study, ...)` builds a `Plan`; the run executes it and writes
`to_json()` into the bundle (the study text is the bundle's study.perf, so it is
left out); the evaluation and the report read it back with `Plan.read`. Both
directions walk the records' fields (`bundle.plain`).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import attrs

from perfdsl.bundle import versions
from perfdsl.bundle.plain import EMPTY, Plain, field
from perfdsl.bundle.stopping import (
    FIXED,
    METHOD,
    PLANNED_METHOD,
    RHO,
    SEQUENTIAL,
    WINSORIZED_METHOD,
    StoppingRule,
)

PLAN = "plan.json"


@attrs.frozen
class ModelValue(Plain):
    """A modelled mechanism quantity for one shape: `bytes` baseline and change."""

    quantity: str
    baseline: float
    change: float


@attrs.frozen
class ShapePlan(Plain):
    """One shape to time and check, with its traffic weight and modelled quantities."""

    sizes: dict[str, int]
    weight: float
    models: tuple[ModelValue, ...] = field(absent=EMPTY)
    limit: bool = False
    """Timed because a `limit regression` names it, not because the workload does: weight 0, and
    judged apart from the workload's shapes (`evaluate.kernels`)."""

    @property
    def label(self) -> str:
        return "x".join(str(v) for v in self.sizes.values())


@attrs.frozen
class LimitShapePlan(Plain):
    """One shape a `limit regression` declares, and the sizes the run measures it at, or why not.

    `sizes` equals `declared` in a full run and is the shrunk shape under `--quick`; it
    may be a workload shape too, which is then timed once and read in both places.
    """

    declared: dict[str, int]
    sizes: dict[str, int] | None
    missing: str | None
    """Why the run does not measure it (`sizes` is None)."""


@attrs.frozen
class OperationPlan(Plain):
    """The operation's three implementations (by reference) and where to run them."""

    name: str
    baseline: str
    change: str
    reference: str
    lines: dict[str, int] = field(absent=EMPTY)
    """Study line of each reference, so a bad reference is reported where it is written."""
    shapes: tuple[ShapePlan, ...] = field(absent=EMPTY)
    adversarial: tuple[dict[str, int], ...] = field(absent=EMPTY)
    stop_edges: tuple[float, ...] = field(default=(), absent=(), when=lambda op: bool(op.stop_edges))
    """The numeric bounds of the run target's `<operation>.time ratio` predictions: under the
    sequential rule each shape keeps measuring while its interval straddles one
    (`StoppingRule.edges`). Not written when there are none."""


def _in_range(plan: Any, _: Any, threshold: float) -> None:
    """The checker bounds both: a run never writes these, and every interval would fail on them."""
    if not (0 < plan.confidence < 1 and 0 <= threshold < math.inf):
        raise ValueError(f"timing confidence {plan.confidence} or threshold {threshold} is out of range")


def _blocks(timing: dict[str, Any]) -> int:
    """A plan from before the sequential design: its window is its fixed count of blocks."""
    return int(timing["blocks"])


@attrs.frozen
class TimingPlan(Plain):
    """How the run times every comparison; a `perfdsl.plan/2` one (no `stop`) is the fixed design."""

    warmup: int
    repeats: int
    blocks: int
    """Blocks per arm of the fixed design (kernels and application alike)."""
    rotate: int
    confidence: float
    threshold: float = field(validator=_in_range)
    stop: str = FIXED
    """FIXED, or SEQUENTIAL: the kernels' and the application's blocks run from `min_blocks` until
    decided or `max_blocks`."""
    min_blocks: int = field(default=0, absent=_blocks)
    max_blocks: int = field(default=0, absent=_blocks)
    family: int = 1
    """The comparisons in the study's family (`evaluate.family`: every kernel shape, each
    operation's combination over shapes, the application's request time)."""
    looks: tuple[int, ...] = field(default=(), absent=(), when=lambda timing: bool(timing.looks))
    """Under `looks K`, the planned looks' pair counts (`stats.sequential.planned.schedule`);
    empty, and not written, when the sequential rule looks after every pair."""
    boundaries: tuple[float, ...] = field(default=(), absent=(), when=lambda timing: bool(timing.looks))
    """Each planned look's z boundary at `comparison_confidence`, computed by the planner and
    registered with the predictions before the run."""
    winsorized: bool = field(default=False, absent=False, when=lambda timing: timing.winsorized)
    """Whether the confidence sequence winsorizes the pairs at each look (`WINSORIZED_METHOD`):
    every sequential plan from plan/5 on that has no planned looks; false, and not written, for
    earlier plans, whose runs are replayed by the rule they ran."""

    @property
    def comparison_confidence(self) -> float:
        """The confidence each comparison stops at: the study's, shared over its family (see `stopping`)."""
        return round(1.0 - (1.0 - self.confidence) / max(1, self.family), 12)

    @property
    def stopping(self) -> StoppingRule | None:
        """The sequential rule the kernel comparisons stop by; None for the fixed design.

        Each comparison stops at 1 - (1 - confidence) / family (Bonferroni): its anytime-valid
        p-value at a decided stop is then at most (1 - confidence) / family, which every step
        of Holm's adjustment over the family keeps. Stopped at `confidence` itself, a stop's
        p-value lands just under 1 - confidence, and Holm then drops the verdict the run
        stopped for: a demo's end-to-end comparison decided faster after 7 pairs (p = 0.013)
        and was inconclusive in a family of 4.
        """
        if self.stop != SEQUENTIAL:
            return None
        method = PLANNED_METHOD if self.looks else WINSORIZED_METHOD if self.winsorized else METHOD
        return StoppingRule(
            self.comparison_confidence,
            self.threshold,
            self.min_blocks,
            self.max_blocks,
            RHO,
            method,
            self.looks,
            self.boundaries,
        )

    def stopping_for(self, edges: tuple[float, ...]) -> StoppingRule | None:
        """`stopping` for one comparison, kept open while its interval straddles one of `edges`
        (the predictions' bounds on its ratio: `OperationPlan.stop_edges`, `ApplicationPlan.stop_edges`)."""
        rule = self.stopping
        return None if rule is None else attrs.evolve(rule, edges=edges)

    @property
    def kernel_blocks(self) -> int:
        """The most blocks per arm a kernel shape or the application is given: the fixed count, or
        the sequential cap."""
        return self.max_blocks if self.stop == SEQUENTIAL else self.blocks


@attrs.frozen
class CorrectnessPlan(Plain):
    seeds: int
    tolerances: dict[str, float] = field(absent=EMPTY)
    """metric (`rel_l2`, `max_abs`) -> the largest error that passes."""
    poison: str


@attrs.frozen
class ApplicationPlan(Plain):
    name: str
    entry: str
    line: int
    uses: tuple[str, ...] = field(absent=EMPTY)
    shape: dict[str, int] = field(absent=EMPTY)
    """The operating point: the heaviest-weighted workload shape."""
    stop_edges: tuple[float, ...] = field(default=(), absent=(), when=lambda app: bool(app.stop_edges))
    """The numeric bounds of the run target's `<application>.time ratio` predictions, as an
    operation's `stop_edges` are for its shapes (an `amdahl` bound is measured, not known before)."""


def _a_percentile(_: Any, __: Any, percentile: float) -> None:
    """`check` allows `p1` to `p99`: a probe sized for a share of 0 over the SLO (p100) needs
    more requests than any number, and a report sizing one ended in a traceback."""
    if not 0.01 <= percentile <= 0.99:
        raise ValueError(f"SLO percentile {percentile} is not one of p1 to p99")


@attrs.frozen
class LoadPlan(Plain):
    arrivals: str
    rates: tuple[float, ...] = field(absent=EMPTY)
    """Offered rates to sweep, requests per second."""
    requests: int
    slo_seconds: float | None
    slo_percentile: float = field(validator=_a_percentile)
    probe: str = field(default=SEQUENTIAL, absent=SEQUENTIAL, when=lambda load: load.probe != SEQUENTIAL)
    """How each probe's SLO question is decided: `sequential` (the default, and what a plan
    without the key ran) or `fixed`. Written only for `fixed`, so a sequential plan's bytes
    are those of the plans before the choice existed."""


@attrs.frozen
class Plan(Plain):
    """Everything `perfdsl run` needs, and nothing it must look up in the study again."""

    DERIVED = ("schema",)
    VERSIONS = versions.READABLE_PLAN
    FILE = PLAN

    study: str
    study_path: str
    study_text: str = field(written=False)
    """The study as run; not in plan.json (the bundle keeps it as study.perf)."""
    study_hash: str
    predict_hash: str
    target: str
    quick: bool
    dtype: str
    operations: tuple[OperationPlan, ...]
    timing: TimingPlan
    correctness: CorrectnessPlan
    roof: str | None = field(absent=EMPTY)
    roof_line: int = field(absent=EMPTY)
    measures: tuple[str, ...] = field(absent=EMPTY)
    """The mechanism quantities the study's `evidence mechanism` measures."""
    application: ApplicationPlan | None = field(absent=EMPTY)
    load: LoadPlan | None = field(absent=EMPTY)
    artifacts: str = field(absent=EMPTY)
    """Directory the bundles go under, resolved against the study file's directory
    (as paths in a configuration file are), so the cwd never changes where a run lands."""
    limits: tuple[LimitShapePlan, ...] = ()
    """Every shape the study's `limit regression`s declare, each once, in study order."""

    @property
    def references(self) -> tuple[str, ...]:
        """Every Python reference the run resolves: each operation's baseline, change and
        reference, the roof and the application's entry."""
        found = [ref for op in self.operations for ref in (op.baseline, op.change, op.reference)]
        found += [ref for ref in (self.roof, self.application.entry if self.application else None) if ref]
        return tuple(found)

    @property
    def schema(self) -> str:
        """The format version the plan is written in (`from_json` checks a file's)."""
        return versions.PLAN

    @classmethod
    def read(cls, bundle: Path, study_text: str | None = None) -> Plan:
        """Read and check a bundle's plan.json (OSError, ValueError or BundleFormatError);
        `study_text` is the bundle's study.perf where the caller has read it already."""
        if study_text is None:
            study_text = (Path(bundle) / "study.perf").read_text(encoding="utf-8")
        return super().read(bundle, study_text=study_text)
