"""The report of a wholly imported study: the same sections, every number beside its label.

Page 1 leads with the decision and the time ratio, and, where the imported
timing is not evidence-grade, a warning that says why before any verdict. The
predictions table repeats it on each line judged against that timing. The
"Imported evidence" table prints, for each file, what a reader needs to weigh
its numbers: the tool and version, raw / per block / aggregate, interleaved or
not, the environment the file itself carried, and the SHA-256 of the copy in
the bundle. Correctness and end-to-end evidence that were not run are printed
as the study's own statements, marked as not checked by perfdsl.

Like `report.markdown`, a pure function of the study and the bundle's files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from perfdsl.bundle.evaluation.imported import ImportedEvaluation, ImportedTiming, SideResult
from perfdsl.bundle.evaluation.verdicts import PredictionResult
from perfdsl.nodes import Study
from perfdsl.report import formatting as fmt
from perfdsl.report.imported_evidence import counted_blocks, decision_lines, end_to_end_blocks, value_blocks
from perfdsl.report.markdown import SECTIONS

_COMPARATORS = {"<=": "≤", ">=": "≥", "<": "<", ">": ">"}
_GRANULARITY = {"raw": "raw samples", "per_block": "one value per block", "aggregate": "aggregates only"}
_HASH_CHARS = 16


def render_imported_markdown(study: Study, evaluation: ImportedEvaluation, bundle_label: str) -> str:
    """The report's Markdown, sections in the order and with the headings of every report."""
    title = study.title.value if study.title else study.name.id
    sections = {
        "decision": _decision(study, evaluation),
        "workload": _workload(study, evaluation),
        "operation": _operation(study),
        "correctness": [_not_run("Correctness", evaluation.correctness_not_run)],
        "mechanism": _mechanism(evaluation) + counted_blocks(evaluation),
        "timing": _timing(evaluation),
        "end_to_end": end_to_end_blocks(evaluation, _timing_block)
        if evaluation.applications
        else [_not_run("End-to-end evidence", evaluation.end_to_end_not_run)],
        "value": value_blocks(evaluation)
        or ["Not computed: the value is computed from the end-to-end effect, which was not measured."],
        "limitations": _limitations(study),
        "investigation": _investigation(study),
        "reproduction": _reproduction(study, evaluation, bundle_label),
    }
    parts = [f"# {fmt.text(title)}"]
    for name, heading in SECTIONS:
        parts.append(f"## {heading}")
        parts.extend(sections[name])
    return "\n\n".join(parts) + "\n"


def _decision(study: Study, ev: ImportedEvaluation) -> list[str]:
    declared = ev.decision or "none stated"
    sentences = [
        f"**Decision: {fmt.text(declared)}.**",
        "Every timing below was imported from another harness.",
    ]
    for t in ev.timings:
        sentences.append(f"`{t.operation}`: time ratio (change / baseline) {_ratio(t)}.")
    sentences.extend(decision_lines(ev, _ratio))
    sentences.append("Correctness was not checked by perfdsl.")
    blocks = [" ".join(sentences)]
    warnings = [
        f"`{t.operation}` timing is **{fmt.message(t.verdict)}** ({_method(t)})."
        for t in [*ev.timings, *(a.timing for a in ev.applications)]
        if not t.evidence_grade
    ]
    warnings += [fmt.message(finding) for finding in ev.findings]
    if warnings:
        blocks.append(fmt.callout("WARNING", warnings))
    rows = [
        [
            fmt.text(p.text),
            _prediction_value(p),
            fmt.text(p.basis),
            f"**{fmt.text(p.verdict)}**" + _grade_note(p, ev),
        ]
        for p in ev.predictions
    ]
    blocks.append(
        fmt.table(
            "Predictions, judged against imported evidence", ["prediction", "value", "basis", "verdict"], rows
        )
    )
    return blocks


def _grade_note(prediction: PredictionResult, ev: ImportedEvaluation) -> str:
    """Beside a time verdict: the reasons its timing is not evidence-grade."""
    if prediction.basis != "measured":
        return ""
    subject = str(prediction.target).split(".")[0]
    timings = [*ev.timings, *(a.timing for a in ev.applications)]
    timing = next((t for t in timings if t.operation == subject), None)
    if timing is None or timing.evidence_grade:
        return ""
    return f" ({fmt.message(timing.verdict)})"


def _prediction_value(p: PredictionResult) -> str:
    if p.value is None:
        return fmt.message(p.message or "no value")
    ci = p.ci
    shown = fmt.ratio(p.value)
    if ci and ci[0] != ci[1]:
        shown += f" {fmt.interval(ci[0], ci[1])}"
    comparator = _COMPARATORS.get(p.comparator, p.comparator)
    return f"{shown} (bound {comparator} {fmt.sig(p.bound)})" if p.bound is not None else shown


def _ratio(t: ImportedTiming) -> str:
    if t.ratio is None:
        return "not computed"
    if t.low is None:
        return f"{fmt.ratio(t.ratio)}, a ratio of the files' medians with no interval"
    return f"{fmt.ratio(t.ratio)} {fmt.interval(t.low, t.high)}, {fmt.text(t.indicated)}"


def _method(t: ImportedTiming) -> str:
    return {
        "paired": "paired comparison of interleaved blocks",
        "unpaired": "unpaired comparison of block medians",
        "medians": "the files' own medians",
    }[t.method]


