"""Kernel timing per operation and shape: comparisons, the weighted effect, quality.

For every timed shape: each arm's block medians from its samples CSV, the
paired comparison of baseline and change over adjacent blocks (the sampler
ran them ABBA) at the study's confidence and threshold, measurement-quality
findings for every arm, and the mechanism evidence. Over shapes: the ratio of
weighted total times and the shapes that regress.

A shape timed only because a `limit regression` names it (`ShapeRecord.limit`)
is evaluated the same way but kept apart, in `OperationResult.limits`: it has
no production weight, so it is in neither the combination nor the shapes that
regress, and a slower verdict there confirms the study's limit rather than
counting against the change.

A comparison is evidence only when every sample was valid and the target's
timings are evidence at all: the simulator's durations, or one invalid sample,
give "not evidence" and never a verdict. A comparison that is evidence but
carries an error-severity quality finding (above the measured roof,
throttled, ...), or whose operation fails its correctness check, is
"invalid": it is shown, with its reason, and left out of every conclusion
(the combination, s, predictions, mechanism, value and decision).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs
import numpy as np

from perfdsl.bundle.arms import ARMS, EMPTY_ARM, ROOF_ARMS
from perfdsl.bundle.evaluation.kernels import ArmContention, ArmSummary, OperationResult, ShapeResult
from perfdsl.bundle.evaluation.mechanism import Bandwidth, ShapeMechanism
from perfdsl.bundle.results import WORKER_PHASE, OperationRecord, ShapeRecord
from perfdsl.bundle.sampling import Block, SamplerFailure
from perfdsl.bundle.stopping import DECIDED
from perfdsl.codes import CODES
from perfdsl.evaluate import quality
from perfdsl.evaluate.combination import ShapeInput, combine
from perfdsl.evaluate.compare import compare_blocks
from perfdsl.evaluate.contention import unresolved_blocks
from perfdsl.evaluate.correctness import summarize_correctness
from perfdsl.evaluate.inputs import ArmSamples, BundleInputs, read_samples
from perfdsl.evaluate.mechanism import bandwidths, explain_change, preferred, quantities, static_counts
from perfdsl.evaluate.sequential import agrees, decided_early, judged, pairs_the_cap_lacked, recompute
from perfdsl.vocabulary import MECHANISM_MEASURES


def evaluate_operations(inputs: BundleInputs) -> tuple[OperationResult, ...]:
    """Every operation in results.json, in order."""
    level, theta = _settings(inputs)
    return tuple(_operation(inputs, op, level, theta) for op in inputs.results.operations)


def _settings(inputs: BundleInputs) -> tuple[float, float]:
    return inputs.plan.timing.confidence, inputs.plan.timing.threshold


def _operation(inputs: BundleInputs, op: OperationRecord, level: float, theta: float) -> OperationResult:
    change = inputs.study.change
    mechanism = change.mechanism.id if change and change.mechanism else None
    correctness = summarize_correctness(op.correctness)
    wrong = None if correctness.passed else "the operation fails its correctness check"
    timed = [_shape(inputs, op.name, shape, level, theta, mechanism, wrong) for shape in op.shapes]
    workload = [(s, given) for (s, given), record in zip(timed, op.shapes, strict=True) if not record.limit]
    shapes = tuple(s for s, _ in workload)
    limits = tuple(s for (s, _), record in zip(timed, op.shapes, strict=True) if record.limit)
    combined, missing = combine([given for _, given in workload], level)
    return OperationResult(
        name=op.name,
        baseline=op.baseline,
        change=op.change,
        shapes=shapes,
        combined=combined,
        combined_missing=missing,
        regressions=tuple(s.label for s in shapes if s.usable and s.usable.verdict == "slower"),
        correctness=correctness,
        static={arm: static_counts(inputs.results.static, op.variants.get(arm, "")) for arm in ARMS},
        limits=limits,
    )


def _shape(
    inputs: BundleInputs,
    operation: str,
    shape: ShapeRecord,
    level: float,
    theta: float,
    mechanism: str | None,
    wrong: str | None,
) -> tuple[ShapeResult, ShapeInput]:
    """The shape's result, and the shape as the combination over shapes reads it."""
    found = quantities(shape)
    samples = read_samples(inputs, shape.samples) if shape.samples else {}
    arms = tuple(_summary(arm, samples[arm]) for arm in (*ARMS, *ROOF_ARMS) if arm in samples)
    roof, roof_missing, achieved, roofs = bandwidths(found, {a.arm: a.block_medians_ns for a in arms}, shape)
    comparison, pairs, missing = None, None, _why_not_evidence(inputs, shape, samples)
    if missing is None:
        comparison, pairs = compare_blocks(
            samples["baseline"].block_medians_ns,
            samples["baseline"].block_indices,
            samples["change"].block_medians_ns,
            samples["change"].block_indices,
            level=level,
            min_effect=theta,
        )
    planned = next((op for op in inputs.plan.operations if op.name == operation), None)
    rule = inputs.plan.timing.stopping_for(planned.stop_edges if planned else ())
    stop = recompute(samples, rule) if rule is not None else None
    if comparison is not None and stop is not None:
        comparison = judged(comparison, stop)
    quantity_name = MECHANISM_MEASURES.get(mechanism or "")
    subject = f"{operation} {shape.label}"
    findings = _findings(inputs, samples, shape, achieved, operation) if samples else ()
    if stop is not None and stop.reason == DECIDED:
        # Few blocks are the rule's choice, and its interval already pays for them.
        findings = decided_early(findings, subject)
    invalid = invalid_reason(findings, wrong, subject) if comparison is not None else None
    achieved = tuple(attrs.evolve(a, invalid=_above_roof(findings, f"{subject} {a.arm}")) for a in achieved)
    mech = ShapeMechanism(
        quantities=found,
        counters_missing=None
        if shape.counters
        else (shape.counters_missing or "the run recorded no counters"),
        roof_bytes_per_s=roof,
        roof_missing=roof_missing,
        bandwidth=achieved,
        roofs=roofs,
        explanation=explain_change(
            comparison, invalid, preferred(found, quantity_name), quantity_name, achieved
        ),
    )
    result = ShapeResult(
        label=shape.label,
        sizes=dict(shape.sizes),
        weight=shape.weight,
        evidence=comparison is not None,
        missing=missing,
        arms=arms,
        comparison=comparison,
        invalid=invalid,
        findings=findings,
        mechanism=mech,
        stop=stop,
        stop_agrees=agrees(stop, shape.stop) if stop is not None or shape.stop is not None else None,
        stop_pairs_needed=pairs_the_cap_lacked(stop) if stop is not None else None,
        contention=tuple(
            ArmContention(
                arm, len(judged), sum(flag for _, flag in judged), unresolved_blocks([c for c, _ in judged])
            )
            for arm, judged in quality.block_contention(shape.blocks).items()
        ),
    )
    return result, ShapeInput(result.label, result.weight, comparison, missing, invalid, pairs, stop)


