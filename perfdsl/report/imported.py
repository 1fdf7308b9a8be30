"""The report of a wholly imported study: the same sections, every number beside its label.

Page 1 leads with the decision and the time ratio, and, where the imported
timing is not evidence-grade, a warning that says why before any verdict. The
predictions table repeats it on each line judged against that timing. The
"Imported evidence" table prints, for each file, what a reader needs to weigh
its numbers: the tool and version, raw / per block / aggregate, interleaved or
not, the environment the file itself carried, and the SHA-256 of the copy in
the bundle. Correctness and end-to-end evidence that were not run are printed
as the study's own statements, marked as not checked by perfdsl.

What is study prose or said the same of any evidence comes from the native
section modules, so the two reports cannot drift apart: the decision sentence,
the prediction warnings and their callout (`report.decision`), the declared
workload, the modelled quantities and the mechanism, the limits and the
fallback, the rejected alternatives, the commands, and a value not computed.
Kept here is what only imported evidence has: the evidence table with each
file's label, the unpaired timing, and the readings of the imported
evaluation's record (`ImportedEvaluation`), which has no native counterpart.

Like `report.markdown`, a pure function of the study and the bundle's files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.evaluation.imported import ImportedEvaluation, ImportedTiming, SideResult
from perfdsl.bundle.evaluation.verdicts import PredictionResult
from perfdsl.nodes import Limit, QuantityRef, Study
from perfdsl.plan import shape_dicts
from perfdsl.report import formatting as fmt
from perfdsl.report.decision import (
    COMPARATORS,
    decision_changed,
    decision_sentence,
    prediction_warnings,
    warnings_callout,
)
from perfdsl.report.imported_evidence import counted_blocks, decision_lines, end_to_end_blocks, value_blocks
from perfdsl.report.investigation import missing, rejected_items
from perfdsl.report.limitations import NOT_MEASURED, declared_limits, fallback_sentence
from perfdsl.report.markdown import SECTIONS
from perfdsl.report.mechanism import modelled_warning, quantity_value
from perfdsl.report.operation import mechanism_sentence, models_table
from perfdsl.report.reproduction import commands_blocks
from perfdsl.report.value import not_computed
from perfdsl.report.workload import declared_workload

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
        or [not_computed("the value is computed from the end-to-end effect, which was not measured")],
        "limitations": [declared_limits(study, _limit_not_measured), fallback_sentence(study)],
        "investigation": [rejected_items(study, lambda ref: _cited(evaluation, ref))],
        "reproduction": _reproduction(study, evaluation, bundle_label),
    }
    parts = [f"# {fmt.text(title)}"]
    for name, heading in SECTIONS:
        parts.append(f"## {heading}")
        parts.extend(block for block in sections[name] if block)
    return "\n\n".join(parts) + "\n"


def _decision(study: Study, ev: ImportedEvaluation) -> list[str]:
    declared = study.decision.id if study.decision else ev.decision
    sentences = [decision_sentence(declared), "Every timing below was imported from another harness."]
    for t in ev.timings:
        estimator = _ESTIMATOR.get(t.method, "")
        sentences.append(f"`{t.operation}`: time ratio (change / baseline){estimator} {_ratio(t)}.")
    sentences.extend(decision_lines(ev, _ratio))
    sentences.append("Correctness was not checked by perfdsl.")
    blocks = [" ".join(sentences)]
    warnings = [
        f"`{t.operation}` timing is **{fmt.message(t.verdict)}** ({_method(t)})."
        for t in [*ev.timings, *(a.timing for a in ev.applications)]
        if not t.evidence_grade
    ]
    warnings += decision_changed(study, ev.decision, rechecked=False)
    warnings += [fmt.message(finding) for finding in ev.findings]
    warnings += prediction_warnings(ev.predictions, _unjudged_counts(ev))
    blocks.append(warnings_callout(warnings))
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
    comparator = COMPARATORS.get(p.comparator, p.comparator)
    return f"{shown} (bound {comparator} {fmt.sig(p.bound)})" if p.bound is not None else shown


def _ratio(t: ImportedTiming) -> str:
    if t.ratio is None:
        return "not computed"
    if t.low is None:
        return f"{fmt.ratio(t.ratio)}, a ratio of the files' medians with no interval"
    return f"{fmt.ratio(t.ratio)} {fmt.interval(t.low, t.high)}, {fmt.text(t.indicated)}"


_ESTIMATOR = {"unpaired": " of the arms' geometric means of their block medians"}
"""What an unpaired ratio is a ratio of: a reader who divided the medians of the evidence table
(0.176) took the page's 0.2081 for a mistake."""


