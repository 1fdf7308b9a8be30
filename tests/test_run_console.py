"""What `perfdsl run` tells the console about a failing correctness check, read from the bundle."""

from __future__ import annotations

import json
from pathlib import Path

from evaluate_fixtures import make_bundle

from perfdsl.commands.run import correctness_failures


def _with_model_level(bundle: Path, model_level: dict) -> Path:
    results = json.loads((bundle / "results.json").read_text(encoding="utf-8"))
    results["application"]["model_level"] = model_level
    (bundle / "results.json").write_text(json.dumps(results), encoding="utf-8")
    return bundle


def _arm(variant: str, passed: bool, message: str) -> dict:
    return {
        "application": "app",
        "variant": variant,
        "target": "cpu",
        "shape": [["M", 4]],
        "seed": 0,
        "passed": passed,
        "output": None,
        "message": message,
    }


def test_an_application_that_raised_says_what_it_raised(tmp_path: Path) -> None:
    """The console said only "application `app`'s output against its float64 run": the error
    (an UnboundLocalError in the user's request) sat in the report alone."""
    raised = "with `fused`: raised UnboundLocalError: cannot access local variable 'scores'"
    bundle = _with_model_level(
        make_bundle(tmp_path),
        {
            "rule": "no worse than the baseline",
            "passed": False,
            "excess": {},
            "arms": {"baseline": _arm("unfused", True, ""), "change": _arm("fused", False, raised)},
        },
    )
    (line, advice) = correctness_failures(bundle)
    assert line.startswith("correctness FAILED: application `app`") and f"change: {raised}" in line
    assert "baseline" not in line.split("run: ", 1)[1]
    assert "fix it before reading the numbers" in advice


def test_an_application_worse_than_its_baseline_names_the_rule(tmp_path: Path) -> None:
    bundle = _with_model_level(
        make_bundle(tmp_path),
        {
            "rule": "rel_l2 no worse than the baseline's",
            "passed": False,
            "excess": {"rel_l2": 0.1},
            "arms": {"baseline": _arm("unfused", True, ""), "change": _arm("fused", True, "")},
        },
    )
    (line, _) = correctness_failures(bundle)
    assert "the change's error exceeds the baseline's (rel_l2 no worse than the baseline's)" in line
