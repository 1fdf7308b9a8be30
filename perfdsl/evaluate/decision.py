"""The study's declared decision, set against the evidence.

`adopt` claims the change is correct and pays off end to end, so a failed
correctness check, a refuted time prediction, an end-to-end verdict other
than "faster" (including no end-to-end evidence), an end-to-end effect that
contradicts Amdahl's bound (it cannot come from this change), or an
operation with no valid timing left contradicts it. `reject` claims it does
not pay off, so a change that is correct and faster at every level, with the
end-to-end gain consistent with Amdahl, contradicts it. `investigate` commits
to nothing and is never contradicted.

Invalid results never count either way: the kernel evidence read here is the
combination over valid shapes only.
"""

from __future__ import annotations

from perfdsl.bundle.evaluation.correctness import ModelLevel
from perfdsl.bundle.evaluation.end_to_end import EndToEnd
from perfdsl.bundle.evaluation.kernels import OperationResult
from perfdsl.bundle.evaluation.verdicts import DecisionCheck, PredictionResult


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
    amdahl = end_to_end.amdahl if end_to_end else None
    contradiction = (
        amdahl.reconciliation.message
        if amdahl is not None and amdahl.contradicted and amdahl.reconciliation is not None
        else None
    )
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
        if contradiction:
            findings.append(
                f"adopt, but the end-to-end effect contradicts Amdahl's bound, so it cannot be credited "
                f"to the change ({contradiction})"
            )
        findings += [
            f"adopt, but operation `{op.name}` has no valid timing: {op.combined_missing}"
            for op in operations
            if op.combined is None and any(s.invalid for s in op.shapes)
        ]
    elif declared == "reject":
        kernels_faster = bool(operations) and all(
            op.combined is not None and op.combined.verdict == "faster" for op in operations
        )
        if correct and kernels_faster and e2e == "faster" and not contradiction:
            findings.append("reject, but the change is correct and faster for every operation and end to end")
    return DecisionCheck(declared, not findings, tuple(findings))