def invalid_reason(findings: tuple[quality.Finding, ...], wrong: str | None, subject: str = "") -> str | None:
    """Why a measured comparison is invalid: a failed correctness check or an error-severity finding.

    Severity, not a list of codes, decides, so a new error code in the registry
    invalidates its results without a change here. The reason is one clause per
    code, naming the arms it hit (`PQ006 achieved bandwidth above the measured
    roof: baseline, change`); each finding's numbers stay in the quality list.
    """
    if wrong:
        return wrong
    arms: dict[str, list[str]] = {}
    for f in findings:
        if f.severity == "error":
            arms.setdefault(f.code, []).append(f.subject.removeprefix(subject).strip() or f.subject)
    if not arms:
        return None
    return "; ".join(
        f"{code} {CODES[code].title if code in CODES else 'error'}: {', '.join(where)}"
        for code, where in arms.items()
    )


def _above_roof(findings: tuple[quality.Finding, ...], subject: str) -> str | None:
    """The PQ006 message for this arm, if its bandwidth is above the measured roof."""
    return next(
        (f.message for f in findings if f.code == quality.PQ.ABOVE_ROOF and f.subject == subject), None
    )


def _summary(arm: str, samples: ArmSamples) -> ArmSummary:
    medians = samples.block_medians_ns
    return ArmSummary(
        arm=arm,
        blocks=int(medians.size),
        samples=int(samples.durations_ns.size),
        invalid=samples.invalid,
        median_ns=float(np.median(medians)),
        block_medians_ns=tuple(float(m) for m in medians),
    )


