"""Every `predict` line against what was measured or modelled.

A prediction states a bound on a ratio (change / baseline). It is judged
against the interval of that ratio: **confirmed** when the whole interval
satisfies the bound, **refuted** when none of it does, **inconclusive** when the
interval straddles the bound: never a verdict from a point estimate whose
interval straddles. An exact value (a modelled quantity) is an interval of one
point, so it always confirms or refutes; its `basis` says "modelled" so no
reader mistakes it for a measurement. A refuted prediction is a finding, not
an error. What was not measured at all is "not evidence", and what rests on an
invalid result is "invalid", each with the reason.

What each subject is judged against:

* `<op>.time`: the ratio of weighted total times over the op's valid shapes;
* `<op>.<quantity>` (bytes, launches, ...): per shape the counted value where
  counters took one, else the modelled one, combined like time as the ratio of
  weighted totals over valid shapes and labelled counted, modelled or mixed.
  A byte model that the measurement shows impossible (bandwidth above the
  measured roof) invalidates every prediction built on it;
* `<app>.time <= amdahl`: "consistent with Amdahl", judged by
  `stats.amdahl.judge_prediction` on the reconciliation, whose premise (the
  rest of the request unchanged) is measured: a cost outside the operation or
  a shortfall refutes it; a gain outside it, numbers that do not add up, a
  straddle of the band, or a rest not shown unchanged leave it inconclusive;
* `<app>.throughput >= amdahl` (or goodput): the capacity bracket, one-sided
  (`stats.amdahl.judge_throughput`): goodput under a latency SLO may exceed
  1 / B, so only a shortfall refutes it;
* `<app>.throughput` / `<app>.goodput` against a number: the capacity interval
  both arms' goodput brackets allow.

Which predictions to judge is the caller's input, so a run can be judged
against only its own target's predictions.
"""

from __future__ import annotations

import math
from typing import Any

import attrs

from perfdsl.bundle.evaluation.end_to_end import EndToEnd
from perfdsl.bundle.evaluation.estimate import Estimate
from perfdsl.bundle.evaluation.kernels import Exclusion, OperationResult, ShapeResult
from perfdsl.bundle.evaluation.load import LoadEvaluation
from perfdsl.bundle.evaluation.verdicts import Basis, PredictionResult, PredictionVerdict
from perfdsl.evaluate.detection import detectable_ratio, detection, too_small
from perfdsl.evaluate.end_to_end import ci_containing
from perfdsl.evaluate.mechanism import preferred
from perfdsl.nodes import Name, Num, Prediction, Study
from perfdsl.stats.amdahl import judge_prediction, judge_throughput, untested_premise
from perfdsl.stats.mechanism import ShapeQuantity, combine_quantity
from perfdsl.vocabulary import AMDAHL


@attrs.frozen
class Evidence:
    """The value a prediction is judged against, with its interval and its basis."""

    value: float
    ci: tuple[float, float]
    basis: Basis
    note: str = ""
    """What the reader must know about it (shapes left out, a mix of counted and modelled)."""


class Unusable(Exception):
    """The evidence exists but may not be used: an invalid result (the message says why)."""


class NoInterval(Exception):
    """The evidence is valid but has no interval (too few block pairs): nothing can be decided."""


NO_APPLICATION = "the run has no application"
"""Why there is no end-to-end evidence, where the results name no other reason."""


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
    predictions: tuple[Prediction, ...],
    operations: tuple[OperationResult, ...],
    end_to_end: EndToEnd | None,
    load: LoadEvaluation | None,
    no_application: str,
) -> tuple[PredictionResult, ...]:
    """Judge the run target's predictions (`perfdsl.expectations`), in the order written;
    `no_application` says why there is no end-to-end evidence where `end_to_end` is None."""
    ops = {op.name: op for op in operations}
    return tuple(
        _detected(p, _one(study, p, ops, end_to_end, load, no_application), ops, end_to_end)
        for p in predictions
    )


def _detected(
    prediction: Prediction,
    result: PredictionResult,
    ops: dict[str, OperationResult],
    end_to_end: EndToEnd | None,
) -> PredictionResult:
    """The result with what the run could detect, and a note when the predicted effect is smaller."""
    found = detection(prediction.subject.id, prediction.quantity.id, ops, end_to_end)
    bound = result.bound
    if found is None or bound is None or result.verdict in ("invalid", "not evidence"):
        return result
    note = too_small(found, bound)
    return attrs.evolve(
        result,
        detectable=detectable_ratio(found, bound),
        message=result.message if note is None else f"{result.message} ({note})",
    )


