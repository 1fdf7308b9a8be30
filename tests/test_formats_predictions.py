"""`perfdsl evaluate --junit/--summary/--fail-on`: predictions as CI tests, and the stated fail policy.

The JUnit rendering of a constructed evaluation is compared with a golden file;
regenerate it with `UPDATE_GOLDENS=1 pytest tests/test_formats_predictions.py`
and review the diff. The planted bundle's change is 0.8 x the baseline, so
`op.time ratio <= 0.9` confirms; the application is 0.9 x, so `app.time ratio
<= 0.5` refutes; the study declares `adopt`, which that refutation contradicts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import attrs
import pytest
from evaluate_fixtures import make_bundle

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.evaluate.evaluation import evaluate
from perfdsl.evaluate.inputs import open_evaluated
from perfdsl.formats import predictions
from perfdsl.formats.predictions import (
    PolicyError,
    failures,
    invalid_reasons,
    parse_fail_on,
    render_junit,
    render_summary,
)

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = Path(__file__).resolve().parent / "fixtures" / "formats" / "predictions.xml"
UPDATE = os.environ.get("UPDATE_GOLDENS") == "1"
LINES = (
    "op.time ratio <= 0.9",
    "app.time ratio <= 0.5",
    "op.bytes ratio <= 0.5",
    "op.tensor_pipe ratio <= 1.0",
)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory) -> Evaluation:
    """Confirmed, refuted, modelled and not-evidence predictions, with a fixed run id for the golden."""
    bundle = make_bundle(tmp_path_factory.mktemp("mixed"), predictions=LINES)
    return attrs.evolve(evaluate(open_evaluated(bundle)), run_id="20261201T000000Z-000000")


@pytest.fixture(scope="module")
def clean(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_bundle(tmp_path_factory.mktemp("clean"), predictions=("op.time ratio <= 0.9",))


def test_junit_matches_golden(mixed: Evaluation) -> None:
    rendered = render_junit(mixed)
    if UPDATE:
        GOLDEN.write_text(rendered, encoding="utf-8")
    assert rendered == GOLDEN.read_text(encoding="utf-8")


def test_junit_has_one_case_per_prediction_and_fails_the_refuted(mixed: Evaluation) -> None:
    suite = ET.fromstring(render_junit(mixed)).find("testsuite")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases[:-1]] == [f"line {p.line}: {p.text}" for p in mixed.predictions]
    outcome = {
        c.get("name").split(": ", 1)[1]: "failure"
        if c.find("failure") is not None
        else "skipped"
        if c.find("skipped") is not None
        else "passed"
        for c in cases[:-1]
    }
    assert outcome == {
        "op.time ratio <= 0.9": "passed",
        "app.time ratio <= 0.5": "failure",
        "op.bytes ratio <= 0.5": "passed",
        "op.tensor_pipe ratio <= 1.0": "skipped",
    }
    decision = cases[-1]
    assert decision.get("name") == "decision: adopt"
    assert decision.find("failure").get("type") == "contradicted"
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("5", "2", "1")


@pytest.mark.parametrize(
    ("policy", "kinds"),
    [
        ("none", set()),
        ("refuted", {"refuted"}),
        ("contradicted", {"contradicted"}),
        ("invalid", set()),
        ("refuted,invalid,contradicted", {"refuted", "contradicted"}),
    ],
)
def test_policy_names_what_fails(mixed: Evaluation, policy: str, kinds: set[str]) -> None:
    found = failures(mixed, parse_fail_on(policy))
    assert {line.split(":", 1)[0] for line in found} == kinds


def test_invalid_evidence_fails_an_invalid_policy(tmp_path: Path) -> None:
    broken = evaluate(
        open_evaluated(make_bundle(tmp_path, predictions=("op.time ratio <= 0.9",), correct=False))
    )
    (prediction,) = broken.predictions
    assert failures(broken, {"invalid"}) == [
        "invalid: operation `op` fails its correctness check",
        f"invalid: line {prediction.line}: op.time ratio <= 0.9: {prediction.message}",
    ]


def test_a_prediction_invalid_with_the_run_standing_fails_an_invalid_policy_as_its_junit_case_does(
    tmp_path: Path,
) -> None:
    # Both shapes above the measured copy roof: the prediction is invalid, nothing else is.
    above_roof = evaluate(
        open_evaluated(make_bundle(tmp_path, predictions=("op.time ratio <= 0.9",), copy_level=1.0))
    )
    (prediction,) = above_roof.predictions
    assert prediction.verdict == "invalid" and invalid_reasons(above_roof) == []
    assert failures(above_roof, {"invalid"}) == [
        f"invalid: line {prediction.line}: op.time ratio <= 0.9: {prediction.message}"
    ]
    suite = ET.fromstring(render_junit(above_roof, {"invalid"})).find("testsuite")
    assert suite.findall("testcase")[0].find("failure") is not None


def test_junit_passes_only_what_is_confirmed_and_fails_invalid_where_the_policy_does(tmp_path: Path) -> None:
    """Invalid and inconclusive predictions were passing test cases, green beside a failing job."""
    broken = evaluate(
        open_evaluated(make_bundle(tmp_path, predictions=("op.time ratio <= 0.9",), correct=False))
    )
    assert [p.verdict for p in broken.predictions] == ["invalid"]

    def outcome(policy: set[str]) -> tuple[str, str | None]:
        case = ET.fromstring(render_junit(broken, policy)).find("testsuite").findall("testcase")[0]
        element = case.find("failure") if case.find("failure") is not None else case.find("skipped")
        if element is None:
            return ("passed", None)
        return element.tag, element.get("type") or element.get("message")

    assert outcome(set()) == ("skipped", f"invalid: {broken.predictions[0].message}")
    assert outcome({"invalid"}) == ("failure", "invalid")
    inconclusive = attrs.evolve(broken.predictions[0], verdict="inconclusive")
    suite = ET.fromstring(render_junit(attrs.evolve(broken, predictions=(inconclusive,)))).find("testsuite")
    assert suite.findall("testcase")[0].find("skipped") is not None and suite.get("skipped") == "1"


def test_the_summary_says_what_an_unsupported_decision_lacks(mixed: Evaluation) -> None:
    unsupported = attrs.evolve(
        mixed,
        decision=attrs.evolve(
            mixed.decision,
            consistent=True,
            findings=(),
            unsupported=("the end-to-end verdict is inconclusive",),
        ),
    )
    text = render_summary(unsupported)
    assert "Decision: **adopt**, not contradicted by the evidence, but not yet supported:" in text
    assert "- the end-to-end verdict is inconclusive" in text and "consistent with the evidence" not in text


def test_unknown_condition_is_refused() -> None:
    with pytest.raises(PolicyError, match="unknown condition 'slower'"):
        parse_fail_on("refuted,slower")


def test_summary_is_a_markdown_table_with_the_policy_outcome(mixed: Evaluation) -> None:
    text = render_summary(mixed, {"refuted"})
    refuted = next(p for p in mixed.predictions if p.verdict == "refuted")
    assert f"| {refuted.line} | `app.time ratio <= 0.5` | measured |" in text
    assert text.count("**refuted**") == 1
    assert "Fail policy `refuted`: **the job fails**" in text
    assert "Decision: **adopt**, contradicted:" in text
    assert "Fail policy: none" in render_summary(mixed)


def _evaluate(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "perfdsl", "evaluate", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=600,
    )


@pytest.mark.slow
def test_exit_status_follows_the_policy(mixed: Evaluation, clean: Path, tmp_path: Path) -> None:
    refuting = make_bundle(tmp_path / "r", predictions=("op.time ratio <= 0.5",))
    assert _evaluate(str(refuting)).returncode == 0
    failed = _evaluate(str(refuting), "--fail-on", "refuted")
    assert failed.returncode == 1
    assert "fails the policy: refuted: line" in failed.stderr
    passing = _evaluate(str(clean), "--fail-on", "refuted,invalid,contradicted")
    assert passing.returncode == 0, passing.stderr
    assert _evaluate(str(clean), "--fail-on", "bogus").returncode == 2


@pytest.mark.slow
def test_command_writes_junit_and_appends_the_summary(clean: Path, tmp_path: Path) -> None:
    junit, summary = tmp_path / "predictions.xml", tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    done = _evaluate(str(clean), "--junit", str(junit), "--summary", str(summary))
    assert done.returncode == 0, done.stderr
    assert ET.parse(junit).getroot().find("testsuite").get("tests") == "2"
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n### perfdsl: `planted`")
    assert predictions.FAIL_ON == ("refuted", "invalid", "contradicted")


def test_the_summary_and_junit_of_a_quick_run_say_it_is_no_evidence(mixed: Evaluation) -> None:
    # A client gated CI on a quick run's summary and JUnit, which never said "smoke"; `compare`
    # called the same run not evidence.
    quick = attrs.evolve(mixed, quick=True)
    assert "**Smoke run (--quick):" in render_summary(quick)
    assert "smoke" not in render_summary(mixed).lower()
    suite = ET.fromstring(render_junit(quick)).find("testsuite")
    assert suite.find("system-out").text.startswith("smoke run (--quick)")
    # The schema's order: the cases, then the suite's system-out, then its system-err.
    tags = [child.tag for child in suite]
    assert tags[-1] == "system-out" and "system-out" not in [
        c.tag for c in ET.fromstring(render_junit(mixed)).find("testsuite")
    ]


def test_junit_fails_the_run_s_own_invalid_evidence_where_the_policy_does(tmp_path: Path) -> None:
    # Predictions edited after the run failed `--fail-on invalid` with exit 1 while JUnit counted
    # no failure: the reason sat in the suite's system-err alone.
    broken = evaluate(
        open_evaluated(make_bundle(tmp_path, predictions=("op.time ratio <= 0.9",), correct=False))
    )
    gated = ET.fromstring(render_junit(broken, {"invalid"})).find("testsuite")
    (evidence,) = [c for c in gated.findall("testcase") if c.get("name") == "evidence: valid"]
    assert evidence.find("failure").text == "invalid: operation `op` fails its correctness check"
    assert gated.find("system-err") is None
    assert int(gated.get("failures")) == len(
        [c for c in gated.findall("testcase") if c.find("failure") is not None]
    )
    ungated = ET.fromstring(render_junit(broken)).find("testsuite")
    assert [c for c in ungated.findall("testcase") if c.get("name") == "evidence: valid"] == []
    assert ungated.find("system-err").text == "invalid: operation `op` fails its correctness check"
