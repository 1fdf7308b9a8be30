"""A `limit regression`'s shapes are measured by an ordinary run and judged apart from the workload.

The plan times them beside the workload's shapes (weight 0, marked `limit`),
the evaluation keeps them out of the combination, the workload's Holm family,
the regressions and the decision, and the limitations section says, shape by
shape, whether the limit held, with the ratio and its interval. The planted
bundles go through the real writer and reader (`evaluate_fixtures.make_bundle`),
their limit shapes from a generator of their own, so a bundle with limits has
the same workload samples as one without.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import attrs
import pytest
import run_support
from evaluate_fixtures import make_bundle, study_text

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.kernels import Finding
from perfdsl.bundle.files import replace_file
from perfdsl.bundle.plan import Plan
from perfdsl.commands.evaluate import summary
from perfdsl.evaluate.evaluation import evaluate, write_evaluation
from perfdsl.evaluate.inputs import open_evaluated
from perfdsl.nodes import Study
from perfdsl.parse import parse
from perfdsl.plan import plan
from perfdsl.report.formatting import TIMES, interval, ratio
from perfdsl.report.markdown import render_markdown
from perfdsl.source import Source

SHORT_ROWS = (65536, 8)
LIMITS = (
    '  limit regression "Short rows" { shapes (M, N) in [(65536, 8), (4096, 2)] }\n'
    '  limit regression "The first shape" { shapes (M, N) in [(64, 4096), (65536, 8)] }\n'
    '  limit unsupported "float16"\n'
)


def _study(sections: str = LIMITS) -> Study:
    parsed = parse(Source("study.perf", study_text(["op.time ratio <= 0.9"], sections=sections)))
    assert parsed.study is not None
    return parsed.study


# ---------------------------------------------------------------- the plan


def test_a_full_run_times_each_limit_shape_once_beside_the_workload_with_weight_0() -> None:
    planned = plan(_study(), "cpu", quick=False)
    shapes = planned.operations[0].shapes
    assert [(s.label, s.weight, s.limit) for s in shapes] == [
        ("64x4096", 0.75, False),
        ("256x1024", 0.25, False),
        ("65536x8", 0.0, True),
        ("4096x2", 0.0, True),
    ]
    # (64, 4096) is a workload shape: timed once, as the workload's; (65536, 8) is named twice.
    assert [(p.declared, p.sizes, p.missing) for p in planned.limits] == [
        ({"M": 65536, "N": 8}, {"M": 65536, "N": 8}, None),
        ({"M": 4096, "N": 2}, {"M": 4096, "N": 2}, None),
        ({"M": 64, "N": 4096}, {"M": 64, "N": 4096}, None),
    ]


def test_quick_times_the_smallest_shape_of_each_limit_shrunk_and_says_why_not_the_others() -> None:
    planned = plan(_study(), "cpu", quick=True)
    limit_shapes = [s.sizes for s in planned.operations[0].shapes if s.limit]
    assert limit_shapes == [{"M": 4096, "N": 2}]
    by_shape = {tuple(p.declared.values()): p for p in planned.limits}
    assert by_shape[SHORT_ROWS].sizes is None
    assert by_shape[SHORT_ROWS].missing == "`--quick` measures only the smallest shape of each limit"
    # The second limit's smallest is the workload's first shape, shrunk as the workload's is.
    first = by_shape[(64, 4096)].sizes
    assert first is not None and first in [s.sizes for s in planned.operations[0].shapes if not s.limit]


def test_a_large_limit_shape_is_shrunk_like_a_workload_shape_under_quick() -> None:
    only = '  limit regression "Short rows" { shapes (M, N) in [(65536, 8)] }\n'
    planned = plan(_study(only), "cpu", quick=True)
    (limit,) = planned.limits
    assert limit.sizes == {"M": 32768, "N": 8}  # 2^18 elements, the rows still 8 long
    assert [s.sizes for s in planned.operations[0].shapes if s.limit] == [limit.sizes]


def test_the_simulator_times_no_limit_shape() -> None:
    planned = plan(_study(), "cudasim", quick=False)
    assert not any(s.limit for s in planned.operations[0].shapes)
    assert {p.missing for p in planned.limits} == {
        "the simulator's timings are not evidence, so it times no limit shape"
    }


def test_a_run_of_selected_shapes_times_no_limit_shape_it_was_not_asked_for() -> None:
    planned = plan(_study(), "cpu", quick=False, only=[{"M": 64, "N": 4096}])
    assert [s.limit for s in planned.operations[0].shapes] == [False]
    missing = {tuple(p.declared.values()): p.missing for p in planned.limits}
    assert missing[SHORT_ROWS] == "the run measured only the shapes it was asked for (`--shape`)"
    assert missing[(64, 4096)] is None


def test_the_plan_records_limit_shapes_and_an_older_plan_reads_with_none() -> None:
    planned = plan(_study(), "cpu", quick=False)
    again = Plan.from_json(planned.to_json(), Path("plan.json"), study_text=planned.study_text)
    assert again.limits == planned.limits and again.operations == planned.operations
    old = planned.to_json()
    old["schema"] = "perfdsl.plan/3"
    del old["limits"]
    for op in old["operations"]:
        op["shapes"] = [{k: v for k, v in s.items() if k != "limit"} for s in op["shapes"] if not s["limit"]]
    read = Plan.from_json(old, Path("plan.json"), study_text=planned.study_text)
    assert read.limits == () and not any(s.limit for s in read.operations[0].shapes)


# ---------------------------------------------------------------- evaluation and report


def _evaluated(tmp: Path, **planted: Any) -> tuple[Path, Evaluation]:
    bundle = make_bundle(tmp, **planted)
    write_evaluation(open_evaluated(bundle), evaluate(open_evaluated(bundle)))
    return bundle, Evaluation.read(bundle)


def _limitations(bundle: Path, evaluation: Evaluation) -> str:
    study = parse(Source("study.perf", (bundle / "study.perf").read_text())).study
    assert study is not None
    markdown, _ = render_markdown(study, evaluation, open_evaluated(bundle))
    section = markdown.split("Limitations", 1)[1]
    return section.split("\n## ", 1)[0]


def test_a_slower_limit_shape_is_reported_as_regressing_with_its_ratio_and_interval(tmp_path: Path) -> None:
    bundle, evaluation = _evaluated(tmp_path, limits={SHORT_ROWS: 1.3})
    (op,) = evaluation.operations
    (limit,) = op.limits
    assert limit.label == "65536x8" and limit.weight == 0.0
    assert limit.usable is not None and limit.usable.verdict == "slower"
    assert limit.usable.ratio == pytest.approx(1.3, rel=0.02)
    text = _limitations(bundle, evaluation)
    found = re.search(
        rf"65536{TIMES}8: regresses as stated: slower, "
        r"ratio (1\.\d+) \[(1\.\d+), (1\.\d+)\] \(95% interval\)",
        text,
    )
    assert found, text
    ratio, low, high = (float(g) for g in found.groups())
    assert low <= ratio <= high and ratio == pytest.approx(1.3, rel=0.02)


@pytest.mark.parametrize(("planted", "verdict"), [(1.0, "no meaningful change"), (0.7, "faster")])
def test_a_limit_shape_that_does_not_regress_says_so(tmp_path: Path, planted: float, verdict: str) -> None:
    bundle, evaluation = _evaluated(tmp_path, limits={SHORT_ROWS: planted})
    text = _limitations(bundle, evaluation)
    assert f"65536{TIMES}8: does not regress here: {verdict}, ratio " in text, text
    assert "regresses as stated" not in text


def test_limit_shapes_change_no_combination_family_regression_prediction_or_decision(tmp_path: Path) -> None:
    """The workload's samples are the same in both bundles: so must every conclusion drawn from them be."""
    _, plain = _evaluated(tmp_path / "plain")
    _, limited = _evaluated(tmp_path / "limited", limits={SHORT_ROWS: 1.3, (4096, 2): 1.25})
    (a,), (b,) = plain.operations, limited.operations
    assert len(b.limits) == 2 and all(s.usable and s.usable.verdict == "slower" for s in b.limits)
    assert b.regressions == () == a.regressions
    assert limited.decision == plain.decision and limited.decision.consistent
    assert limited.family == plain.family
    assert limited.predictions == plain.predictions
    assert b.shapes == a.shapes and b.combined == a.combined
    assert limited.quality == plain.quality and limited.contended == plain.contended
    # The limit shapes have a family of their own.
    assert limited.limit_family is not None
    assert limited.limit_family.names == ("op 65536x8", "op 4096x2")


