"""`perfdsl evaluate --jsonl`: every verdict, prediction and finding as JSON lines a dashboard ingests.

Each line is checked against the checked-in JSON Schema with jsonschema, and the
lines of a planted bundle are read back into the evaluation's own verdicts,
predictions and findings: equal, number for number, to what evaluation.json holds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from evaluate_fixtures import make_bundle, planted_environment

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.imported import ImportedEvaluation
from perfdsl.cli import main
from perfdsl.formats import export
from perfdsl.parse import parse
from perfdsl.runtime.imported import run_imported
from perfdsl.source import Source

REPO = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((REPO / "perfdsl" / "formats" / "export.schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
SCALING = {
    "cores": {str(c): {"governor": "powersave", "siblings": [c]} for c in (0, 1)},
    "boost": True,
    "boost_source": "cpufreq/boost",
}
PREDICTIONS = ("op.time ratio <= 0.9", "op.bytes ratio <= 0.5", "app.time ratio <= amdahl")


def _lines(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    assert text.endswith("\n")
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict[str, Any]]]:
    """A planted bundle (a faster change, a powersave governor) evaluated with `--jsonl`."""
    tmp = tmp_path_factory.mktemp("export")
    environment = planted_environment("0.61.0", "a")
    environment["cpu"] = {**environment["cpu"], "state": SCALING, "affinity": {"run": [0, 1]}}
    bundle = make_bundle(tmp, predictions=PREDICTIONS, environment=environment)
    lines = tmp / "run.jsonl"
    assert main(["evaluate", str(bundle), "--jsonl", str(lines)]) == 0
    return bundle, _lines(lines)


def test_every_line_is_valid_under_the_schema(exported: tuple[Path, list[dict[str, Any]]]) -> None:
    _, lines = exported
    for line in lines:
        VALIDATOR.validate(line)
    assert lines[0]["kind"] == "run"
    assert {line["kind"] for line in lines} == set(export.KINDS)
    assert {(line["schema"], line["study"]) for line in lines} == {(export.SCHEMA, "planted")}


def test_the_schema_refuses_a_line_that_does_not_fit() -> None:
    good = {
        "schema": export.SCHEMA,
        "kind": "finding",
        "study": "s",
        "run_id": "r",
        "code": "PQ011",
        "severity": "warning",
        "message": "m",
        "subject": "machine",
    }
    VALIDATOR.validate(good)
    for wrong in (
        {**good, "severity": "fatal"},
        {**good, "schema": "perfdsl.export/0"},
        {k: v for k, v in good.items() if k != "run_id"},
        {**good, "kind": "verdict"},
        {**good, "extra": 1},
    ):
        assert not VALIDATOR.is_valid(wrong), wrong


def _verdicts_of(evaluation: Evaluation) -> dict[tuple[str, str | None, str | None], tuple[Any, ...]]:
    found: dict[tuple[str, str | None, str | None], tuple[Any, ...]] = {}
    for op in evaluation.operations:
        for s in op.shapes:
            c = s.comparison
            found["shape", op.name, s.label] = (c.ratio, c.ci_low, c.ci_high, c.verdict) if c else None
        c = op.combined
        found["combined", op.name, None] = (c.ratio, c.ci_low, c.ci_high, c.verdict) if c else None
    end = evaluation.end_to_end
    if end is not None:
        c = end.comparison
        found["end_to_end", end.operation, None] = (c.ratio, c.ci_low, c.ci_high, c.verdict) if c else None
    return found


def test_the_lines_round_trip_the_evaluations_verdicts_exactly(
    exported: tuple[Path, list[dict[str, Any]]],
) -> None:
    bundle, lines = exported
    evaluation = Evaluation.read(bundle)
    of = {kind: [line for line in lines if line["kind"] == kind] for kind in export.KINDS}
    read_back = {
        (v["scope"], v["operation"], v["shape"]): (v["ratio"], v["ci_low"], v["ci_high"], v["verdict"])
        if v["verdict"] is not None
        else None
        for v in of["verdict"]
    }
    assert read_back == _verdicts_of(evaluation)
    assert len(of["verdict"]) == len(read_back)
    assert [
        (p["line"], p["text"], p["verdict"], p["value"], p["ci_low"], p["ci_high"]) for p in of["prediction"]
    ] == [(p.line, p.text, p.verdict, p.value, *(p.ci or (None, None))) for p in evaluation.predictions]
    assert [(f["code"], f["severity"], f["message"], f["subject"]) for f in of["finding"]] == [
        (f.code, f.severity, f.message, f.subject) for f in evaluation.quality
    ]
    assert "PQ011" in {f["code"] for f in of["finding"]}
    assert evaluation.load is not None
    assert [(g["arm"], g["goodput_rps"], g["failing_rps"]) for g in of["goodput"]] == [
        (g.arm, g.goodput, g.failing) for g in evaluation.load.arms
    ]
    (decision,) = of["decision"]
    assert decision["contradictions"] == list(evaluation.decision.findings)
    (run,) = of["run"]
    assert (run["run_id"], run["evaluation"], run["threshold"]) == (
        evaluation.run_id,
        evaluation.schema,
        evaluation.threshold,
    )


def test_an_imported_studys_timings_export_too(tmp_path: Path) -> None:
    parsed = parse(Source.read(REPO / "studies" / "batchnorm_imported.perf"))
    assert parsed.study is not None
    bundle = run_imported(parsed.study, tmp_path / "art")
    lines_path = tmp_path / "imported.jsonl"
    assert main(["evaluate", str(bundle), "--jsonl", str(lines_path)]) == 0
    lines = _lines(lines_path)
    for line in lines:
        VALIDATOR.validate(line)
    evaluation = ImportedEvaluation.read(bundle)
    timings = [line for line in lines if line["kind"] == "verdict" and line["scope"] == "imported"]
    assert [(t["operation"], t["ratio"], t["verdict"]) for t in timings] == [
        (t.operation, t.ratio, t.indicated) for t in evaluation.timings
    ]
    expected = [None if t.evidence_grade else t.verdict for t in evaluation.timings]
    assert [t["invalid"] for t in timings] == expected
    assert len([line for line in lines if line["kind"] == "prediction"]) == len(evaluation.predictions)


def test_an_unwritable_export_path_is_one_line(
    exported: tuple[Path, list[dict[str, Any]]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle, _ = exported
    status = main(["evaluate", str(bundle), "--jsonl", str(tmp_path / "no-such-dir" / "x.jsonl")])
    err = capsys.readouterr().err
    assert status == 2 and "cannot write" in err and "Traceback" not in err


def test_limit_shapes_and_correctness_export_too(tmp_path: Path) -> None:
    """A limit shape's verdict and a failed correctness check had no line of their own."""
    bundle = make_bundle(tmp_path / "b", predictions=PREDICTIONS, limits={(4096, 64): 1.3}, correct=False)
    lines_path = tmp_path / "run.jsonl"
    main(["evaluate", str(bundle), "--jsonl", str(lines_path)])
    lines = _lines(lines_path)
    for line in lines:
        VALIDATOR.validate(line)
    evaluation = Evaluation.read(bundle)
    (limit_shape,) = evaluation.operations[0].limits
    (limit,) = [line for line in lines if line["kind"] == "verdict" and line["scope"] == "limit"]
    assert (limit["shape"], limit["ratio"]) == (limit_shape.label, limit_shape.comparison.ratio)
    (correctness,) = [line for line in lines if line["kind"] == "correctness"]
    assert correctness["operation"] == "op" and correctness["passed"] is False
    assert len(correctness["failing"]) == len(evaluation.operations[0].correctness.failing) > 0


def test_every_example_in_the_export_doc_is_a_line_of_the_current_schema() -> None:
    """docs/export.md shows one line of each kind: each must be one the schema takes."""
    import re

    text = (Path(__file__).resolve().parent.parent / "docs" / "export.md").read_text(encoding="utf-8")
    examples = [
        json.loads(line)
        for block in re.findall(r"```json\n(.*?)\n```", text, re.S)
        for line in block.splitlines()
    ]
    assert sorted(line["kind"] for line in examples) == sorted(export.KINDS)
    for line in examples:
        VALIDATOR.validate(line)