def _why_not_evidence(
    inputs: BundleInputs, shape: ShapeRecord, samples: Mapping[str, ArmSamples]
) -> str | None:
    reason = why_not_evidence(
        inputs.results.timings_valid,
        inputs.results.target,
        shape.samples_missing or "not timed",
        samples,
    )
    if reason is None:
        return None
    # An arm whose call raised, or whose code ended its worker, has few samples or none, and may
    # have stopped the other's: say why first ("`baseline` has fewer than 2 blocks" blamed the
    # baseline for the change's error, which the report never showed).
    return with_causes(reason, shape.timing.failures if shape.timing else ())


def with_causes(reason: str, failures: Sequence[SamplerFailure]) -> str:
    """`reason`, led by why each measured arm stopped (`stopped_arms`), where one did."""
    causes = stopped_arms(failures)
    return f"{'; '.join(causes)} ({reason})" if causes else reason


def stopped_arms(failures: Sequence[SamplerFailure]) -> list[str]:
    """Why each measured arm stopped (its call raised, or its code ended the worker), in the run's
    words."""
    said = []
    for f in failures:
        if f.arm not in ARMS:
            continue
        if f.phase == WORKER_PHASE:
            said.append(f.message)
        else:
            phase = "warm-up" if f.phase == "warmup" else f.phase
            said.append(f"the {f.arm} raised in its {phase}: {f.message}")
    return said


def why_not_evidence(
    timings_valid: bool, target: str, not_timed: str, samples: Mapping[str, ArmSamples]
) -> str | None:
    """Why a baseline/change comparison is not evidence, or None when it is."""
    if not timings_valid:
        return f"timings on `{target}` are not evidence"
    if not samples:
        return not_timed
    for arm in ARMS:
        if arm not in samples:
            return f"no `{arm}` samples"
        if samples[arm].invalid:
            return f"{samples[arm].invalid} `{arm}` samples are marked invalid"
        if samples[arm].block_medians_ns.size < 2:
            return f"`{arm}` has fewer than 2 blocks"
        if np.any(samples[arm].block_medians_ns <= 0):
            return f"`{arm}` has blocks of 0 ns: its calls are shorter than the clock resolves"
    return None


def arm_findings(
    samples: Mapping[str, ArmSamples], arms: tuple[str, ...], subject: str, resolution_ns: float
) -> list[quality.Finding]:
    """Block count, spread of block medians, outliers and resolution for each arm.

    `resolution_ns` is the clock's, as the run recorded it (results.json).
    """
    out: list[quality.Finding] = []
    empty = samples.get(EMPTY_ARM)
    overhead = float(np.median(empty.durations_ns)) if empty and empty.durations_ns.size else None
    for arm in arms:
        if arm not in samples:
            continue
        data, where = samples[arm], f"{subject} {arm}"
        out += quality.check_block_count(int(data.block_medians_ns.size), where)
        # Spread is judged on the block medians: they are the unit the interval is built on.
        out += quality.check_spread(data.block_medians_ns, where)
        # Outliers on single samples: interference shows in one call, not in a median.
        out += quality.check_outliers(data.durations_ns, where)
        out += quality.check_resolution(data.durations_ns, where, resolution_ns, overhead)
    return out


def _element(dtype: str) -> tuple[str, int] | None:
    """The dtype the run allocated its buffers in, and the bytes of one element (None: unknown to numpy)."""
    try:
        return dtype, np.dtype(dtype).itemsize
    except TypeError:
        return None