def test_a_limit_shape_that_is_a_workload_shape_is_timed_once_and_reported_in_both_places(
    tmp_path: Path,
) -> None:
    bundle, evaluation = _evaluated(tmp_path, kernel_ratio=0.8, limits={(64, 4096): 1.0, SHORT_ROWS: 1.3})
    (op,) = evaluation.operations
    assert [s.label for s in op.limits] == ["65536x8"]
    assert [s.label for s in op.shapes] == ["64x4096", "256x1024"]
    text = _limitations(bundle, evaluation)
    workload = op.shapes[0].usable
    assert workload is not None and workload.interval is not None
    line = next(line for line in text.splitlines() if line.strip().startswith(f"- 64{TIMES}4096"))
    assert line.strip() == (
        f"- 64{TIMES}4096 (a workload shape too, timed once and judged in the workload's family): "
        f"does not regress here: faster, ratio {ratio(workload.ratio)} {interval(*workload.interval)} "
        "(95% interval)"
    )


def test_the_evaluate_summary_lists_limit_shapes_after_the_weighted_line(tmp_path: Path) -> None:
    _, evaluation = _evaluated(tmp_path, limits={SHORT_ROWS: 1.3})
    lines = summary(evaluation).splitlines()
    weighted = next(i for i, line in enumerate(lines) if line.strip().startswith("weighted"))
    assert re.fullmatch(r"  65536x8 {8}limit {3}1\.\d{4} \[1\.\d{4}, 1\.\d{4}\]  slower", lines[weighted + 1])