def _one(
    study: Study,
    prediction: Prediction,
    ops: dict[str, OperationResult],
    end_to_end: EndToEnd | None,
    load: LoadEvaluation | None,
    no_application: str,
) -> PredictionResult:
    subject, quantity = prediction.subject.id, prediction.quantity.id
    base = {
        "text": " ".join(study.source.snippet(prediction.span).split()),
        "line": study.source.position(prediction.span.start).line,
        "target": prediction.target,
        "comparator": prediction.comparator,
    }
    bound = prediction.bound
    try:
        if isinstance(bound, Name) and bound.id == AMDAHL:
            return _amdahl(base, quantity, end_to_end, load, no_application)
        if not isinstance(bound, Num):
            return _none(
                base, None, "unreadable", "not evidence", "the bound is neither a number nor `amdahl`"
            )
        if subject in ops and not ops[subject].correctness.passed:
            raise Unusable(
                f"operation `{subject}` fails its correctness check: nothing about a change that "
                "computes the wrong answer is confirmed or refuted"
            )
        if subject in ops:
            evidence, missing = _operation_evidence(ops[subject], quantity)
        else:
            evidence, missing = _application_evidence(quantity, end_to_end, load, no_application)
    except Unusable as invalid:
        stated = bound.quantity.base if isinstance(bound, Num) else None
        source = "stated" if isinstance(bound, Num) else AMDAHL
        return _none(base, stated, source, "invalid", str(invalid))
    except NoInterval as few:
        stated = bound.quantity.base if isinstance(bound, Num) else None
        source = "stated" if isinstance(bound, Num) else AMDAHL
        return _none(base, stated, source, "inconclusive", str(few))
    limit = bound.quantity.base
    if evidence is None:
        return _none(base, limit, "stated", "not evidence", missing or "nothing to judge it against")
    verdict = judge(*evidence.ci, prediction.comparator, limit)
    lo, hi = evidence.ci
    shown = f"{evidence.value:.4g}" if lo == hi else f"{evidence.value:.4g} [{lo:.4g}, {_end(hi)}]"
    message = (
        f"{evidence.basis} {prediction.target} ratio {shown} against "
        f"{prediction.comparator} {limit:.4g}: {verdict}{evidence.note}"
    )
    return PredictionResult(
        **base,
        bound=limit,
        bound_source="stated",
        value=evidence.value,
        ci=evidence.ci,
        basis=evidence.basis,
        verdict=verdict,
        message=message,
    )


def _none(
    base: dict[str, Any], bound: float | None, source: str, verdict: PredictionVerdict, why: str
) -> PredictionResult:
    return PredictionResult(
        **base,
        bound=bound,
        bound_source=source,
        value=None,
        ci=None,
        basis="none",
        verdict=verdict,
        message=why,
    )


def _end(x: float) -> str:
    return "inf" if math.isinf(x) else f"{x:.4g}"


_AMDAHL_SOURCE = "amdahl (B = (1 - f) + f r from measured f and r)"


def _amdahl(
    base: dict[str, Any],
    quantity: str,
    end_to_end: EndToEnd | None,
    load: LoadEvaluation | None,
    no_application: str,
) -> PredictionResult:
    """`<app>.time <= amdahl` or `<app>.throughput >= amdahl`: consistent with Amdahl's bound?"""
    amdahl = end_to_end.amdahl if end_to_end else None
    if amdahl is None:
        reason = end_to_end.amdahl_missing if end_to_end else no_application
        return _none(base, None, AMDAHL, "not evidence", f"no Amdahl bound: {reason}")
    comparator, bound = base["comparator"], amdahl.bound_time_ratio
    if quantity == "time" and comparator in ("<=", "<"):
        r = amdahl.reconciliation
        c = end_to_end.comparison if end_to_end else None
        if r is None and c is not None and c.interval_missing:
            return _none(base, bound, _AMDAHL_SOURCE, "inconclusive", amdahl.reconciliation_missing or "")
        if r is None:
            return _none(base, bound, _AMDAHL_SOURCE, "not evidence", amdahl.reconciliation_missing or "")
        measured, shown_as, note = r.measured, "time", ""
    elif quantity in ("throughput", "goodput") and comparator in (">=", ">"):
        interval = load.capacity_range if load else None
        if load is None or load.capacity is None or interval is None:
            why = load.capacity_missing if load else "no load test in the bundle"
            return _none(base, 1.0 / bound, _AMDAHL_SOURCE, "not evidence", why or "")
        ratio = min(max(load.capacity.change, interval.low), interval.high)
        throughput = Estimate(ratio, interval.low, interval.high, 1.0)
        verdict, said = judge_throughput(amdahl.f, amdahl.op_ratio, throughput, theta=amdahl.theta)
        note = "" if interval.confirmed else " (the goodputs are unconfirmed single passes)"
        return PredictionResult(
            **base,
            bound=1.0 / bound,
            bound_source=_AMDAHL_SOURCE,
            value=throughput.value,
            ci=(throughput.low, throughput.high),
            basis="measured",
            verdict=verdict,
            message=f"{said}: {verdict}{note}",
        )
    else:
        return _none(
            base,
            bound,
            _AMDAHL_SOURCE,
            "not evidence",
            "`amdahl` bounds a time ratio from above (`time ratio <= amdahl`) or a throughput "
            "ratio from below (`throughput ratio >= amdahl`)",
        )
    verdict = judge_prediction(r)
    untested = untested_premise(r) if r.status == "consistent" else None
    if verdict == "inconclusive" and untested:
        note += f" ({untested})"
    message = f"{shown_as}: {r.message}: {verdict}{note}"
    return PredictionResult(
        **base,
        bound=bound,
        bound_source=_AMDAHL_SOURCE,
        value=measured.value,
        ci=(measured.low, measured.high),
        basis="measured",
        verdict=verdict,
        message=message,
    )