def _workload(study: Study, ev: ImportedEvaluation) -> list[str]:
    workload = study.workload
    summary = fmt.text(workload.summary.value).rstrip(".") + "." if workload and workload.summary else ""
    shapes = "; ".join(
        f"`{op}` at " + ", ".join(f"{k} = {v}" for k, v in sizes.items()) for op, sizes in ev.sizes.items()
    )
    return [f"{summary} The imported files measured one shape: {shapes or 'none'}.".strip()]


def _operation(study: Study) -> list[str]:
    rows = []
    for op in study.operations:
        for arm, side in (("baseline", op.baseline), ("change", op.change)):
            rows.append([f"`{op.name.id}`", arm, fmt.code(fmt.snippet(study, side.span)) if side else "—"])
    mechanism = study.change.mechanism.id if study.change and study.change.mechanism else "not stated"
    summary = fmt.text(study.change.summary.value) if study.change and study.change.summary else ""
    return [
        f"Predicted mechanism: `{mechanism}`. {summary}",
        fmt.table("Implementations, as imported", ["operation", "arm", "from"], rows),
    ]


def _not_run(what: str, statement: str | None) -> str:
    if statement is None:
        return f"{what} was not run, and the study does not say why."
    return fmt.callout(
        "NOTE", [f"{what} was **not run by perfdsl**. The study states: “{fmt.text(statement)}”"]
    )


def _mechanism(ev: ImportedEvaluation) -> list[str]:
    rows = [
        [
            f"`{op}`",
            f"`{quantity}`",
            fmt.sci(arms.get("baseline")),
            fmt.sci(arms.get("change")),
            _model_ratio(arms),
        ]
        for op, models in ev.models.items()
        for quantity, arms in models.items()
    ]
    if not rows:
        return ["No mechanism quantity is modelled."]
    counted = "counted: see below" if ev.counted else "not counted: no profiler file was imported"
    return [
        fmt.table(
            f"Modelled per call ({counted})",
            ["operation", "quantity", "baseline", "change", "ratio"],
            rows,
            numeric=(2, 3, 4),
        )
    ]


def _model_ratio(arms: Mapping[str, float]) -> str:
    base, change = arms.get("baseline"), arms.get("change")
    return fmt.ratio(change / base) if base and change is not None else "—"


def _timing(ev: ImportedEvaluation) -> list[str]:
    blocks = [block for t in ev.timings for block in _timing_block(t)]
    return blocks or ["No imported timing."]


def _timing_block(t: ImportedTiming) -> list[str]:
    """One imported comparison (an operation's, or an application's request times) with its labels."""
    rows = [_side_row("baseline", t.baseline), _side_row("change", t.change)]
    return [
        fmt.table(
            f"`{t.operation}`: imported evidence ({_method(t)})",
            ["arm", "entry", "median", "blocks x samples", "label"],
            rows,
            numeric=(2,),
        ),
        f"Ratio {_ratio(t)}. Verdict: **{fmt.message(t.verdict)}**.",
        fmt.bullets(_environment(t)),
    ]


def _side_row(arm: str, side: SideResult) -> list[str]:
    version = f" {side.tool_version}" if side.tool_version else ""
    interleaved = {"yes": "interleaved", "no": "not interleaved"}.get(
        side.interleaved, "interleaving unknown"
    )
    granularity = _GRANULARITY.get(side.granularity, side.granularity)
    label = f"{fmt.text(side.tool + version)}, {granularity}, {interleaved}"
    calls = f", {side.calls_per_sample} calls per sample" if side.calls_per_sample else ""
    return [
        arm,
        f"`{side.entry}`",
        fmt.duration(side.median_ns),
        f"{side.blocks} x {_per_block(side)}{calls}",
        label,
    ]


def _per_block(side: SideResult) -> str:
    blocks, samples = side.blocks, side.samples
    return str(samples // blocks) if blocks and samples % blocks == 0 else f"{samples} in all"


def _environment(t: ImportedTiming) -> list[str]:
    seen: dict[str, SideResult] = {}
    for side in (t.baseline, t.change):
        seen.setdefault(side.file, side)
    lines = []
    for side in seen.values():
        env = ", ".join(f"{fmt.text(k)} {fmt.text(v)}" for k, v in side.environment) or "none recorded"
        lines.append(
            f"`{side.source}` (`{side.format}`, SHA-256 `{side.sha256[:_HASH_CHARS]}…`, "
            f"copied to `{side.file}`): environment the file records: {env}"
        )
    return lines


def _limitations(study: Study) -> list[str]:
    items = [
        f"**{fmt.text(limit.kind.id)}**: {fmt.text(limit.text.value if limit.text else '')}"
        for limit in study.limits
    ]
    fallback = fmt.text(study.fallback.value) if study.fallback else "none stated"
    return [fmt.bullets(items) if items else "None stated.", f"Fallback: {fallback}."]


def _investigation(study: Study) -> list[str]:
    items = [
        f"{fmt.text(r.text.value if r.text else '')}: "
        f"{fmt.text(r.because.value if r.because else 'no reason given')}"
        for r in study.rejected
    ]
    return [fmt.bullets(items) if items else "No rejected hypothesis."]


def _reproduction(study: Study, ev: ImportedEvaluation, bundle_label: str) -> list[str]:
    timings = [*ev.timings, *(a.timing for a in ev.applications)]
    files: Sequence[str] = sorted(
        {side.file for t in timings for side in (t.baseline, t.change)} | {c.file for c in ev.counted}
    )
    study_file = Path(study.source.path).name
    return [
        f"Bundle `{bundle_label}` (run `{ev.run_id}`), from `perfdsl run {study_file}`: "
        "the imported files were copied into it and no code was run. "
        f"`perfdsl verify` rechecks the copies ({', '.join(f'`{f}`' for f in files)}) against the manifest."
    ]
