"""An evaluation for CI: JUnit with one test case per prediction, a Markdown job summary, a fail policy.

A study kept next to its kernels is re-run on every change; CI can only act on
what it understands. JUnit (Jenkins, GitLab, Azure Pipelines, GitHub test
reporters) shows each `predict` line as a test: **confirmed** and
**inconclusive** pass (an inconclusive interval is not a refutation; its
message says so in `system-out`), **refuted** fails, **not evidence** is
skipped with the reason. One more case, `decision`, fails when the evidence
contradicts the declared decision.

Whether the job fails is a separate, stated policy (`--fail-on`), because the
same refuted prediction is a finding in an exploratory study and a gate in a
guarded one. The default is none: the command's exit status says only whether
it could evaluate, as it always has.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Iterable
from typing import TYPE_CHECKING

from perfdsl.formats.xml_text import xml_document
from perfdsl.numbers import intervals_at

if TYPE_CHECKING:
    from perfdsl.evaluate.evaluation import Evaluation
    from perfdsl.evaluate.predictions import PredictionResult

FAIL_ON = ("refuted", "invalid", "contradicted")
"""What `--fail-on` accepts, besides `none`:

* `refuted`: a prediction is refuted by its evidence;
* `invalid`: the run's evidence cannot stand: its timings are not evidence (the
  simulator), an operation or the application fails its correctness check, or
  the bundle's predictions are not the ones registered before the run;
* `contradicted`: the evidence contradicts the study's declared decision.
"""


class PolicyError(ValueError):
    """A `--fail-on` value that names no known condition (one line)."""


def parse_fail_on(text: str) -> frozenset[str]:
    """`refuted,invalid` -> the set of conditions; `none` (or empty) -> the empty set."""
    names = [part.strip() for part in text.split(",") if part.strip()]
    if names == ["none"] or not names:
        return frozenset()
    unknown = [n for n in names if n not in FAIL_ON]
    if unknown:
        raise PolicyError(
            f"--fail-on: unknown condition {unknown[0]!r}; give `none` or a comma-separated "
            f"list of {', '.join(FAIL_ON)}"
        )
    return frozenset(names)


def invalid_reasons(evaluation: Evaluation) -> list[str]:
    """Why the run's evidence cannot stand, one sentence each (empty when it can)."""
    e = evaluation
    reasons = []
    if not e.timings_valid:
        reasons.append(e.timings_note or f"timings on `{e.target}` are not evidence")
    reasons += [
        f"operation `{op.name}` fails its correctness check"
        for op in e.operations
        if not op.correctness.passed
    ]
    if e.model_level.failure is not None:
        reasons.append(e.model_level.failure)
    if not e.registration.matches:
        reasons.append(f"registration: {e.registration.message}")
    current = e.registration.current
    if current is not None and not current.matches:
        reasons.append(f"registration: {current.path}: {current.message}")
    return reasons


def failures(evaluation: Evaluation, policy: Iterable[str]) -> list[str]:
    """Every condition of `policy` the evaluation meets, one line each; empty: the job passes."""
    wanted = set(policy)
    found = []
    if "refuted" in wanted:
        found += [
            f"refuted: line {p.line}: {p.text}" for p in evaluation.predictions if p.verdict == "refuted"
        ]
    if "invalid" in wanted:
        found += [f"invalid: {reason}" for reason in invalid_reasons(evaluation)]
        # A prediction whose every shape was excluded (above its roof, say) is invalid with the
        # run's evidence otherwise standing: JUnit failed its case while the job passed.
        found += [
            f"invalid: line {p.line}: {p.text}: {p.message}"
            for p in evaluation.predictions
            if p.verdict == "invalid"
        ]
    if "contradicted" in wanted:
        found += [f"contradicted: {finding}" for finding in evaluation.decision.findings]
    return found


def _case_name(prediction: PredictionResult) -> str:
    return f"line {prediction.line}: {prediction.text}"


def _junit_outcome(prediction: PredictionResult, policy: frozenset[str]) -> str:
    """`failure`, `skipped` or `passed`: only a confirmed prediction passes.

    Refuted is a failure, and so is invalid where the policy names it (the job fails on it
    too); otherwise invalid, inconclusive and not evidence are skipped, with why. Passed
    with a note, they showed green in a CI system's test view beside a failing job.
    """
    if prediction.verdict == "refuted" or (prediction.verdict == "invalid" and "invalid" in policy):
        return "failure"
    return "passed" if prediction.verdict == "confirmed" else "skipped"


