"""Kernel timing per operation and shape: comparisons, the weighted effect, quality.

For every timed shape: each arm's block medians from its samples CSV, the
`compare` of baseline and change at the study's confidence and threshold,
measurement-quality findings for every arm, and the mechanism evidence. Over
shapes: the workload-weighted combination and the shapes that regress.

A comparison is evidence only when every sample was valid and the target's
timings are evidence at all: the simulator's durations, or one invalid sample,
give "not evidence" and never a verdict.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np

from perfdsl.bundle.results import OperationRecord, ShapeRecord
from perfdsl.evaluate import quality
from perfdsl.evaluate.compare import Combined, Comparison, combine_shapes, compare
from perfdsl.evaluate.correctness import CorrectnessSummary, summarize_correctness
from perfdsl.evaluate.inputs import ArmSamples, BundleInputs, read_samples
from perfdsl.evaluate.mechanism import (
    ROOF_ARM,
    KernelCounts,
    ShapeMechanism,
    bandwidths,
    explain_change,
    preferred,
    quantities,
    static_counts,
)
from perfdsl.vocabulary import MECHANISM_MEASURES

ARMS = ("baseline", "change")
EMPTY_ARM = "(empty)"


@attrs.frozen
class ArmSummary:
    """One arm's timing at one shape."""

    arm: str
    blocks: int
    samples: int
    invalid: int
    median_ns: float
    """Median of the block medians."""
    block_medians_ns: tuple[float, ...]


@attrs.frozen
class ShapeResult:
    """One shape of one operation: the comparison (if evidence), quality and mechanism."""

    label: str
    sizes: dict[str, int]
    weight: float
    evidence: bool
    missing: str | None
    """Why there is no comparison: not timed, invalid samples, too few blocks."""
    arms: tuple[ArmSummary, ...]
    comparison: Comparison | None
    findings: tuple[quality.Finding, ...]
    mechanism: ShapeMechanism


@attrs.frozen
class OperationResult:
    """Everything measured about one operation."""

    name: str
    baseline: str
    change: str
    shapes: tuple[ShapeResult, ...]
    combined: Combined | None
    combined_missing: str | None
    regressions: tuple[str, ...]
    correctness: CorrectnessSummary
    static: dict[str, tuple[KernelCounts, ...]]
    """Per arm, counts read from its compiled kernels."""

    def shape(self, sizes: Mapping[str, int]) -> ShapeResult | None:
        """The shape with exactly these sizes, if it was planned."""
        return next((s for s in self.shapes if s.sizes == dict(sizes)), None)


def evaluate_operations(inputs: BundleInputs) -> tuple[OperationResult, ...]:
    """Every operation in results.json, in order."""
    level, theta = _settings(inputs)
    return tuple(_operation(inputs, op, level, theta) for op in inputs.results.operations)


def _settings(inputs: BundleInputs) -> tuple[float, float]:
    return inputs.plan.timing.confidence, inputs.plan.timing.threshold


def _operation(inputs: BundleInputs, op: OperationRecord, level: float, theta: float) -> OperationResult:
    change = inputs.study.change
    mechanism = change.mechanism.id if change and change.mechanism else None
    shapes = tuple(_shape(inputs, op.name, shape, level, theta, mechanism) for shape in op.shapes)
    combined, missing = _combine(shapes, level)
    return OperationResult(
        name=op.name,
        baseline=op.baseline,
        change=op.change,
        shapes=shapes,
        combined=combined,
        combined_missing=missing,
        regressions=tuple(s.label for s in shapes if s.comparison and s.comparison.verdict == "slower"),
        correctness=summarize_correctness(op.correctness),
        static={arm: static_counts(inputs.results.static, op.variants.get(arm, "")) for arm in ARMS},
    )


def _combine(shapes: tuple[ShapeResult, ...], level: float) -> tuple[Combined | None, str | None]:
    if not shapes:
        return None, "no shapes were planned"
    lacking = [s.label for s in shapes if s.comparison is None]
    if lacking:
        return None, f"shape {', '.join(lacking)} has no timing evidence: no weighted effect"
    return combine_shapes(
        {s.label: s.comparison for s in shapes if s.comparison},
        {s.label: s.weight for s in shapes},
        level=level,
    ), None


