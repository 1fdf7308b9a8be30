"""The study's declared decision, set against the evidence.

`adopt` claims the change is correct and pays off end to end. Evidence against
it contradicts it: a failed correctness check, a refuted time prediction, an
end-to-end verdict of "slower" or "no meaningful change", or a change that
makes the rest of the request slower (a cost outside the operation). Evidence
that is missing or does not add up leaves it unsupported instead, with what
would supply it: no end-to-end timing (a target whose timings are not
evidence, or request samples that are not), an inconclusive end-to-end verdict, an end-to-end effect that does
not add up against Amdahl's bound, an operation with no valid timing left. A
gain outside the operation (the rest of the request got faster) neither
contradicts nor supports more than the measured effect does.

`reject` claims it does not pay off, so a change that is correct and faster
at every level, with the end-to-end effect adding up, contradicts it.
`investigate` commits to nothing and is never contradicted.

Invalid results never count either way: the kernel evidence read here is the
combination over valid shapes only.
"""

from __future__ import annotations

from perfdsl.bundle.evaluation.correctness import ModelLevel
from perfdsl.bundle.evaluation.end_to_end import EndToEnd
from perfdsl.bundle.evaluation.kernels import OperationResult
from perfdsl.bundle.evaluation.verdicts import DecisionCheck, PredictionResult
from perfdsl.numbers import estimate


def check_decision(
    declared: str | None,
    operations: tuple[OperationResult, ...],
    model_level: ModelLevel,
    end_to_end: EndToEnd | None,
    predictions: tuple[PredictionResult, ...],
    *,
    end_to_end_missing: str | None = None,
    timings_valid: bool = True,
) -> DecisionCheck:
    """The findings that contradict `declared` (adopt, reject or investigate), and what it lacks."""
    correct = all(op.correctness.passed for op in operations) and model_level.passed is not False
    e2e = end_to_end.comparison.verdict if end_to_end and end_to_end.comparison else None
    amdahl = end_to_end.amdahl if end_to_end else None
    r = amdahl.reconciliation if amdahl is not None else None
    broken = r.message if amdahl is not None and amdahl.contradicted and r is not None else None
    findings: list[str] = []
    unsupported: list[str] = []
    if declared == "adopt":
        findings += [
            f"adopt, but operation `{op.name}` fails its correctness check"
            for op in operations
            if not op.correctness.passed
        ]
        if model_level.failure is not None:
            findings.append(f"adopt, but {model_level.failure}")
        # Each finding names its evidence without restating it: the prediction's own verdict
        # carries its numbers, and page 1 prints every finding together.
        findings += [
            f"adopt, but the prediction `{p.text}` (line {p.line}) is refuted"
            for p in predictions
            if p.verdict == "refuted" and p.target.endswith(".time")
        ]
        if e2e in ("slower", "no meaningful change"):
            findings.append(f"adopt, but the end-to-end verdict is {e2e!r}")
        elif e2e == "inconclusive":
            unsupported.append("the end-to-end verdict is inconclusive: more request blocks would decide it")
        elif e2e is None:
            why = end_to_end.comparison_missing if end_to_end else end_to_end_missing
            remedy = (
                "a rerun whose request samples are evidence would supply it"
                if timings_valid
                else "a run on a target whose timings are evidence would supply it"
            )
            unsupported.append(
                f"there is no end-to-end timing evidence ({why or 'the run has no application'}): {remedy}"
            )
        if r is not None and r.cross_effect_loss:
            findings.append(f"adopt, but the change costs time outside the operation ({_rest(end_to_end)})")
        if broken:
            unsupported.append(
                f"the end-to-end effect does not add up against Amdahl's bound, so it cannot be credited "
                f"to the change ({broken})"
            )
        unsupported += [
            f"operation `{op.name}` has no valid timing: {op.combined_missing}"
            for op in operations
            if op.combined is None and any(s.invalid for s in op.shapes)
        ]
    elif declared == "reject":
        kernels_faster = bool(operations) and all(
            op.combined is not None and op.combined.verdict == "faster" for op in operations
        )
        if correct and kernels_faster and e2e == "faster" and not broken:
            findings.append("reject, but the change is correct and faster for every operation and end to end")
    return DecisionCheck(declared, not findings, tuple(findings), tuple(unsupported))


def _rest(end_to_end: EndToEnd | None) -> str:
    """`the rest of the request's time ratio 1.15 [1.03, 1.28]`: the cost outside the operation."""
    decomposition = end_to_end.amdahl.decomposition if end_to_end and end_to_end.amdahl else None
    if decomposition is None:
        return "the rest of the request got slower"
    rest = decomposition.rest_ratio
    return f"the rest of the request's time ratio {estimate(rest.value, rest.low, rest.high)}"