def render_junit(evaluation: Evaluation, policy: Iterable[str] = ()) -> str:
    """A `testsuites` document: one suite per evaluation, one case per prediction, then the decision."""
    e = evaluation
    wanted = frozenset(policy)
    classname = f"perfdsl.predict.{e.study}"
    decision_failed = not e.decision.consistent
    outcomes = [_junit_outcome(p, wanted) for p in e.predictions]
    # The run's own reasons against its evidence (a failed check, predictions edited after the
    # run) failed the job under `--fail-on invalid` while every case passed: a case of their own.
    notes = invalid_reasons(e)
    invalid = notes if "invalid" in wanted else []
    counts = {
        "tests": str(len(e.predictions) + 1 + bool(invalid)),
        "failures": str(outcomes.count("failure") + decision_failed + bool(invalid)),
        "errors": "0",
    }
    name = f"perfdsl predictions: {e.study} {e.run_id}"
    root = ET.Element("testsuites", {"name": name, **counts})
    skipped = str(outcomes.count("skipped"))
    suite = ET.SubElement(root, "testsuite", {"name": name, **counts, "skipped": skipped})
    for p, outcome in zip(e.predictions, outcomes, strict=True):
        case = ET.SubElement(suite, "testcase", {"classname": classname, "name": _case_name(p)})
        if outcome == "failure":
            ET.SubElement(case, "failure", {"type": p.verdict, "message": p.message}).text = p.message
        elif outcome == "skipped":
            ET.SubElement(case, "skipped", {"message": f"{p.verdict}: {p.message}"})
        else:
            ET.SubElement(case, "system-out").text = p.message
    declared = e.decision.declared or "none declared"
    case = ET.SubElement(suite, "testcase", {"classname": classname, "name": f"decision: {declared}"})
    if decision_failed:
        text = "\n".join(e.decision.findings)
        ET.SubElement(
            case, "failure", {"type": "contradicted", "message": e.decision.findings[0]}
        ).text = text
    if invalid:
        case = ET.SubElement(suite, "testcase", {"classname": classname, "name": "evidence: valid"})
        text = "\n".join(f"invalid: {n}" for n in invalid)
        ET.SubElement(case, "failure", {"type": "invalid", "message": invalid[0]}).text = text
    if _smoke(e):
        ET.SubElement(suite, "system-out").text = SMOKE_NOTE
    if notes and not invalid:
        ET.SubElement(suite, "system-err").text = "\n".join(f"invalid: {n}" for n in notes)
    return xml_document(root)


SMOKE_NOTE = (
    "smoke run (--quick): shapes scaled down and blocks few; these verdicts exercise the chain of "
    "evidence and are evidence of nothing"
)
"""What the summary and JUnit say of a quick run: a client read its verdicts as evidence, since
neither said so (`compare` calls the same run not evidence)."""


def _smoke(e: Evaluation) -> bool:
    """A `--quick` run of a target whose timings would otherwise be evidence (the simulator's
    runs are quick too, and their timings are never evidence, which `invalid` says)."""
    return e.quick and e.timings_valid


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: pipes escaped, no line breaks."""
    return " ".join(text.split()).replace("|", "\\|")


def _interval(value: float | None, ci: tuple[float, float] | None) -> str:
    if value is None:
        return "-"
    if ci is None or ci[0] == ci[1]:
        return f"{value:.4g}"
    return f"{value:.4g} [{ci[0]:.4g}, {ci[1]:.4g}]"


def render_summary(evaluation: Evaluation, policy: Iterable[str] = ()) -> str:
    """A Markdown job summary: the predictions' verdicts, each operation's ratio, what fails the job."""
    e = evaluation
    lines = [
        f"### perfdsl: `{e.study}` run `{e.run_id}` on {e.target}",
        "",
        *([f"**{SMOKE_NOTE[:1].upper()}{SMOKE_NOTE[1:]}.**", ""] if _smoke(e) else []),
        "Ratios are change / baseline (below 1 the change is faster), "
        f"{intervals_at(e.interval_level, e.level)}, practical threshold {e.threshold:.1%}.",
        "",
        "| line | prediction | basis | value [interval] | verdict |",
        "| ---: | --- | --- | --- | --- |",
    ]
    lines += [
        f"| {p.line} | `{_cell(p.text)}` | {p.basis} | {_interval(p.value, p.ci)} | **{p.verdict}** |"
        for p in e.predictions
    ]
    if not e.predictions:
        lines.append("| | the study makes no prediction | | | |")
    lines += ["", "| operation | time ratio [interval] | verdict |", "| --- | --- | --- |"]
    for op in e.operations:
        c = op.combined
        shown = (
            (_interval(c.ratio, (c.ci_low, c.ci_high)), c.verdict)
            if c
            else ("-", f"not evidence: {op.combined_missing}")
        )
        lines.append(f"| `{_cell(op.name)}` | {shown[0]} | {_cell(shown[1])} |")
    declared = e.decision.declared or "none declared"
    # As page 1 says it: evidence that does not contradict a decision may not yet support it.
    if not e.decision.consistent:
        said = "contradicted:"
    elif e.decision.unsupported:
        said = "not contradicted by the evidence, but not yet supported:"
    else:
        said = "consistent with the evidence."
    lines += ["", f"Decision: **{declared}**, {said}"]
    lines += [f"- {_cell(f)}" for f in e.decision.findings]
    lines += [f"- {_cell(u)}" for u in e.decision.unsupported]
    lines += [f"- invalid: {_cell(n)}" for n in invalid_reasons(e)]
    policy = sorted(set(policy))
    failing = failures(e, policy)
    lines.append("")
    if not policy:
        lines.append("Fail policy: none (`--fail-on`): this job does not fail on the verdicts.")
    elif failing:
        lines.append(f"Fail policy `{','.join(policy)}`: **the job fails**:")
        lines += [f"- {_cell(f)}" for f in failing]
    else:
        lines.append(f"Fail policy `{','.join(policy)}`: nothing it names was found.")
    return "\n".join(lines) + "\n"