def _shape(
    inputs: BundleInputs,
    operation: str,
    shape: ShapeRecord,
    level: float,
    theta: float,
    mechanism: str | None,
) -> ShapeResult:
    found = quantities(shape)
    samples = read_samples(inputs, shape.samples) if shape.samples else {}
    arms = tuple(_summary(arm, samples[arm]) for arm in (*ARMS, ROOF_ARM) if arm in samples)
    medians = {a.arm: a.median_ns for a in arms}
    roof, roof_missing, achieved = bandwidths(found, medians, shape.set_bytes)
    comparison, missing = None, _why_not_evidence(inputs, shape, samples)
    if missing is None:
        comparison = compare(
            samples["baseline"].block_medians_ns,
            samples["change"].block_medians_ns,
            level=level,
            min_effect=theta,
        )
    quantity_name = MECHANISM_MEASURES.get(mechanism or "")
    mech = ShapeMechanism(
        quantities=found,
        counters_missing=None
        if shape.counters
        else (shape.counters_missing or "the run recorded no counters"),
        roof_bytes_per_s=roof,
        roof_missing=roof_missing,
        bandwidth=achieved,
        explanation=explain_change(comparison, preferred(found, quantity_name), quantity_name),
    )
    subject = f"{operation} {shape.label}"
    findings = _findings(inputs, samples, shape.blocks, mech, subject) if samples else ()
    return ShapeResult(
        label=shape.label,
        sizes=dict(shape.sizes),
        weight=shape.weight,
        evidence=comparison is not None,
        missing=missing,
        arms=arms,
        comparison=comparison,
        findings=findings,
        mechanism=mech,
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
    # An arm whose code ended its worker has no samples: say why, not only that.
    died = shape.worker_failures
    return f"{reason}: {'; '.join(died)}" if reason and died else reason


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


def _findings(
    inputs: BundleInputs,
    samples: Mapping[str, ArmSamples],
    blocks: list[Mapping[str, Any]],
    mech: ShapeMechanism,
    subject: str,
) -> tuple[quality.Finding, ...]:
    out = arm_findings(samples, (*ARMS, ROOF_ARM), subject, inputs.results.timer_resolution_ns)
    out += _clock_findings(samples, blocks, subject)
    if mech.roof_bytes_per_s:
        for achieved in mech.bandwidth:
            out += quality.check_bandwidth(
                achieved.bytes_per_s, mech.roof_bytes_per_s, f"{subject} {achieved.arm}"
            )
    return tuple(out)


def _clock_findings(
    samples: Mapping[str, ArmSamples], blocks: list[Mapping[str, Any]], subject: str
) -> list[quality.Finding]:
    """PQ004 and PQ005 from the block hook's clock readings (a CUDA run's only)."""
    by_index = {b["index"]: b for b in blocks if isinstance(b, Mapping) and "index" in b}
    out: list[quality.Finding] = []
    clocks: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    for arm in ARMS:
        if arm not in samples:
            continue
        readings = [by_index.get(i, {}) for i in samples[arm].block_indices]
        reasons = [_reading(b, "clock_event_reasons") for b in readings]
        if any(r is not None for r in reasons):
            out += quality.check_throttling([int(r or 0) for r in reasons], f"{subject} {arm}")
        mhz = [_mean_clock(b) for b in readings]
        if mhz and all(m is not None for m in mhz):
            clocks[arm] = (samples[arm].block_medians_ns, np.array(mhz, dtype=float))
    if len(clocks) == 2:
        (bt, bc), (ct, cc) = clocks["baseline"], clocks["change"]
        out += quality.check_clocks(bt, bc, ct, cc, subject)
    return out


def _mean_clock(block: Mapping[str, Any]) -> float | None:
    """The SM clock over a block: the mean of its start and end readings."""
    found = [float(v) for v in _edges(block, "sm_clock_mhz")]
    return sum(found) / len(found) if found else None


def _reading(block: Mapping[str, Any], key: str) -> int | None:
    """Clock-event reason bits seen at either edge of a block (OR), or None if unread."""
    found = [int(v) for v in _edges(block, key)]
    return None if not found else int(np.bitwise_or.reduce(found))


def _edges(block: Mapping[str, Any], key: str) -> list[int | float]:
    values = ((block.get(edge) or {}).get(key) for edge in ("start", "end"))
    return [v for v in values if isinstance(v, int | float)]