def test_a_workload_shape_that_regresses_where_a_limit_says_so_is_named_as_declared(tmp_path: Path) -> None:
    bundle, evaluation = _evaluated(tmp_path, kernel_ratio=(1.2, 0.7), limits={(64, 4096): 1.2})
    assert evaluation.operations[0].regressions == ("64x4096",)
    text = _limitations(bundle, evaluation)
    assert "is slower with the change at 64x4096 (a `limit regression` declares it)." in text
    assert f"- 64{TIMES}4096 (a workload shape too, timed once and judged in the workload's family): " in text
    assert "regresses as stated: slower" in text


def test_a_bundle_from_before_limit_shapes_still_evaluates_and_builds(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path, limits={SHORT_ROWS: 1.3})
    planned = json.loads((bundle / "plan.json").read_text())
    planned["schema"] = "perfdsl.plan/3"
    del planned["limits"]
    for op in planned["operations"]:
        op["shapes"] = [{k: v for k, v in s.items() if k != "limit"} for s in op["shapes"] if not s["limit"]]
    results = json.loads((bundle / "results.json").read_text())
    for op in results["operations"]:
        op["shapes"] = [s for s in op["shapes"] if not s.get("limit")]
    replace_file(bundle, "plan.json", json.dumps(planned).encode())
    replace_file(bundle, "results.json", json.dumps(results).encode())
    write_evaluation(open_evaluated(bundle), evaluate(open_evaluated(bundle)))
    evaluation = Evaluation.read(bundle)
    assert evaluation.operations[0].limits == ()
    text = _limitations(bundle, evaluation)
    assert (
        f"65536{TIMES}8: not measured in this run: the run planned no limit shapes "
        "(a bundle of an earlier perfdsl)" in text
    )


# ---------------------------------------------------------------- a real quick run


@pytest.mark.slow
def test_a_quick_run_times_the_limit_shape_and_marks_it_in_the_bundle(
    quick_runs: run_support.QuickRuns,
) -> None:
    bundle = quick_runs("studies/rmsnorm_cpu.perf").bundle
    planned = run_support.read_json(bundle / "plan.json")
    (limit,) = planned["limits"]
    assert limit["declared"] == {"M": 65536, "N": 8} and limit["sizes"] == {"M": 32768, "N": 8}
    results = run_support.read_json(bundle / "results.json")
    (shape,) = [s for s in results["operations"][0]["shapes"] if s["limit"]]
    assert shape["weight"] == 0.0 and shape["samples"] == "samples/normalize/32768x8.csv"
    _, rows = run_support.read_csv(bundle / shape["samples"])
    assert {"baseline", "change"} <= {row["arm"] for row in rows}
    evaluation = evaluate(open_evaluated(bundle))
    assert [s.label for s in evaluation.operations[0].limits] == ["32768x8"]
    text = _limitations(bundle, evaluation)
    assert f"- 65536{TIMES}8 (run as 32768{TIMES}8 under `--quick`): " in text, text


def test_a_limit_shape_s_warnings_stand_beside_its_verdict(tmp_path: Path) -> None:
    """A planted null's limit shape read "regresses as stated" while its warm-up never settled
    (PQ008), a warning said only in evaluation.json."""
    bundle, evaluation = _evaluated(tmp_path, limits={SHORT_ROWS: 1.3})
    (op,) = evaluation.operations
    (limit,) = op.limits
    warning = Finding("PQ008", "warning", "warm-up never settled: op 65536x8 baseline", "op 65536x8")
    planted = attrs.evolve(limit, findings=(*limit.findings, warning))
    evaluation = attrs.evolve(evaluation, operations=(attrs.evolve(op, limits=(planted,)),))
    text = _limitations(bundle, evaluation)
    assert re.search(r"regresses as stated: slower, .*; but .*PQ008 warm-up never settled", text), text
