"""Correctness as evidence: per arm pass/fail, the worst errors, and every failing case.

The run records one case per (arm, shape, seed), adversarial shapes marked; a
failure is evidence, not a crash, so the summary keeps each failing case with
what it takes to reproduce it (shape and seed). The application's own output
against its float64 run (model-level) is summarised the same way.
"""

from __future__ import annotations

from perfdsl.bundle.application import ApplicationRecord
from perfdsl.bundle.evaluation.correctness import (
    ArmCorrectness,
    CorrectnessSummary,
    FailingCase,
    FailureKind,
    ModelArm,
    ModelLevel,
)
from perfdsl.bundle.results import CorrectnessCase, CorrectnessRecord


def summarize_correctness(record: CorrectnessRecord) -> CorrectnessSummary:
    """Summarise results.json's `correctness` record of one operation."""
    cases = record.cases
    arms = tuple(_arm(arm, [c for c in cases if c.arm == arm]) for arm in dict.fromkeys(c.arm for c in cases))
    failing = tuple(
        FailingCase(
            arm=c.arm,
            variant=c.variant,
            shape=dict(c.shape),
            seed=c.seed,
            adversarial=c.adversarial,
            rel_l2=c.rel_l2,
            max_abs=c.max_abs,
            message=c.message,
            kinds=failure_kinds(c),
        )
        for c in cases
        if not c.passed
    )
    return CorrectnessSummary(
        passed=record.passed and not failing,
        tolerances=dict(record.tolerances),
        seeds=record.seeds,
        arms=arms,
        failing=failing,
    )


def failure_kinds(case: CorrectnessCase) -> tuple[FailureKind, ...]:
    """Why a case failed: "error" when no output was compared at all, else what the comparison
    found, "tolerance" when nothing more specific is recorded.

    A case whose reference raised was called "tolerance", and page 1 of a new user's report
    blamed both correct arms for a reference that returned the wrong shape.
    """
    if case.rel_l2 is None and case.max_abs is None and not (case.unwritten or case.nonfinite):
        return ("error",)
    kinds: list[FailureKind] = []
    if case.unwritten:
        kinds.append("unwritten")
    if case.nonfinite:
        kinds.append("NaN")
    if case.deterministic is False:
        kinds.append("nondeterministic")
    return tuple(kinds) or ("tolerance",)


def _arm(arm: str, cases: list[CorrectnessCase]) -> ArmCorrectness:
    failed = sum(not c.passed for c in cases)
    return ArmCorrectness(
        arm=arm,
        passed=failed == 0,
        cases=len(cases),
        failed=failed,
        adversarial_cases=sum(c.adversarial for c in cases),
        worst_rel_l2=_worst([c.rel_l2 for c in cases]),
        worst_max_abs=_worst([c.max_abs for c in cases]),
    )


def _worst(errors: list[float | None]) -> float | None:
    values = [float(e) for e in errors if isinstance(e, int | float)]
    return max(values) if values else None


def summarize_model_level(application: ApplicationRecord | None) -> ModelLevel:
    """Summarise the application's model-level comparison, or say why there is none."""
    if application is None or application.model_level is None:
        return ModelLevel(None, {}, "the run has no application")
    record = application.model_level
    arms = {}
    for arm, result in sorted(record.arms.items()):
        output = result.output
        arms[arm] = ModelArm(
            passed=result.passed,
            rel_l2=output.rel_l2 if output else None,
            max_abs=output.max_abs if output else None,
            message=result.message or (output.problem if output else ""),
        )
    return ModelLevel(record.passed, arms, None)