def _operation_evidence(op: OperationResult, quantity: str) -> tuple[Evidence | None, str | None]:
    if quantity == "time":
        c = op.combined
        if c is None:
            measured = [s for s in op.shapes if s.comparison is not None]
            if measured and all(s.invalid for s in measured):
                raise Unusable(op.combined_missing or "every shape is invalid")
            if any(s.comparison.interval_missing for s in measured if s.comparison and not s.invalid):
                raise NoInterval(f"no interval to judge: {op.combined_missing}")
            return None, op.combined_missing
        lo, hi = min(c.ci_low, c.ratio), max(c.ci_high, c.ratio)
        return Evidence(c.ratio, (lo, hi), "measured", _excluded_note(c.excluded)), None
    if quantity == "bytes":
        # Modelled bytes over a measured time above the measured roof: the model, not the kernel, is wrong.
        impossible = [
            f"{s.label} {b.arm} at {b.roof_fraction:.0%} of it" if b.roof_fraction else f"{s.label} {b.arm}"
            for s in op.shapes
            for b in s.mechanism.bandwidth
            if b.invalid and not _counted(s, quantity)
        ]
        if impossible:
            raise Unusable(
                "the byte model is not the traffic that was timed: modelled bytes over the measured time "
                f"exceed the measured roof ({'; '.join(impossible)}), so either a cache served some of "
                "them (a pass re-reading data it still holds) or the model is wrong (PQ006)"
            )
    per_shape = []
    for s in (s for s in op.shapes if not s.invalid):
        chosen = preferred(s.mechanism.quantities, quantity)
        if chosen is None or chosen.ratio is None:
            return None, f"`{quantity}` is neither modelled nor counted for shape {s.label} of `{op.name}`"
        per_shape.append(ShapeQuantity(s.weight, chosen.baseline, chosen.change, chosen.label))
    if not per_shape:
        raise Unusable(f"every shape of `{op.name}` is invalid")
    combined = combine_quantity(per_shape)
    excluded = tuple(Exclusion(s.label, s.invalid) for s in op.shapes if s.invalid)
    note = _excluded_note(excluded)
    if combined.label == "mixed":
        note += " (mixed: counted where counters ran, modelled elsewhere)"
    return Evidence(combined.ratio, (combined.ratio, combined.ratio), combined.label, note), None


def _counted(shape: ShapeResult, quantity: str) -> bool:
    return any(q.name == quantity and q.label == "counted" for q in shape.mechanism.quantities)


def _excluded_note(excluded: tuple[Exclusion, ...]) -> str:
    if not excluded:
        return ""
    return " (excluded as invalid: " + "; ".join(f"{e.shape}: {e.reason}" for e in excluded) + ")"


def _application_evidence(
    quantity: str, end_to_end: EndToEnd | None, load: LoadEvaluation | None, no_application: str
) -> tuple[Evidence | None, str | None]:
    if quantity == "time":
        if end_to_end is None or end_to_end.comparison is None:
            return None, end_to_end.comparison_missing if end_to_end else no_application
        c = end_to_end.comparison
        if c.interval_missing:
            raise NoInterval(f"no interval to judge: {c.interval_missing}")
        return Evidence(c.ratio, ci_containing(c), "measured"), None
    if quantity in ("throughput", "goodput"):
        interval = load.capacity_range if load else None
        if load is None or load.capacity is None or interval is None:
            return None, load.capacity_missing if load else "no load test in the bundle"
        ratio = min(max(load.capacity.change, interval.low), interval.high)
        note = "" if interval.confirmed else " (the goodputs are unconfirmed single passes)"
        return Evidence(ratio, (interval.low, interval.high), "measured", note), None
    return None, f"`{quantity}` is not a quantity an application is measured by"
