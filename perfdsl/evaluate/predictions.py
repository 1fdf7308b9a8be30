"""Every `predict` line against what was measured or modelled.

A prediction states a bound on a ratio (change / baseline). It is judged
against the interval of that ratio: **confirmed** when the whole interval
satisfies the bound, **refuted** when none of it does, **inconclusive** when the
interval straddles the bound. An exact value (a modelled quantity, a goodput
ratio) is an interval of one point, so it always confirms or refutes; its
`basis` says "modelled" so no reader mistakes it for a measurement. A refuted
prediction is a finding, not an error. What was not measured at all is
"not evidence", with the reason.

What each subject is judged against:

* `<op>.time`: the workload-weighted kernel time ratio and its interval;
* `<op>.<quantity>` (bytes, launches, ...): the counted ratio at the shapes
  counters were taken at, where any were, else the modelled one; weighted over
  shapes like time (geometric mean of ratios, workload weights);
* `<app>.time`: the end-to-end request-time ratio; the bound `amdahl` is the
  time ratio Amdahl's bound allows, 1 / bound, from the measured f and s;
* `<app>.throughput` / `<app>.goodput`: the capacity change (goodput ratio).
"""

from __future__ import annotations

import math
from typing import Literal

import attrs

from perfdsl.evaluate.end_to_end import EndToEnd, ci_containing
from perfdsl.evaluate.kernels import OperationResult
from perfdsl.evaluate.load_curve import LoadEvaluation
from perfdsl.nodes import Name, Num, Prediction, Study
from perfdsl.vocabulary import AMDAHL

PredictionVerdict = Literal["confirmed", "refuted", "inconclusive", "not evidence"]
Basis = Literal["measured", "modelled", "counted", "none"]


@attrs.frozen
class PredictionResult:
    """One `predict` line, its verdict and the numbers behind it."""

    text: str
    line: int
    target: str
    comparator: str
    bound: float | None
    bound_source: str
    """"stated" or "amdahl (1 / bound from measured f and s)"."""
    value: float | None
    ci: tuple[float, float] | None
    basis: Basis
    verdict: PredictionVerdict
    message: str


@attrs.frozen
class Evidence:
    """The value a prediction is judged against, with its interval and its basis."""

    value: float
    ci: tuple[float, float]
    basis: Basis


def judge(low: float, high: float, comparator: str, bound: float) -> PredictionVerdict:
    """Confirmed if all of [low, high] satisfies `comparator bound`, refuted if none does."""
    holds = {
        "<=": lambda x: x <= bound,
        "<": lambda x: x < bound,
        ">=": lambda x: x >= bound,
        ">": lambda x: x > bound,
    }.get(comparator)
    if holds is None:
        return "inconclusive"
    if holds(low) and holds(high):
        return "confirmed"
    if not holds(low) and not holds(high):
        return "refuted"
    return "inconclusive"


def evaluate_predictions(
    study: Study,
    operations: tuple[OperationResult, ...],
    end_to_end: EndToEnd | None,
    load: LoadEvaluation | None,
    predictions: tuple[Prediction, ...],
) -> tuple[PredictionResult, ...]:
    """Judge the run target's predictions (`perfdsl.expectations`), in the order written."""
    ops = {op.name: op for op in operations}
    return tuple(_one(study, p, ops, end_to_end, load) for p in predictions)


def _one(
    study: Study,
    prediction: Prediction,
    ops: dict[str, OperationResult],
    end_to_end: EndToEnd | None,
    load: LoadEvaluation | None,
) -> PredictionResult:
    subject, quantity = prediction.subject.id, prediction.quantity.id
    bound, bound_source, bound_missing = _bound(prediction, end_to_end)
    if subject in ops:
        evidence, missing = _operation_evidence(ops[subject], quantity)
    else:
        evidence, missing = _application_evidence(quantity, end_to_end, load)
    missing = missing or bound_missing
    base = {
        "text": " ".join(study.source.snippet(prediction.span).split()),
        "line": study.source.position(prediction.span.start).line,
        "target": prediction.target,
        "comparator": prediction.comparator,
        "bound": bound,
        "bound_source": bound_source,
    }
    if evidence is None or bound is None:
        return PredictionResult(
            **base,
            value=None,
            ci=None,
            basis="none",
            verdict="not evidence",
            message=missing or "nothing to judge it against",
        )
    verdict = judge(*evidence.ci, prediction.comparator, bound)
    lo, hi = evidence.ci
    shown = f"{evidence.value:.4g}" if lo == hi else f"{evidence.value:.4g} [{lo:.4g}, {hi:.4g}]"
    message = (
        f"{evidence.basis} {prediction.target} ratio {shown} against "
        f"{prediction.comparator} {bound:.4g}: {verdict}"
    )
    return PredictionResult(
        **base, value=evidence.value, ci=evidence.ci, basis=evidence.basis, verdict=verdict, message=message
    )


def _bound(prediction: Prediction, end_to_end: EndToEnd | None) -> tuple[float | None, str, str | None]:
    bound = prediction.bound
    if isinstance(bound, Num):
        return bound.quantity.base, "stated", None
    if isinstance(bound, Name) and bound.id == AMDAHL:
        if end_to_end is None or end_to_end.amdahl is None:
            reason = end_to_end.amdahl_missing if end_to_end else "the run has no application"
            return None, AMDAHL, f"no Amdahl bound: {reason}"
        return end_to_end.amdahl.bound_time_ratio, "amdahl (1 / bound from measured f and s)", None
    return None, "unreadable", "the bound is neither a number nor `amdahl`"


def _operation_evidence(op: OperationResult, quantity: str) -> tuple[Evidence | None, str | None]:
    if quantity == "time":
        c = op.combined
        if c is None:
            return None, op.combined_missing
        lo, hi = min(c.ci_low, c.ratio), max(c.ci_high, c.ratio)
        return Evidence(c.ratio, (lo, hi), "measured"), None
    counted = [
        (s.weight, q)
        for s in op.shapes
        for q in s.mechanism.quantities
        if q.name == quantity and q.label == "counted" and q.ratio
    ]
    modelled = [
        (s.weight, q)
        for s in op.shapes
        for q in s.mechanism.quantities
        if q.name == quantity and q.label == "modelled" and q.ratio
    ]
    # Counters measure the real thing, so they decide where they exist (ncu counts one shape).
    found, basis = (counted, "counted") if counted else (modelled, "modelled")
    if not found or (basis == "modelled" and len(found) != len(op.shapes)):
        return None, f"`{quantity}` is neither modelled nor counted for every shape of `{op.name}`"
    total = sum(w for w, _ in found) or 1.0
    value = math.exp(sum(w * math.log(q.ratio) for w, q in found if q.ratio) / total)
    return Evidence(value, (value, value), basis), None


def _application_evidence(
    quantity: str, end_to_end: EndToEnd | None, load: LoadEvaluation | None
) -> tuple[Evidence | None, str | None]:
    if quantity == "time":
        if end_to_end is None or end_to_end.comparison is None:
            return None, end_to_end.comparison_missing if end_to_end else "the run has no application"
        c = end_to_end.comparison
        return Evidence(c.ratio, ci_containing(c), "measured"), None
    if quantity in ("throughput", "goodput"):
        interval = load.capacity_interval if load else None
        if load is None or load.capacity is None or interval is None:
            return None, load.capacity_missing if load else "no load test in the bundle"
        # A goodput that is only a lower bound makes the ratio a one-sided interval.
        return Evidence(load.capacity.change, interval, "measured"), None
    return None, f"`{quantity}` is not a quantity an application is measured by"
