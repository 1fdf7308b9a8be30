"""evaluation.json's correctness evidence: per operation, and the application's model level."""

from __future__ import annotations

from typing import Literal

import attrs

FailureKind = Literal["unwritten", "NaN", "tolerance", "nondeterministic", "error"]
"""`error`: no output was compared (evaluation/18): the arm raised, hung or timed out, or the
reference itself failed; the case's `message` says which."""


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
    kinds: tuple[FailureKind, ...]
    """What went wrong: outputs left unwritten, NaN or infinity, over tolerance,
    different results from the same inputs, or no output to compare; page 1 names them."""


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
class ModelArm:
    """One arm's application output against its float64 run."""

    passed: bool
    rel_l2: float | None
    max_abs: float | None
    """None where the run recorded no output to compare."""
    message: str


@attrs.frozen
class ModelLevel:
    """The application's output with each arm against its float64 run."""

    passed: bool | None
    arms: dict[str, ModelArm]
    missing: str | None

    @property
    def failure(self) -> str | None:
        """What page 1 and the CI formats say of a failed check; None unless it failed.

        An arm that raised or did not finish served no output to judge, which is no wrong
        output: a new user's KeyError in `prepare` read as "the application's output fails".
        """
        if self.passed is not False:
            return None
        served_none = [
            f"{arm} {arm_result.message}"
            for arm, arm_result in sorted(self.arms.items())
            if not arm_result.passed and arm_result.rel_l2 is None and arm_result.max_abs is None
        ]
        if served_none:
            return f"the application served no output to its model-level check ({'; '.join(served_none)})"
        return "the application's output fails its model-level check"
