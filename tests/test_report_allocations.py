"""The kernel timing section says when baseline and change took turns on each other's buffers."""

from __future__ import annotations

import json
from pathlib import Path

from evaluate_fixtures import make_bundle

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.files import replace_file
from perfdsl.evaluate.evaluation import evaluate, write_evaluation
from perfdsl.evaluate.inputs import open_evaluated
from perfdsl.parse import parse
from perfdsl.report.markdown import render_markdown
from perfdsl.source import Source

TURNS = "(each arm's own; baseline and change took turns on both, block by block)"


def _markdown(bundle: Path) -> str:
    opened = open_evaluated(bundle)
    write_evaluation(opened, evaluate(opened))
    study = parse(Source("study.perf", (bundle / "study.perf").read_text())).study
    assert study is not None
    markdown, _ = render_markdown(study, Evaluation.read(bundle), open_evaluated(bundle))
    return markdown


def _with_allocations(bundle: Path, allocations: int) -> Path:
    """The bundle with every rotation entry stating `allocations` (1: as before results/14) and its
    arm's regime (the steady-state table's rows), sealed again."""
    results = json.loads((bundle / "results.json").read_text())
    for op in results["operations"]:
        for shape in op["shapes"]:
            timing = shape["timing"]
            for entry in timing["rotation"]:
                if allocations > 1:
                    entry["allocations"] = allocations
            timing["regime"] = {entry["arm"]: "dram" for entry in timing["rotation"]}
    replace_file(bundle, "results.json", json.dumps(results).encode())
    return bundle


def test_the_steady_state_table_says_the_arms_took_turns_only_where_they_did(tmp_path: Path) -> None:
    took_turns = _with_allocations(make_bundle(tmp_path / "turns", change_unavoidable=8.0), 2)
    assert TURNS in _markdown(took_turns)
    # A bundle from before results/14: each arm ran on its own buffers, and the page says nothing new.
    alone = _markdown(_with_allocations(make_bundle(tmp_path / "own", change_unavoidable=8.0), 1))
    assert "Steady state and machine" in alone and TURNS not in alone
