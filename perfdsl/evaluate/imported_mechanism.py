"""An imported Nsight Compute profile as mechanism evidence, labelled "counted, imported".

Three labels keep mechanism numbers apart: "modelled" (the study's formulas),
"counted" (perfdsl's own ncu run, on the launch it timed) and "counted,
imported" (a profile another tool took, copied into the bundle). The imported
counts are read again from the bundle's copy with the rows the run recorded,
aggregated and named as perfdsl's own counters are (`imports.counted`).

Where counts exist they take precedence over the model, as perfdsl's own
counters do (`evaluate.mechanism.preferred`), but only when they describe what
was timed. An Nsight Compute profile is a GPU's: when the study's timing is
not on a GPU (its targets do not include cuda), the counts are of another
build on another target, so they are reported beside the model with that
reason and the prediction stays on the model.
"""

from __future__ import annotations

from pathlib import Path

from perfdsl import vocabulary as words
from perfdsl.bundle.evaluation.imported import CountedArm, CountedQuantity, ImportedCounted
from perfdsl.bundle.imported import CounterSide, ImportedRun
from perfdsl.imports.counted import COUNTER_FORMAT, count_arm, select_kernels
from perfdsl.imports.evidence import ImportFormatError
from perfdsl.imports.registry import parse_import
from perfdsl.nodes import Study

LABEL = "counted, imported"
GPU_TARGET = "cuda"


def counted_imported(bundle: Path, run: ImportedRun, study: Study) -> tuple[ImportedCounted, ...]:
    """Every operation's imported counters, read from the bundle's copies."""
    measures = _measures(study)
    targets = [t.id for t in study.workload.targets] if study.workload else []
    mismatch = (
        None
        if GPU_TARGET in targets
        else (
            f"an Nsight Compute profile counts a GPU build, while this study's timing is for "
            f"{', '.join(targets) or 'no stated target'}: the counts are shown beside the model, "
            "and predictions rest on the model"
        )
    )
    found = []
    for op in run.operations:
        if op.counters is None:
            continue
        baseline_side, change_side = op.counters
        evidence = parse_import(COUNTER_FORMAT, bundle / baseline_side.file)
        arms = [count_arm(_kernels(bundle, side), measures) for side in (baseline_side, change_side)]
        quantities = tuple(
            CountedQuantity(
                name,
                arms[0].quantities.get(name),
                arms[1].quantities.get(name),
                _ratio(arms[0].quantities.get(name), arms[1].quantities.get(name)),
            )
            for name in measures
        )
        found.append(
            ImportedCounted(
                operation=op.name,
                label=LABEL,
                source=baseline_side.source
                if baseline_side.source == change_side.source
                else f"{baseline_side.source}, {change_side.source}",
                file=baseline_side.file,
                sha256=baseline_side.sha256,
                tool=evidence.label.tool,
                environment=evidence.label.environment,
                baseline=CountedArm(arms[0].kernels, arms[0].launches),
                change=CountedArm(arms[1].kernels, arms[1].launches),
                quantities=quantities,
                judged=mismatch is None,
                mismatch=mismatch,
            )
        )
    return tuple(found)


def _measures(study: Study) -> tuple[str, ...]:
    """The study's `measure` list, and the mechanism's own measure first where it is not listed."""
    listed = [m.id for m in study.mechanism.measure] if study.mechanism else []
    mechanism = study.change.mechanism.id if study.change and study.change.mechanism else None
    needed = words.MECHANISM_MEASURES.get(mechanism) if mechanism else None
    ordered = ([needed] if needed and needed not in listed else []) + listed
    return tuple(m for m in ordered if m in words.MEASURES)


def _kernels(bundle: Path, side: CounterSide) -> tuple:
    """The arm's kernels in the copy; the same ones the run recorded, or an ImportFormatError."""
    evidence = parse_import(COUNTER_FORMAT, bundle / side.file)
    kernels = select_kernels(evidence, side.selector)
    names = tuple(entry.name for entry in kernels)
    if names != side.kernels:
        raise ImportFormatError(
            f"{bundle / side.file}: `{side.selector}` now selects {', '.join(names)}, "
            f"not {', '.join(side.kernels)}"
        )
    return kernels


def _ratio(baseline: float | None, change: float | None) -> float | None:
    return change / baseline if baseline and change is not None else None
