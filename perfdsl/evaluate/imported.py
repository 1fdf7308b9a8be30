"""A wholly imported study's bundle to verdicts: the same statistics where the data support them.

Each side's entry is read again from its copy in the bundle. What the label
allows decides the method:

* blocks on both sides, interleaved: the paired comparison of `perfdsl run`
  (`stats.paired`), block i of the baseline beside block i of the change;
* blocks on both sides, not interleaved (or not known to be): the unpaired
  comparison of block medians (`stats.unpaired`);
* fewer than two blocks on a side, or statistics only: the ratio of the
  file's own medians, with no interval at all.

Only the first is evidence-grade. Every other verdict is written as
"not evidence-grade: <reasons>", and a prediction judged against it carries
the same reasons, so page 1 of the report cannot show it as a measurement of
perfdsl's own.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from perfdsl.bundle import versions
from perfdsl.bundle.evaluation.imported import ImportedCounted, ImportedEvaluation, ImportedTiming, SideResult
from perfdsl.bundle.evaluation.verdicts import PredictionResult
from perfdsl.bundle.files import dumps, replace_file, verify_bundle
from perfdsl.bundle.imported import ImportedOperation, ImportedRun, ImportedSide
from perfdsl.evaluate.imported_end_to_end import (
    AMDAHL_NOT_ESTABLISHED,
    beyond_declared_share,
    evaluate_applications,
)
from perfdsl.evaluate.imported_mechanism import LABEL, counted_imported
from perfdsl.evaluate.inputs import EvaluateError
from perfdsl.evaluate.predictions import judge
from perfdsl.imports.evidence import Entry, ImportedEvidence, ImportFormatError
from perfdsl.imports.registry import parse_import
from perfdsl.imports.select import select_entry
from perfdsl.nodes import Name, Num, Prediction, Study
from perfdsl.numbers import estimate
from perfdsl.parse import parse
from perfdsl.plan_rules import DEFAULT_CONFIDENCE, DEFAULT_THRESHOLD, MIN_THRESHOLD
from perfdsl.source import Source
from perfdsl.stats.paired import compare_paired, pair_blocks, too_few_pairs
from perfdsl.stats.unpaired import compare_unpaired
from perfdsl.vocabulary import AMDAHL

ONE_BLOCK = "fewer than two blocks on a side: no spread between blocks, no interval"


def evaluate_imported(bundle: Path, study: Study) -> ImportedEvaluation:
    """Evaluate a bundle written by `runtime.imported`; `study` is the bundle's own study.perf.

    ImportFormatError when a copied file no longer parses or its entry is gone
    (a bundle whose manifest still verifies cannot get there).
    """
    run = ImportedRun.read(bundle)
    timing = study.timing
    level = round(timing.confidence.quantity.base, 12) if timing and timing.confidence else DEFAULT_CONFIDENCE
    threshold = (
        max(timing.threshold.quantity.base, MIN_THRESHOLD)
        if timing and timing.threshold
        else DEFAULT_THRESHOLD
    )
    timings = tuple(_timing(bundle, op, level, threshold) for op in run.operations)
    models = {op.name: op.models for op in run.operations}
    counted = counted_imported(bundle, run, study)
    applications = evaluate_applications(
        lambda name, baseline, change: compare_sides(bundle, name, baseline, change, level, threshold),
        run.applications,
        timings,
        study,
        level,
    )
    predictions = tuple(
        _prediction(study, p, timings + tuple(a.timing for a in applications), models, counted)
        for p in study.predictions
    )
    declared = study.decision.id if study.decision else None
    findings = tuple(
        f"`decision adopt` rests on {t.operation}'s timing, which is {t.verdict}"
        for t in timings + tuple(a.timing for a in applications)
        if declared == "adopt" and not t.evidence_grade
    ) + tuple(
        finding for a in applications if (finding := beyond_declared_share(a, timings, threshold)) is not None
    )
    return ImportedEvaluation(
        schema=versions.IMPORTED_EVALUATION,
        study=run.study,
        run_id=run.run_id,
        level=level,
        threshold=threshold,
        timings=timings,
        sizes={op.name: op.sizes for op in run.operations},
        models=models,
        predictions=predictions,
        correctness_not_run=study.correctness.not_run.value
        if study.correctness and study.correctness.not_run
        else None,
        counted=counted,
        applications=applications,
        end_to_end_not_run=study.end_to_end.not_run.value
        if study.end_to_end and study.end_to_end.not_run
        else None,
        decision=declared,
        findings=findings,
    )


def _read(bundle: Path, side: ImportedSide) -> tuple[ImportedEvidence, Entry]:
    evidence = parse_import(side.format, bundle / side.file)
    entry = select_entry(evidence, side.selector)
    if entry.name != side.entry:
        raise ImportFormatError(
            f"{bundle / side.file}: `{side.selector}` now selects `{entry.name}`, not `{side.entry}`"
        )
    return evidence, entry


def _block_medians(entry: Entry) -> np.ndarray:
    return np.array([float(np.median(block)) for block in entry.blocks if block], dtype=float)


def _side(side: ImportedSide, evidence: ImportedEvidence, entry: Entry) -> SideResult:
    medians = _block_medians(entry)
    label = evidence.label
    median = (
        float(np.median(medians)) if medians.size else entry.statistic("median") or entry.statistic("mean")
    )
    return SideResult(
        entry=entry.name,
        file=side.file,
        source=side.source,
        format=side.format,
        tool=label.tool,
        tool_version=label.tool_version,
        granularity=entry.granularity,
        interleaved=label.interleaved,
        environment=label.environment,
        sha256=side.sha256,
        blocks=len(entry.blocks),
        samples=len(entry.samples),
        calls_per_sample=entry.calls_per_sample,
        median_ns=median,
    )


def _timing(bundle: Path, op: ImportedOperation, level: float, threshold: float) -> ImportedTiming:
    return compare_sides(bundle, op.name, op.baseline, op.change, level, threshold)


def compare_sides(
    bundle: Path, name: str, b_side: ImportedSide, c_side: ImportedSide, level: float, threshold: float
) -> ImportedTiming:
    """The time ratio of two imported entries (an operation's, or an application's request times)."""
    (b_evidence, b_entry), (c_evidence, c_entry) = _read(bundle, b_side), _read(bundle, c_side)
    baseline, change = _side(b_side, b_evidence, b_entry), _side(c_side, c_evidence, c_entry)
    caveats = list(dict.fromkeys(b_evidence.label.caveats + c_evidence.label.caveats))
    b_med, c_med = _block_medians(b_entry), _block_medians(c_entry)
    interleaved = b_evidence is c_evidence or b_side.sha256 == c_side.sha256
    interleaved = interleaved and b_evidence.label.interleaved == "yes"
    ratio = low = high = indicated = None
    few = too_few_pairs(min(b_med.size, c_med.size))
    if few is None and interleaved and b_med.size == c_med.size:
        method = "paired"
        index = np.arange(b_med.size)
        paired = compare_paired(
            pair_blocks(b_med, 2 * index, c_med, 2 * index + 1), level=level, theta=threshold
        )
        ratio, low, high, indicated = paired.ratio, paired.low, paired.high, paired.verdict
    elif few is None:
        method = "unpaired"
        unpaired = compare_unpaired(b_med, c_med, level=level, theta=threshold)
        ratio, low, high, indicated = unpaired.ratio, unpaired.low, unpaired.high, unpaired.verdict
        if interleaved:
            caveats.append("unequal block counts: the blocks cannot be paired")
    else:
        method = "medians"
        caveats.append(ONE_BLOCK if min(b_med.size, c_med.size) < 2 else few)
        if baseline.median_ns and change.median_ns:
            ratio = change.median_ns / baseline.median_ns
    grade = method == "paired" and not caveats
    verdict = str(indicated) if grade else "not evidence-grade: " + "; ".join(caveats)
    return ImportedTiming(
        operation=name,
        method=method,
        ratio=ratio,
        low=low,
        high=high,
        indicated=indicated,
        evidence_grade=grade,
        caveats=tuple(caveats),
        verdict=verdict,
        baseline=baseline,
        change=change,
    )


def _prediction(
    study: Study,
    prediction: Prediction,
    timings: tuple[ImportedTiming, ...],
    models: dict[str, dict[str, dict[str, float]]],
    counted: tuple[ImportedCounted, ...],
) -> PredictionResult:
    """Judge one `predict` line: time from the imported entries, other quantities from imported
    counts where they describe what was timed, else from the models."""
    base = {
        "text": " ".join(study.source.snippet(prediction.span).split()),
        "line": study.source.position(prediction.span.start).line,
        "target": prediction.target,
        "comparator": prediction.comparator,
    }
    bound = prediction.bound.quantity.base if isinstance(prediction.bound, Num) else None
    subject, quantity = prediction.subject.id, prediction.quantity.id
    timing = next((t for t in timings if t.operation == subject), None)
    counts = next((c for c in counted if c.operation == subject), None)
    found = counts.quantity(quantity) if counts is not None else None
    note = ""
    said = ""  # how the message names the basis, where the record's one word is too short for it
    amdahl = isinstance(prediction.bound, Name) and prediction.bound.id == AMDAHL
    if amdahl:
        value, ci, basis = None, None, "none"
    elif quantity == "time" and timing is not None:
        value, basis = timing.ratio, "measured"
        ci = (min(timing.low, value), max(timing.high, value)) if timing.low is not None and value else None
        note = "" if timing.evidence_grade else f" ({timing.verdict}, imported)"
    elif counts is not None and counts.judged and found is not None and found.ratio is not None:
        # The record's basis is one of its five words ("counted"); the message says whose count.
        value, basis, said = found.ratio, "counted", LABEL
        ci = (value, value)
    else:
        pair = models.get(subject, {}).get(quantity)
        value = pair["change"] / pair["baseline"] if pair and pair.get("baseline") else None
        ci, basis = ((value, value) if value is not None else None), "modelled"
        if counts is not None and found is not None and counts.mismatch:
            note = f" (imported counts not used: {counts.mismatch})"
    if bound is None or value is None or ci is None or not math.isfinite(value):
        why = (
            f"`{AMDAHL}` needs Amdahl's bound, which is {AMDAHL_NOT_ESTABLISHED}"
            if amdahl
            else "no interval: " + timing.verdict
            if quantity == "time" and timing is not None
            else (f"nothing to judge `{prediction.target}` against in imported evidence")
        )
        return PredictionResult(
            **base,
            bound=bound,
            bound_source=AMDAHL if amdahl else "stated",
            value=value,
            ci=None,
            basis="none",
            verdict="not evidence",
            message=why,
        )
    verdict = judge(*ci, prediction.comparator, bound)
    lo, hi = ci
    shown = estimate(value, lo, hi)
    message = (
        f"{said or basis} {prediction.target} ratio {shown} against {prediction.comparator} {bound:.4g}: "
        f"{verdict}{note}"
    )
    return PredictionResult(
        **base,
        bound=bound,
        bound_source="stated",
        value=value,
        ci=ci,
        basis=basis,
        verdict=verdict,
        message=message,
    )


def evaluate_imported_bundle(bundle: Path) -> ImportedEvaluation:
    """Verify and evaluate an imported bundle from its own files; EvaluateError (one line) if it cannot be."""
    path = Path(bundle)
    problems = [p for p in verify_bundle(path) if f"`{versions.EVALUATION_FILE}`" not in p]
    if problems:
        shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
        raise EvaluateError(
            f"{path}: the bundle fails verification ({shown}): not evaluated; "
            f"`perfdsl verify {path}` lists every file that changed"
        )
    try:
        text = versions.read_bundle_text(path, "study.perf")
    except versions.BundleFormatError as error:
        raise EvaluateError(str(error)) from None
    study = parse(Source("study.perf", text)).study
    if study is None:
        raise EvaluateError(f"{path}: the bundle's study.perf does not parse")
    try:
        return evaluate_imported(path, study)
    except (ImportFormatError, versions.BundleFormatError) as error:
        raise EvaluateError(str(error)) from None
    except (OSError, ValueError) as error:
        raise EvaluateError(f"{path}: unreadable bundle file: {error}") from None


def write_imported_evaluation(bundle: Path, evaluation: ImportedEvaluation) -> Path:
    """Write evaluation.json (sorted keys, rounded floats) and update the manifest."""
    return replace_file(bundle, versions.EVALUATION_FILE, dumps(evaluation.to_json()).encode("utf-8"))


def summary(evaluation: ImportedEvaluation) -> str:
    """The plain-text table `perfdsl evaluate` prints."""
    e = evaluation
    lines = [
        f"{e.study} {e.run_id} from imported files ({e.level:.0%} intervals, threshold {e.threshold:.1%})"
    ]
    for t in e.timings:
        shown = f"{t.ratio:.4f}" if t.ratio is not None else "no ratio"
        if t.low is not None and t.high is not None:
            shown += f" [{t.low:.4f}, {t.high:.4f}] {t.indicated} ({t.method})"
        lines.append(f"operation {t.operation}: time ratio {shown}")
        lines.append(f"  {t.verdict}")
    for c in e.counted:
        shown = ", ".join(f"{q.name} ratio {q.ratio:.4f}" for q in c.quantities if q.ratio is not None)
        used = "the predictions are judged on it" if c.judged else f"not judged on: {c.mismatch}"
        lines.append(f"operation {c.operation}: {c.label} ({c.tool}): {shown or 'nothing counted'}; {used}")
    for a in e.applications:
        t = a.timing
        shown = f"{t.ratio:.4f}" if t.ratio is not None else "no ratio"
        if t.low is not None and t.high is not None:
            shown += f" [{t.low:.4f}, {t.high:.4f}] {t.indicated} ({t.method})"
        lines.append(f"application {a.application}: time ratio {shown}")
        lines.append(f"  {t.verdict}")
        lines.append(f"  Amdahl: {a.amdahl}")
        lines.append(f"  value: {a.value_missing or 'established'}")
    lines.append(f"correctness: not run by perfdsl: {e.correctness_not_run or 'not stated'}")
    lines += [f"predict line {p.line}: {p.verdict:<12} {p.message}" for p in e.predictions]
    lines += [f"decision: {finding}" for finding in e.findings]
    return "\n".join(lines)