def _method(t: ImportedTiming) -> str:
    return {
        "paired": "paired comparison of interleaved blocks",
        "unpaired": "unpaired comparison of block medians",
        "medians": "the files' own medians",
    }[t.method]


def _workload(study: Study, ev: ImportedEvaluation) -> list[str]:
    shapes = "; ".join(
        f"`{op}` at " + ", ".join(f"{k} = {v}" for k, v in sizes.items()) for op, sizes in ev.sizes.items()
    )
    return [declared_workload(study, None), f"The imported files measured one shape: {shapes or 'none'}."]


def _operation(study: Study) -> list[str]:
    rows = []
    for op in study.operations:
        for arm, side in (("baseline", op.baseline), ("change", op.change)):
            rows.append([f"`{op.name.id}`", arm, fmt.code(fmt.snippet(study, side.span)) if side else "—"])
    return [
        mechanism_sentence(study),
        fmt.table("Implementations, as imported", ["operation", "arm", "from"], rows),
        *(models_table(study, op) for op in study.operations),
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
            *(_quantity(quantity, arms.get(arm)) for arm in ARMS),
            _model_ratio(arms),
        ]
        for op, models in ev.models.items()
        for quantity, arms in models.items()
    ]
    if not rows:
        return ["No mechanism quantity is modelled."]
    counted = "counted: see below" if ev.counted else "not counted: no profiler file was imported"
    profiled = {c.operation for c in ev.counted}
    return [
        *(modelled_warning(op) for op in ev.models if op not in profiled),
        fmt.table(
            f"Modelled per call ({counted})",
            ["operation", "quantity", "baseline", "change", "ratio"],
            rows,
            numeric=(2, 3, 4),
        ),
    ]


def _quantity(name: str, value: float | None) -> str:
    return fmt.MISSING if value is None else quantity_value(name, value)


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


def _limit_not_measured(limit: Limit) -> list[str]:
    """Each shape of a `limit regression`: an imported study times only the workload's one shape."""
    if limit.kind.id != "regression":
        return []
    return [
        f"{fmt.TIMES.join(str(v) for v in sizes.values())}: {NOT_MEASURED}: the imported files measured "
        "the workload's shape only"
        for sizes in shape_dicts(limit.shapes)
    ]


def _cited(ev: ImportedEvaluation, ref: QuantityRef) -> str:
    """A quantity a rejected alternative cites, from the imported evaluation, or why it holds none."""
    name, quantity = ref.subject.id, ref.quantity.id
    if quantity == "time":
        timings = [*ev.timings, *(a.timing for a in ev.applications)]
        timing = next((t for t in timings if t.operation == name), None)
        if timing is None:
            return missing(f"no imported timing of `{name}`")
        return f"imported time ratio (change / baseline) {_ratio(timing)}: **{fmt.message(timing.verdict)}**"
    counted = [
        q for c in ev.counted if c.operation == name and c.judged for q in c.quantities if q.name == quantity
    ]
    if counted and counted[0].ratio is not None:
        return f"counted ratio (change / baseline) {fmt.ratio(counted[0].ratio)}, from the imported profile"
    arms = ev.models.get(name, {}).get(quantity)
    if arms is None:
        return missing(f"the imported evaluation holds no `{quantity}` of `{name}`")
    return f"modelled ratio (change / baseline) {_model_ratio(arms)}, from the study's formulas, not counted"


def _unjudged_counts(ev: ImportedEvaluation) -> str:
    """How page 1 says a modelled prediction was not counted: an imported profile may count another build."""
    if any(not c.judged for c in ev.counted):
        return "no counter measured the timed code"
    return "no counter measured it"


def _reproduction(study: Study, ev: ImportedEvaluation, bundle_label: str) -> list[str]:
    timings = [*ev.timings, *(a.timing for a in ev.applications)]
    files: Sequence[str] = sorted(
        {side.file for t in timings for side in (t.baseline, t.change)} | {c.file for c in ev.counted}
    )
    study_file = Path(study.source.path).name
    return [
        *commands_blocks(None, study_file, bundle_label, ev.run_id),
        "The imported files were copied into the bundle and no code was run. "
        f"`perfdsl verify` rechecks the copies ({', '.join(f'`{f}`' for f in files)}) against the manifest.",
    ]
