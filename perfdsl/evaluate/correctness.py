"""Correctness as evidence: per arm pass/fail, the worst errors, and every failing case.

The run records one case per (arm, shape, seed), adversarial shapes marked; a
failure is evidence, not a crash, so the summary keeps each failing case with
what it takes to reproduce it (shape and seed). The application's own output
against its float64 run (model-level) is summarised the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs


@attrs.frozen
class FailingCase:
    """One case that failed: enough to rerun it."""

    arm: str
    variant: str
    shape: dict[str, int]
    seed: int | None
    adversarial: bool
    rel_l2: float | None
    max_abs: float | None
    message: str


@attrs.frozen
class ArmCorrectness:
    """One arm's cases, summarised."""

    arm: str
    passed: bool
    cases: int
    failed: int
    adversarial_cases: int
    worst_rel_l2: float | None
    worst_max_abs: float | None


@attrs.frozen
class CorrectnessSummary:
    """An operation's correctness evidence."""

    passed: bool
    tolerances: dict[str, float]
    seeds: int | None
    arms: tuple[ArmCorrectness, ...]
    failing: tuple[FailingCase, ...]


@attrs.frozen
class ModelLevel:
    """The application's output with each arm against its float64 run."""

    passed: bool | None
    arms: dict[str, dict[str, Any]]
    """Per arm: passed, rel_l2, max_abs, message (None where the run recorded none)."""
    missing: str | None


def summarize_correctness(record: Mapping[str, Any]) -> CorrectnessSummary:
    """Summarise results.json's `correctness` entry of one operation."""
    cases = list(record.get("cases") or [])
    arms = tuple(
        _arm(arm, [c for c in cases if c.get("arm") == arm])
        for arm in dict.fromkeys(c.get("arm", "?") for c in cases)
    )
    failing = tuple(
        FailingCase(
            arm=c.get("arm", "?"),
            variant=c.get("variant", ""),
            shape=dict(c.get("shape") or {}),
            seed=c.get("seed"),
            adversarial=bool(c.get("adversarial")),
            rel_l2=c.get("rel_l2"),
            max_abs=c.get("max_abs"),
            message=c.get("message", ""),
        )
        for c in cases
        if not c.get("passed")
    )
    return CorrectnessSummary(
        passed=bool(record.get("passed")) and not failing,
        tolerances=dict(record.get("tolerances") or {}),
        seeds=record.get("seeds"),
        arms=arms,
        failing=failing,
    )


def _arm(arm: str, cases: list[Mapping[str, Any]]) -> ArmCorrectness:
    failed = sum(not c.get("passed") for c in cases)
    return ArmCorrectness(
        arm=arm,
        passed=failed == 0,
        cases=len(cases),
        failed=failed,
        adversarial_cases=sum(bool(c.get("adversarial")) for c in cases),
        worst_rel_l2=_worst(cases, "rel_l2"),
        worst_max_abs=_worst(cases, "max_abs"),
    )


def _worst(cases: list[Mapping[str, Any]], metric: str) -> float | None:
    values = [float(c[metric]) for c in cases if isinstance(c.get(metric), int | float)]
    return max(values) if values else None


def summarize_model_level(application: Mapping[str, Any] | None) -> ModelLevel:
    """Summarise the application's model-level comparison, or say why there is none."""
    if not application or not application.get("model_level"):
        return ModelLevel(None, {}, "the run has no application")
    record = application["model_level"]
    arms = {}
    for arm, result in sorted((record.get("arms") or {}).items()):
        output = result.get("output") or {}
        arms[arm] = {
            "passed": bool(result.get("passed")),
            "rel_l2": output.get("rel_l2"),
            "max_abs": output.get("max_abs"),
            "message": result.get("message") or output.get("problem") or "",
        }
    return ModelLevel(bool(record.get("passed")), arms, None)
