"""What the report is rendered from: the study, the evaluation and the bundle's own files.

The report reads evaluation.json (the evaluation's contract) into its records
(`bundle.evaluation`) rather than taking them from a fresh evaluation: a report
must be rebuildable from an archived bundle without re-evaluating it, and
reading the file is what makes the Markdown a deterministic function of the
bundle. The other files it presents (the per-case correctness errors in
results.json, the environment, the manifest hashes) are read through their
records too (`perfdsl.bundle`), never by key here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from perfdsl import targets
from perfdsl.bundle.environment import EnvironmentRecord
from perfdsl.bundle.evaluation.end_to_end import EndToEnd
from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.kernels import OperationResult
from perfdsl.bundle.evaluation.load import LoadEvaluation
from perfdsl.bundle.evaluation.verdicts import CurrentStudy, DecisionCheck
from perfdsl.bundle.manifest import Manifest
from perfdsl.bundle.plan import Plan
from perfdsl.bundle.registration import RegistrationRecord
from perfdsl.bundle.results import Results
from perfdsl.expectations import expectations
from perfdsl.nodes import Condition, Study
from perfdsl.report import formatting as fmt
from perfdsl.report.html import Figure
from perfdsl.shape_order import declared_order, shape_words


@attrs.frozen
class ReportContext:
    """Everything a section renderer may read; sections read nothing else."""

    study: Study
    """The study file the report is built from (its prose: title, limits, rejected)."""
    evaluation: Evaluation
    """evaluation.json."""
    results: Results
    plan: Plan
    environment: EnvironmentRecord | None
    environment_missing: str | None
    manifest: Manifest
    registration: RegistrationRecord
    bundle_label: str
    """The bundle's path as the report prints it."""
    current: CurrentStudy | None
    """The study file's `predict` section checked against the registered hash."""
    bundle_study_text: str
    """The study text the run used (the bundle's study.perf)."""

    @property
    def run_id(self) -> str:
        return self.evaluation.run_id

    @property
    def operations(self) -> tuple[OperationResult, ...]:
        return self.evaluation.operations

    @property
    def end_to_end(self) -> EndToEnd | None:
        return self.evaluation.end_to_end

    @property
    def load(self) -> LoadEvaluation | None:
        return self.evaluation.load

    @property
    def timings_valid(self) -> bool:
        return self.evaluation.timings_valid

    @property
    def quick(self) -> bool:
        return self.evaluation.quick

    @property
    def simulated(self) -> bool:
        """A run under the CUDA simulator: always at its tiny sizes (`quick`), `--quick` or not."""
        return self.evaluation.target == targets.CUDASIM.name

    @property
    def smoke(self) -> bool:
        """A `--quick` run (`smoke_run`)."""
        return smoke_run(self.evaluation)

    @property
    def decision(self) -> DecisionCheck:
        """The study file's decision against this run's evidence.

        The evaluation checked the decision of the run's study; a study edited since to
        decide otherwise (the usual step once results are in) was headed "Decision: adopt.
        The evidence below does not contradict it" while the check, of `investigate`,
        held findings against `adopt`. The same check of the file's decision, on the same
        evidence, is taken here.
        """
        ev = self.evaluation
        current = self.study.decision.id if self.study.decision else None
        if current is None or current == ev.decision.declared:
            return ev.decision
        from perfdsl.evaluate.decision import check_decision

        return check_decision(
            current,
            ev.operations,
            ev.model_level,
            ev.end_to_end,
            ev.predictions,
            end_to_end_missing=ev.end_to_end_missing,
            timings_valid=ev.timings_valid,
        )

    @property
    def level(self) -> float:
        return self.evaluation.level

    @property
    def interval_level(self) -> float:
        """The confidence each comparison's own interval holds: the study's level, or under the
        sequential rule its share over the family (98.75 % of a 95 % family of 4), at which the
        intervals were computed: labelled "95%", they read narrower than they are."""
        timing = self.plan.timing
        return timing.comparison_confidence if timing.stopping is not None else self.level

    @property
    def predict_edited(self) -> bool:
        """The study's `predict` section is not the one registered before the results."""
        return self.current is not None and not self.current.matches


FigureDrawing = Callable[[], str]
"""How to draw one figure's SVG, called only when the figure is needed: a
`functools.partial` of a `report.figures` builder over plain numbers, so it
can be sent to another process and Markdown alone never imports matplotlib."""


@attrs.define
class Blocks:
    """One section's Markdown blocks and the drawings of the figures they refer to, in order."""

    parts: list[str] = attrs.field(factory=list)
    drawings: dict[str, FigureDrawing] = attrs.field(factory=dict)

    def add(self, *blocks: str) -> None:
        """Append Markdown blocks (paragraphs, tables, callouts); empty ones are skipped."""
        self.parts.extend(b for b in blocks if b)

    def figure(self, key: str, drawing: FigureDrawing, caption: str) -> None:
        """Append a figure standing alone in its paragraph, as `report.html` expects."""
        self.drawings[key] = drawing
        self.parts.append(f"![{caption}](figure:{key})")


def draw_figures(drawings: Mapping[str, FigureDrawing]) -> dict[str, Figure]:
    """Draw every figure, each checked as it enters (`html.Figure`)."""
    return {key: Figure(draw()) for key, draw in drawings.items()}


def smoke_run(evaluation: Evaluation) -> bool:
    """A `--quick` run, whose timings exercise the chain and are evidence of nothing; the
    simulator's runs are quick too, and say so in their own words."""
    return evaluation.quick and evaluation.target != targets.CUDASIM.name


def run_objective(ctx: ReportContext) -> Condition | None:
    """The objective this run is held to: its target's own (`target cpu { objective }`), else the study's."""
    return expectations(ctx.study, ctx.evaluation.target).objective


def shrunk_by(ctx: ReportContext) -> str:
    """What scaled a quick run's shapes down: the simulator does for every run, `--quick` or not."""
    return "the simulator" if ctx.simulated else "`--quick`"


def shape_text(ctx: ReportContext, sizes: Mapping[str, int] | None, empty: str = "as planned") -> str:
    """A shape in the report's words, `M = 256` times `K = 64`, its symbols in the study's order;
    `empty` where it has no sizes."""
    return shape_words(sizes or {}, declared_order(ctx.study), f" {fmt.TIMES} ") or empty
