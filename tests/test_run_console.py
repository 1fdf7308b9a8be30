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


def test_cases_that_failed_alike_are_one_line_and_the_advice_names_the_arms(tmp_path: Path) -> None:
    """A reference that raised printed its error on seventeen lines, and "no timing of a failing
    change" followed though both arms had failed."""
    bundle = make_bundle(tmp_path)
    results = json.loads((bundle / "results.json").read_text(encoding="utf-8"))
    (case, _) = results["operations"][0]["correctness"]["cases"]
    message = "reference `op` failed: TypeError: compute() takes its arrays by the names `inputs` gives them"
    cases = [
        {**case, "arm": arm, "variant": arm, "seed": seed, "passed": False, "message": message}
        for arm in ("baseline", "change")
        for seed in range(3)
    ]
    results["operations"][0]["correctness"].update({"passed": False, "cases": cases})
    (bundle / "results.json").write_text(json.dumps(results), encoding="utf-8")
    *lines, advice = correctness_failures(bundle)
    assert lines == [
        f"correctness FAILED: `op` {arm} (`{arm}`) at M=3 x N=31, seed 0 and 2 more cases: {message}"
        for arm in ("baseline", "change")
    ]
    assert advice.startswith("no timing of an arm that fails its check supports a decision")


def test_a_failing_case_is_named_in_the_study_s_order_of_its_symbols(tmp_path: Path) -> None:
    """results.json keeps a shape's keys sorted: a study declaring `(N, M)` read "M=3 x N=31"
    on the console beside "31x3" in the timing table."""
    bundle = make_bundle(tmp_path)
    results = json.loads((bundle / "results.json").read_text(encoding="utf-8"))
    (case, _) = results["operations"][0]["correctness"]["cases"]
    results["operations"][0]["correctness"].update({"passed": False, "cases": [{**case, "passed": False}]})
    (bundle / "results.json").write_text(json.dumps(results), encoding="utf-8")
    (line, _) = correctness_failures(bundle, ("N", "M"))
    assert " at N=31 x M=3, seed " in line
