"""A goodput the load generator limited: recomputed from a bundle, never the arm's capacity, and reported."""

from __future__ import annotations

from pathlib import Path

from evaluate_fixtures import make_bundle

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.evaluate.evaluation import evaluate, write_evaluation
from perfdsl.evaluate.inputs import open_evaluated
from perfdsl.parse import parse
from perfdsl.report.markdown import render_markdown
from perfdsl.source import Source

# The change serves 1000 rps at the SLO, but at 900 rps the generator falls behind its
# schedule (twice: the full run's second pass); the baseline's bracket closes on p99.
PROBES = {
    "baseline": (100.0, 200.0, 300.0, 450.0, 300.0, 450.0),
    "change": (200.0, 400.0, 600.0, 900.0, 600.0, 900.0),
}


def _planted(tmp_path: Path) -> Path:
    return make_bundle(
        tmp_path,
        capacities={"baseline": 400.0, "change": 1000.0},
        probes=PROBES,
        behind={"change": (900.0,)},
    )


def test_a_rate_lost_to_the_generator_leaves_a_lower_bound(tmp_path: Path) -> None:
    load = evaluate(open_evaluated(_planted(tmp_path))).load
    assert load is not None
    arms = {g.arm: g for g in load.arms}
    change, baseline = arms["change"], arms["baseline"]
    at_900 = [p.result for p in change.curve if p.rate == 900.0]
    # Counted from when each request was issued, every one met the SLO: the lateness is the generator's.
    assert all(r is not None and r.generator_limited for r in at_900)
    # Issues 20 ms behind by the end also cost throughput: the generator's loss, not the change's.
    # Its p99 counts as failed too (the growing lag correlates the latencies: few independent
    # requests), all on the generator's account.
    assert change.goodput == 600.0 and change.limited_by == ("p99", "throughput", "generator lag")
    assert change.lower_bound and change.failing is None
    assert (baseline.goodput, baseline.failing, baseline.confirmed) == (300.0, 450.0, True)
    assert not baseline.lower_bound
    # 600 / 300 is what the change served at least: never an exact capacity ratio.
    assert load.capacity_bound == "at least"


def test_the_report_names_the_generator_as_the_limit(tmp_path: Path) -> None:
    bundle = _planted(tmp_path)
    write_evaluation(open_evaluated(bundle), evaluate(open_evaluated(bundle)))
    evaluation = Evaluation.read(bundle)
    study = parse(Source("study.perf", (bundle / "study.perf").read_text())).study
    assert study is not None
    markdown, _ = render_markdown(study, evaluation, open_evaluated(bundle))
    rows = {line.split("|")[1].strip(): line for line in markdown.splitlines() if line.startswith("| ")}
    assert "600 rps or more" in rows["change"] and "behind at 900 rps" in rows["change"]
    assert "300 rps, below 450 rps" in rows["baseline"] and "on time" in rows["baseline"]
