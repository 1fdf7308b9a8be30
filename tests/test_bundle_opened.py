"""`open_bundle`: a bundle verified once and read whole, so the stages after it read no file again."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from evaluate_fixtures import make_bundle

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.opened import BundleRefused, open_bundle
from perfdsl.evaluate.evaluation import evaluate, write_evaluation
from perfdsl.parse import parse
from perfdsl.report.markdown import render_markdown
from perfdsl.source import Source


def test_a_tampered_bundle_is_refused_with_every_problem_and_a_stale_evaluation_is_due(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    opened = open_bundle(bundle)
    assert not opened.evaluation_current  # never evaluated
    write_evaluation(opened, evaluate(opened))
    assert open_bundle(bundle).evaluation_current
    (bundle / "evaluation.json").write_text("{}")
    assert not open_bundle(bundle).evaluation_current  # derived: rewritten, not refused
    (bundle / "plan.json").write_text("{}")
    (bundle / "study.perf").write_text("")
    with pytest.raises(BundleRefused) as refused:
        open_bundle(bundle)
    assert refused.value.problems == [
        "`plan.json` has changed since the run",
        "`study.perf` has changed since the run",
    ]
    with pytest.raises(BundleRefused, match="no such bundle directory"):
        open_bundle(tmp_path / "nothing")


def test_the_report_renders_from_the_opened_records_alone(tmp_path: Path):
    bundle = make_bundle(tmp_path)
    opened = open_bundle(bundle)
    write_evaluation(opened, evaluate(opened))
    evaluation = Evaluation.read(bundle)
    study = parse(Source("study.perf", opened.study_text)).study
    assert study is not None
    expected, _ = render_markdown(study, evaluation, opened)
    shutil.rmtree(bundle)  # the records were read when the bundle was opened: no file is read again
    markdown, _ = render_markdown(study, evaluation, opened)
    assert markdown == expected and f"`{opened.results.run_id}`" in markdown
