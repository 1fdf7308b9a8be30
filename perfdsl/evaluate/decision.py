"""The study's declared decision, set against the evidence.

`adopt` claims the change is correct and pays off end to end, so a failed
correctness check, a refuted time prediction, or an end-to-end verdict other
than "faster" (including no end-to-end evidence) contradicts it. `reject`
claims it does not pay off, so a change that is correct and faster at every
level contradicts it. `investigate` commits to nothing and is never contradicted.
"""

from __future__ import annotations

import attrs

from perfdsl.evaluate.correctness import ModelLevel
from perfdsl.evaluate.end_to_end import EndToEnd
from perfdsl.evaluate.kernels import OperationResult
from perfdsl.evaluate.predictions import PredictionResult


@attrs.frozen
class DecisionCheck:
    """The declared decision and every piece of evidence that contradicts it."""

    declared: str | None
    consistent: bool
    findings: tuple[str, ...]


def check_decision(
    declared: str | None,
    operations: tuple[OperationResult, ...],
    model_level: ModelLevel,
    end_to_end: EndToEnd | None,
    predictions: tuple[PredictionResult, ...],
) -> DecisionCheck:
    """The findings that contradict `declared` (adopt, reject or investigate)."""
    correct = all(op.correctness.passed for op in operations) and model_level.passed is not False
    e2e = end_to_end.comparison.verdict if end_to_end and end_to_end.comparison else None
    findings: list[str] = []
    if declared == "adopt":
        findings += [
            f"adopt, but operation `{op.name}` fails its correctness check"
            for op in operations
            if not op.correctness.passed
        ]
        if model_level.passed is False:
            findings.append("adopt, but the application's output fails its model-level check")
        findings += [
            f"adopt, but the prediction `{p.text}` is refuted ({p.message})"
            for p in predictions
            if p.verdict == "refuted" and p.target.endswith(".time")
        ]
        if e2e != "faster":
            findings.append(
                f"adopt, but the end-to-end verdict is {e2e!r}"
                if e2e
                else "adopt, but there is no end-to-end timing evidence"
            )
    elif declared == "reject":
        kernels_faster = bool(operations) and all(
            op.combined is not None and op.combined.verdict == "faster" for op in operations
        )
        if correct and kernels_faster and e2e == "faster":
            findings.append("reject, but the change is correct and faster for every operation and end to end")
    return DecisionCheck(declared, not findings, tuple(findings))
