"""A run's expectations: the objective, SLO, load, application shape and predictions for its target.

A study states expectations for every target (the workload's `objective`,
`evidence end_to_end`, `predict { }`) and, where a target's physics differs,
for one target (`target cpu { ... }`, `predict cpu { ... }`). A run is judged
only against its own target's: a CPU run that refuted a GPU's bandwidth
prediction would say nothing about the change, only about the CPU.

The rule, the same for every setting: a target's own statement replaces the
study-wide one (for a prediction: the one on the same quantity and statistic),
and a setting the target leaves out falls back to the study-wide one. Both
`perfdsl run` (the shape, load and SLO it measures) and `perfdsl evaluate`
(the predictions it judges) select through here, so the two cannot disagree.
"""

from __future__ import annotations

from typing import TypeVar

import attrs

from perfdsl.nodes import Condition, Load, Prediction, ShapeSet, Study, TargetExpectations

# The simulator runs the CUDA kernels: a cudasim run is held to what a cuda run is
# (its timings are never evidence, so the verdicts say "not evidence" either way).
STATED_AS = {"cudasim": "cuda"}

T = TypeVar("T")


@attrs.frozen
class Expectations:
    """What a run on `target` is held to, and whose statements those are."""

    target: str
    """The target whose expectations apply (`cuda` for a cudasim run)."""
    predictions: tuple[Prediction, ...]
    objective: Condition | None
    slo: Condition | None
    load: Load | None
    application: ShapeSet | None
    """The application's shape for this target; None: the workload's heaviest shape."""
    missing: str | None
    """Set when no prediction applies to this target: "no expectations exist for target cpu"."""


def expectations(study: Study, run_target: str) -> Expectations:
    """The expectations a run on `run_target` is judged against."""
    target = STATED_AS.get(run_target, run_target)
    section = next((t for t in study.target_expectations if t.name.id == target), None)
    own_predictions = [p for p in study.predictions if p.on is not None and p.on.id == target]
    replaced = {_key(p) for p in own_predictions}
    predictions = tuple(
        p
        for p in study.predictions
        if (p.on is None and _key(p) not in replaced) or (p.on is not None and p.on.id == target)
    )
    end_to_end = study.end_to_end
    return Expectations(
        target=target,
        predictions=predictions,
        objective=_pick(section, "objective", study.workload.objective if study.workload else None),
        slo=_pick(section, "slo", end_to_end.slo if end_to_end else None),
        load=_pick(section, "load", end_to_end.load if end_to_end else None),
        application=section.application if section else None,
        missing=None if predictions else f"no expectations exist for target {target}",
    )


def _key(prediction: Prediction) -> tuple[str, str]:
    return prediction.target, prediction.statistic.id


def _pick(section: TargetExpectations | None, field: str, every_target: T | None) -> T | None:
    own: T | None = getattr(section, field) if section is not None else None
    return every_target if own is None else own