def _model_line(inputs: BundleInputs, operation: str, quantity: str) -> str:
    """`path:line` of an operation's model in the study as it ran, for a finding about it."""
    op = inputs.study.operation(operation)
    model = next((m for m in op.models if m.quantity.id == quantity), None) if op else None
    if model is None:
        return ""
    line = inputs.study.source.position(model.span.start).line
    return f"{inputs.plan.study_path or 'study.perf'}:{line}"


def _findings(
    inputs: BundleInputs,
    samples: Mapping[str, ArmSamples],
    shape: ShapeRecord,
    achieved: tuple[Bandwidth, ...],
    operation: str,
) -> tuple[quality.Finding, ...]:
    subject = f"{operation} {shape.label}"
    # Timings that are not evidence (the simulator's) are judged for nothing: a simulated kernel
    # "above the measured roof" (PQ006) made a new user's byte model read as wrong. What does not
    # rest on a timing, a byte model against the buffers it must move (PQ010), is judged all the same.
    timed = inputs.results.timings_valid
    out = []
    if timed:
        out += arm_findings(samples, (*ARMS, *ROOF_ARMS), subject, inputs.results.timer_resolution_ns)
        out += _clock_findings(samples, shape.blocks, subject)
        out += quality.check_warmup(shape.warmups, subject)
        out += quality.check_contention(shape.blocks, subject)
    modelled, buffers = (shape.models or {}).get("bytes") or {}, shape.unavoidable_bytes
    for arm in ARMS:
        if isinstance(modelled.get(arm), int | float) and arm in buffers:
            out += quality.check_compulsory_bytes(
                float(modelled[arm]),
                int(buffers[arm]),
                f"{subject} {arm}",
                _element(inputs.plan.dtype),
                _model_line(inputs, operation, "bytes"),
            )
    for arm in achieved:
        if timed and arm.roof is not None and arm.roof_missing is None:
            # Above the roof for this arm's own mix, by more than the roof's own spread.
            out += quality.check_bandwidth(
                arm.bytes_per_s,
                arm.roof.bytes_per_s,
                f"{subject} {arm.arm}",
                margin=max(quality.ROOF_MARGIN, arm.roof.spread),
            )
    return tuple(out)


def _clock_findings(
    samples: Mapping[str, ArmSamples], blocks: list[Block], subject: str
) -> list[quality.Finding]:
    """PQ004 and PQ005 from the block hook's clock readings (a CUDA run's only)."""
    by_index = {b.index: b for b in blocks if b.index is not None}
    out: list[quality.Finding] = []
    clocks: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for arm in ARMS:
        if arm not in samples:
            continue
        readings = [by_index.get(i) for i in samples[arm].block_indices]
        reasons = [_reasons(b) for b in readings]
        if any(r is not None for r in reasons):
            out += quality.check_throttling([int(r or 0) for r in reasons], f"{subject} {arm}")
        mhz = [_mean_clock(b) for b in readings]
        if mhz and all(m is not None for m in mhz):
            clocks[arm] = (samples[arm].block_medians_ns, np.array(mhz, dtype=float))
    if len(clocks) == 2:
        (bt, bc), (ct, cc) = clocks["baseline"], clocks["change"]
        out += quality.check_clocks(bt, bc, ct, cc, subject)
    return out


def _mean_clock(block: Block | None) -> float | None:
    """The SM clock over a block: the mean of its start and end readings."""
    edges = () if block is None else (block.start.sm_clock_mhz, block.end.sm_clock_mhz)
    found = [float(v) for v in edges if v is not None]
    return sum(found) / len(found) if found else None


def _reasons(block: Block | None) -> int | None:
    """Clock-event reason bits seen at either edge of a block (OR), or None if unread."""
    edges = () if block is None else (block.start.clock_event_reasons, block.end.clock_event_reasons)
    found = [v for v in edges if v is not None]
    return None if not found else int(np.bitwise_or.reduce(found))
