"""`evaluate(bundle) -> Evaluation`: the whole evaluation, and evaluation.json.

A pure function of the bundle's files: no GPU, no clock, no randomness but the
seeded bootstrap, so an archived bundle evaluates to byte-identical JSON on any
machine. Floats are written to 12 significant digits (a last-bit difference in
a platform's `log` must not change the file) and non-finite values as null.

Value uses the application's measured end-to-end effect, never a kernel's, and
only an established one (`stats.value`): none from an inconclusive effect, one
below the threshold, or one whose numbers do not add up against Amdahl's bound; capped at
what Amdahl allows at the study's declared production share, which the value
names:

* `per_unit`: frequency x saved time per application run, the time saved per
  the frequency's unit of work (`80 per token`: 80 runs of the application a token);
* `fleet`: the saved share of the resource the study's scale spends on the
  application (`12000 gpu_hours per day` x (1 - end-to-end ratio)), computed
  with frequency 1 / baseline time (runs per second of application time).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from perfdsl.bundle import versions
from perfdsl.bundle.application import ApplicationRecord
from perfdsl.bundle.evaluation.end_to_end import EndToEnd
from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.load import CapacityInterval, LoadEvaluation
from perfdsl.bundle.evaluation.value import Value, ValueResult
from perfdsl.bundle.files import dumps, replace_file
from perfdsl.bundle.machine import read_machine_state
from perfdsl.bundle.opened import Bundle
from perfdsl.bundle.results import RESULTS
from perfdsl.bundle.sampling import Block
from perfdsl.evaluate.correctness import summarize_model_level
from perfdsl.evaluate.decision import check_decision
from perfdsl.evaluate.end_to_end import evaluate_end_to_end, measured_effect
from perfdsl.evaluate.family import adjust, adjust_limits, apply, apply_limits
from perfdsl.evaluate.inputs import BundleInputs, EvaluateError, inputs_of
from perfdsl.evaluate.kernels import evaluate_operations
from perfdsl.evaluate.load_curve import evaluate_load
from perfdsl.evaluate.machine import summarize_machine
from perfdsl.evaluate.predictions import NO_APPLICATION, evaluate_predictions
from perfdsl.evaluate.quality import summarize_contention
from perfdsl.evaluate.registration import check_registration
from perfdsl.expectations import expectations
from perfdsl.nodes import Study
from perfdsl.stats.amdahl import SHARE_TOLERANCE, share_percent
from perfdsl.stats.capacity import service_mismatch
from perfdsl.stats.value import value


def evaluate(bundle: Bundle, *, study: Study | None = None) -> Evaluation:
    """Evaluate an opened bundle: a pure function of it, whoever evaluates and with which study
    file at hand (a current study's `predict` section is judged beside the evaluation, by
    `registration.check_current`, never into it).

    `study` is the bundle's study when the caller has parsed it already (from the same text).
    EvaluateError (one line) when the bundle cannot be: a record read as it is used (a
    shape's timing, the application's blocks) or a sample or probe file it names that is
    missing or garbled is the bundle's fault, named with its file (and line).
    """
    inputs = inputs_of(bundle, study)
    try:
        return _evaluated(inputs)
    except versions.BundleFormatError as error:
        raise EvaluateError(str(error)) from None
    except versions.RECORD_ERRORS as error:
        if not versions.raised_reading_a_record(error):
            raise
        raise EvaluateError(str(versions.unreadable_record(inputs.path / RESULTS, error))) from None
    except OSError as error:
        where = error.filename or inputs.path
        raise EvaluateError(f"{where}: unreadable bundle file: {error.strerror or error}") from None


def _evaluated(inputs: BundleInputs) -> Evaluation:
    results = inputs.results
    level, theta = inputs.plan.timing.confidence, inputs.plan.timing.threshold
    operations = evaluate_operations(inputs)
    end_to_end = evaluate_end_to_end(inputs, operations, level, theta)
    family = adjust(operations, end_to_end, level)
    operations, end_to_end = apply(family, operations, end_to_end)
    limit_family = adjust_limits(operations, level)
    operations = apply_limits(limit_family, operations)
    load, load_missing = _load(inputs)
    load = _check_service(load, end_to_end)
    expected = expectations(inputs.study, results.target)
    no_application = results.application_missing or NO_APPLICATION
    predictions = evaluate_predictions(
        inputs.study, expected.predictions, operations, end_to_end, load, no_application
    )
    model_level = summarize_model_level(results.application)
    worth, worth_missing = _value(inputs, end_to_end, load, no_application)
    valid = results.timings_valid
    machine = summarize_machine(
        read_machine_state(inputs.path),
        kernel_verdicts=valid
        and results.target == "cpu"
        and any(s.usable for op in operations for s in op.shapes),
        end_to_end_verdict=end_to_end is not None and end_to_end.comparison is not None,
        goodputs=load is not None and bool(load.arms),
    )
    return Evaluation(
        schema=versions.EVALUATION,
        study=results.study or inputs.study.name.id,
        run_id=results.run_id or inputs.path.name,
        target=results.target,
        timings_valid=valid,
        timings_note=None
        if valid
        else (f"timings on `{results.target}` are not evidence: no timing result has a verdict"),
        quick=results.quick,
        level=level,
        threshold=theta,
        operations=operations,
        model_level=model_level,
        end_to_end=end_to_end,
        end_to_end_missing=None if end_to_end else no_application,
        load=load,
        load_missing=load_missing,
        expectations_target=expected.target,
        expectations_missing=expected.missing,
        predictions=predictions,
        value=worth,
        value_missing=worth_missing,
        decision=check_decision(
            inputs.study.decision.id if inputs.study.decision else None,
            operations,
            model_level,
            end_to_end,
            predictions,
            end_to_end_missing=None if end_to_end else results.application_missing,
            timings_valid=results.timings_valid,
        ),
        registration=check_registration(inputs.registration, inputs.study),
        quality=tuple(
            [f for op in operations for s in op.shapes for f in s.findings]
            + list(end_to_end.findings if end_to_end else ())
            + list(machine.findings)
        ),
        family=family,
        limit_family=limit_family,
        contended=summarize_contention(
            [
                (f"{op.name} {s.label}", shape.blocks, s.comparison is not None)
                for op, record in zip(operations, results.operations, strict=True)
                for s, shape in zip(op.shapes, [r for r in record.shapes if not r.limit], strict=True)
            ]
            + _application_blocks(results.application, end_to_end)
        ),
        machine=machine,
    )


def _application_blocks(
    app: ApplicationRecord | None, end_to_end: EndToEnd | None
) -> list[tuple[str, tuple[Block, ...], bool]]:
    """The application's request blocks, judged for contention like a kernel shape's."""
    if app is None or end_to_end is None:
        return []
    return [(app.name, app.blocks, end_to_end.comparison is not None)]


def _check_service(load: LoadEvaluation | None, end_to_end: EndToEnd | None) -> LoadEvaluation | None:
    """The capacity bracket set against the request time ratio it should follow."""
    c = end_to_end.comparison if end_to_end else None
    service_ns = end_to_end.baseline_median_ns if end_to_end else None
    if load is None or load.capacity_range is None or c is None or c.interval is None or not service_ns:
        return load
    found = service_mismatch(load.capacity_range, service_ns * 1e-9, c.interval, load.slo_seconds)
    return attrs.evolve(load, service_mismatch=found)


def _load(inputs: BundleInputs) -> tuple[LoadEvaluation | None, str | None]:
    app = inputs.results.application
    if app is None or app.load is None:
        why = app.load_missing if app else inputs.results.application_missing
        return None, why or "the run has no load test"
    if not inputs.results.timings_valid:
        return None, f"load timings on `{inputs.results.target}` are not evidence"
    if app.operation_never_called:
        return None, app.operation_never_called
    if app.load.slo_seconds is None:
        return None, "the study declares no SLO to judge the load test by"
    return evaluate_load(inputs, app.load), None


def _value(
    inputs: BundleInputs, end_to_end: EndToEnd | None, load: LoadEvaluation | None, no_application: str
) -> tuple[ValueResult | None, str | None]:
    declared = inputs.study.value
    if declared is None or declared.frequency is None or declared.scale is None:
        return None, "the study states no frequency and scale"
    if end_to_end is None or end_to_end.comparison is None or not end_to_end.baseline_median_ns:
        reason = end_to_end.comparison_missing if end_to_end else no_application
        return None, f"no measured end-to-end effect: {reason}"
    c = end_to_end.comparison
    amdahl = end_to_end.amdahl
    reconciliation = amdahl.reconciliation if amdahl else None
    share = amdahl.share_check.declared if amdahl and amdahl.share_check else None
    baseline_s = end_to_end.baseline_median_ns * 1e-9
    frequency, scale = declared.frequency.quantity, declared.scale.quantity
    frequency_unit = frequency.unit.text if frequency.unit else ""
    scale_unit = scale.unit.text if scale.unit else ""

    def worth(per_second: float, factor: float, unit: str) -> Value:
        if c.interval_missing:
            # Too few pairs: no interval to multiply a fleet by (`stats.paired.MIN_PAIRS`).
            return Value(
                False, f"the end-to-end effect is inconclusive: {c.interval_missing}", None, None, unit, False
            )
        return value(
            measured_effect(c),
            c.verdict,
            baseline_s,
            frequency=per_second,
            scale=factor,
            unit=unit,
            reconciliation=reconciliation,
            production_share=share,
            op_ratio=reconciliation.op_ratio if reconciliation else None,
            share_check=amdahl.share_check if amdahl else None,
            decomposition=amdahl.decomposition if amdahl else None,
        )

    capacity, capacity_missing = _capacity(end_to_end, load)
    return ValueResult(
        basis=end_to_end.application,
        frequency=frequency.value,
        frequency_unit=frequency_unit,
        scale=scale.value,
        scale_unit=scale_unit,
        per_unit=worth(frequency.value, 1.0, f"s {frequency_unit}".strip()),
        fleet=worth(1.0 / baseline_s, scale.value, scale_unit),
        share_basis=_share_basis(end_to_end, _declares_share(inputs, end_to_end.application)),
        capacity=capacity,
        capacity_missing=capacity_missing,
    ), None


def _declares_share(inputs: BundleInputs, application: str) -> bool:
    declared = inputs.study.application(application)
    return declared is not None and declared.share is not None


def _share_basis(end_to_end: EndToEnd, declares_share: bool) -> str:
    """Which share the value rests on, said next to it. A share the study declares goes unjudged
    (and caps nothing) where a quick run shrank the application: a new user's report said "the
    study declares no share" of a study that declared 40 %."""
    amdahl = end_to_end.amdahl
    if amdahl is None:
        return f"no share: Amdahl's check was not possible ({end_to_end.amdahl_missing}), so no cap applies"
    f = amdahl.f
    # Four figures, as the share check words it: "50.0%" rounded from 50.009 % would read as
    # holding a declared 50 % that the check found just outside.
    measured = (
        f"the measured f is {share_percent(f.value)} [{share_percent(f.low)}, {share_percent(f.high)}] "
        "in the test application"
    )
    check = amdahl.share_check
    if check is None and declares_share:
        return (
            "the measured effect of the test application, uncapped: the declared share is not judged "
            f"where a quick run shrank the application's shape, which moves its split; {measured}"
        )
    if check is None:
        return (
            f"the measured effect of the test application, uncapped (the study declares no share); {measured}"
        )
    inside = f.low <= check.declared <= f.high
    if not check.compatible:
        verdict = "which CONTRADICTS the declared share"
    elif inside:
        verdict = "compatible with it"
    else:
        # A word the tolerance decided says so: 55 % beside a measured [58.7, 59.1] reads as a
        # contradiction unless the reader is told what widened the interval.
        verdict = (
            f"compatible with it only through the {SHARE_TOLERANCE:.0%} rounding tolerance a one-figure "
            "share carries (perfdsl's, not a study setting)"
        )
    return (
        f"the test application's measured effect, capped by Amdahl at the declared production share "
        f"{share_percent(check.declared)}; {measured}, {verdict}"
    )


def _capacity(
    end_to_end: EndToEnd, load: LoadEvaluation | None
) -> tuple[CapacityInterval | None, str | None]:
    """The capacity bracket, unless the end-to-end effect it would be attributed to does not add up.

    A cross-effect keeps it: the arms differ only by the change, so what the change
    does to the rest of the request is the change's too."""
    if load is None or load.capacity_range is None:
        return None, (load.capacity_missing if load else None) or "no load test"
    amdahl = end_to_end.amdahl
    if amdahl is not None and amdahl.contradicted and amdahl.reconciliation is not None:
        return None, (
            "not attributed to the change: the end-to-end effect does not add up against Amdahl's "
            f"bound ({amdahl.reconciliation.message})"
        )
    return load.capacity_range, None


def write_evaluation(bundle: Bundle, evaluation: Evaluation) -> Path:
    """Write evaluation.json into the opened bundle (sorted keys) and update its manifest.

    `replace_file` checks the bundle again as it writes: the evaluation took a while, and a
    file changed since the bundle was opened must not be blessed by a new manifest.
    """
    data = dumps(evaluation.to_json()).encode("utf-8")
    return replace_file(bundle.path, versions.EVALUATION_FILE, data)
