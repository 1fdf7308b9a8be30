"""`perfdsl compare` and `perfdsl history` on planted bundles written through the records writer.

Run A and an A/A rerun B draw the same kernel times (0.8 x baseline) with
different seeds; run C plants a change 12.5 % slower (0.9 x baseline) and a
newer numba; runs D and E plant a change slower than its baseline (1.2 x). So
compare(A, B) must find no meaningful change and nothing slower, compare(A, C)
must name the change arm slower at both shapes and list numba's version before
any number, and the history must mark D, not E, as where a regression entered.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

import attrs
import pytest
from evaluate_fixtures import make_bundle, planted_environment

from perfdsl.bundle.environment import EnvironmentRecord, differences
from perfdsl.history.across import DifferentStudies, compare_runs, render_text
from perfdsl.history.page import render_page
from perfdsl.history.runs import read_run
from perfdsl.history.timeline import build_timeline

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Five runs of `planted` in one artifacts directory, oldest first."""
    root = tmp_path_factory.mktemp("runs")
    planted = (
        ("a", 1, 0.8, "0.68.1", "20261201T010000Z-aaaaaa"),
        ("b", 2, 0.8, "0.68.1", "20261201T020000Z-bbbbbb"),
        ("c", 3, 0.9, "0.69.0", "20261201T030000Z-cccccc"),
        ("d", 4, 1.2, "0.69.0", "20261201T040000Z-dddddd"),
        ("e", 5, 1.2, "0.69.0", "20261201T050000Z-eeeeee"),
    )
    for commit, seed, ratio, numba, run_id in planted:
        made = make_bundle(
            root / commit,
            seed=seed,
            kernel_ratio=ratio,
            environment=planted_environment(numba, commit),
            run_id=run_id,
        )
        target = root / "artifacts" / "planted" / run_id
        target.parent.mkdir(parents=True, exist_ok=True)
        made.rename(target)
    return root / "artifacts"


def _run(artifacts: Path, letter: str) -> Path:
    return next((artifacts / "planted").glob(f"*-{letter * 6}"))


def test_a_against_a_is_no_meaningful_change(artifacts: Path) -> None:
    result = compare_runs(read_run(_run(artifacts, "a")), read_run(_run(artifacts, "b")))
    assert result.environment == ()
    assert result.slower == ()
    verdicts = {(op.name, arm): c.verdict for op in result.operations for arm, c in op.combined}
    assert verdicts == {("op", "baseline"): "no meaningful change", ("op", "change"): "no meaningful change"}


def test_a_planted_slowdown_is_named_after_theplanted_environment(artifacts: Path) -> None:
    result = compare_runs(read_run(_run(artifacts, "a")), read_run(_run(artifacts, "c")))
    assert result.slower == ("op change at 64x4096", "op change at 256x1024")
    (change,) = [c for arm, c in result.operations[0].combined if arm == "change"]
    assert 1.10 < change.ci_low <= change.ratio <= change.ci_high < 1.15
    text = render_text(result)
    numba = text.index("package numba: 0.68.1 -> 0.69.0")
    assert numba < text.index("not interleaved") < text.index("1.1")
    assert re.search(r"^\s+change .* slower$", text, re.MULTILINE)


def test_b_over_a_is_one_over_a_over_b_at_every_shape(artifacts: Path) -> None:
    # Each order drew its own bootstrap replicates: 0.9716 one way where 1 / 1.0234 = 0.9771.
    a, c = read_run(_run(artifacts, "a")), read_run(_run(artifacts, "c"))
    forward, backward = compare_runs(a, c), compare_runs(c, a)
    pairs = [
        (one.comparison, other.comparison)
        for op_f, op_b in zip(forward.operations, backward.operations, strict=True)
        for shape_f, shape_b in zip(op_f.shapes, op_b.shapes, strict=True)
        for one, other in zip(shape_f.arms, shape_b.arms, strict=True)
    ]
    assert len(pairs) == 4
    for one, other in pairs:
        assert one.ratio * other.ratio == pytest.approx(1.0, rel=1e-12)
        assert one.ci_low * other.ci_high == pytest.approx(1.0, rel=1e-12)
        assert one.ci_high * other.ci_low == pytest.approx(1.0, rel=1e-12)
        assert (one.n_baseline, one.n_change) == (other.n_change, other.n_baseline)


def test_environment_differences_name_each_changed_fact() -> None:
    before = EnvironmentRecord.from_json(planted_environment("0.68.1", "a", driver="550.54"))
    after = EnvironmentRecord.from_json(planted_environment("0.68.1", "b", driver="560.28"))
    assert differences(before, after) == ["GPU driver: 550.54 -> 560.28"]
    assert before.short_commit == "aaaaaaaaaa"
    assert differences(before, EnvironmentRecord.from_json(planted_environment("0.68.1", "a", None))) == [
        "GPU driver: 550.54 -> absent",
        "CUDA driver: unknown -> absent",
        "GPU: absent -> none",
    ]


def test_two_studies_are_refused(artifacts: Path) -> None:
    a = read_run(_run(artifacts, "a"))
    other = attrs.evolve(a, evaluation=attrs.evolve(a.evaluation, study="other"))
    with pytest.raises(DifferentStudies, match=r"a run of `planted` and .* of `other`"):
        compare_runs(a, other)


def test_two_studies_of_one_name_are_refused_and_an_application_not_in_both_is_named(artifacts: Path) -> None:
    # A client compared a study with another given its name: exit 0, "slower in B: nothing", and
    # "a run has no application request times" where each had an application of its own.
    a = read_run(_run(artifacts, "a"))
    ev = a.evaluation
    scoring = attrs.evolve(ev.end_to_end, application="scoring")
    reduce = tuple(attrs.evolve(op, name="reduce") for op in ev.operations)
    impostor = attrs.evolve(a, evaluation=attrs.evolve(ev, operations=reduce, end_to_end=scoring))
    with pytest.raises(
        DifferentStudies, match=r"share no operation .* no application \(A's is `app`, B's `scoring`\)"
    ):
        compare_runs(a, impostor)
    other_app = attrs.evolve(a, evaluation=attrs.evolve(ev, end_to_end=scoring))
    assert "application: not compared (A's is `app`, B's `scoring`)" in render_text(
        compare_runs(a, other_app)
    )


def _perfdsl(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "perfdsl", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=600,
    )


@pytest.mark.slow
def test_compare_command_exit_statuses(artifacts: Path, tmp_path: Path) -> None:
    a, b, c = (str(_run(artifacts, x)) for x in "abc")
    same = _perfdsl("compare", a, b, "--fail-on-slower")
    assert same.returncode == 0, same.stderr
    assert "slower in B: nothing" in same.stdout
    slower = _perfdsl("compare", a, c, "--fail-on-slower")
    assert slower.returncode == 1
    assert "slower in B: op change at 64x4096; op change at 256x1024" in slower.stdout
    missing = _perfdsl("compare", a, str(tmp_path / "nothing"))
    assert missing.returncode == 2
    assert missing.stderr.count("\n") == 1 and "no such bundle directory" in missing.stderr


@pytest.mark.slow
def test_history_marks_where_the_regression_entered(artifacts: Path) -> None:
    runs = [read_run(p) for p in sorted((artifacts / "planted").iterdir())]
    timeline = build_timeline(runs)
    verdicts = [e.point("op").combined.verdict for e in timeline.entries]
    assert verdicts == ["faster", "faster", "faster", "slower", "slower"]
    assert [e.point("op").entered for e in timeline.entries] == [False, False, False, True, False]
    assert timeline.regressions() == [("op", "20261201T040000Z-dddddd (dddddddddd)")]
    assert [bool(e.changes) for e in timeline.entries] == [False, False, True, False, False]
    assert timeline.entries[2].changes == ("package numba: 0.68.1 -> 0.69.0",)
    change = timeline.entries[2].point("op").change_vs_previous
    assert change.verdict == "slower"


@pytest.mark.slow
def test_history_page_is_static_and_escapes_study_text(artifacts: Path) -> None:
    runs = [read_run(p) for p in sorted((artifacts / "planted").iterdir())]
    page = render_page(build_timeline(runs), 'Fused <script>alert("x")</script> & co', datetime.now(UTC))
    assert "<script" not in page
    assert "Fused &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co" in page
    assert page.count("<svg") == 1
    assert not re.search(r"(src|href)=", page)
    assert "regression entered" in page
    assert "op.time ratio &lt;= 0.9" in page


@pytest.mark.slow
def test_history_command_writes_the_page(artifacts: Path, tmp_path: Path) -> None:
    study = tmp_path / "planted.perf"
    study.write_text((_run(artifacts, "a") / "study.perf").read_text(encoding="utf-8"), encoding="utf-8")
    page = tmp_path / "out" / "history.html"
    done = _perfdsl("history", str(study), "--artifacts", str(artifacts), "-o", str(page))
    assert done.returncode == 0, done.stderr
    wrote, steps = done.stdout.strip().splitlines()
    assert wrote == f"wrote {page} (5 runs)"
    # 0.8, 0.8, 0.9, 1.2, 1.2: the large step is found; five runs leave the 0.8 -> 0.9 one unproven.
    assert steps.startswith("`op`: step +44.6% in the ratio (0.8305 -> 1.2011) between run 3 ")
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    empty = _perfdsl("history", str(study), "--artifacts", str(tmp_path / "none"), "-o", str(page))
    assert empty.returncode == 2 and "no runs of `planted`" in empty.stderr
    assert "(no such directory)" in empty.stderr
    a_file = _perfdsl("history", str(study), "--artifacts", str(study), "-o", str(page))
    assert a_file.returncode == 2 and f"{study}: is not a directory" in a_file.stderr


@pytest.mark.slow  # runs `perfdsl history` in a child
def test_history_leaves_out_a_bundle_that_fails_verification_and_names_it(
    artifacts: Path, tmp_path: Path
) -> None:
    """One corrupt archived run withheld the page of every other run (exit 2, no page)."""
    copied = Path(shutil.copytree(artifacts, tmp_path / "artifacts"))
    broken = _run(copied, "c")
    sample = next((broken / "samples").rglob("*.csv"))
    sample.write_bytes(sample.read_bytes().replace(b"1", b"2", 1))
    study = tmp_path / "planted.perf"
    study.write_text((broken / "study.perf").read_text(encoding="utf-8"), encoding="utf-8")
    page = tmp_path / "history.html"
    done = _perfdsl("history", str(study), "--artifacts", str(copied), "-o", str(page))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"wrote {page} (4 runs)")
    assert f"perfdsl history: warning: left out {broken}" in done.stderr and "verification" in done.stderr
    assert "1 bundle left out" in page.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def full_and_quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A full run and a quick one (4 blocks: too few pairs for a within-run interval), ratio 0.55."""
    root = tmp_path_factory.mktemp("quick")
    full = make_bundle(root / "full", blocks=20, seed=1, kernel_ratio=0.55, run_id="20261201T010000Z-f0f0f0")
    quick = make_bundle(root / "quick", blocks=4, seed=2, kernel_ratio=0.55, run_id="20261201T020000Z-a0a0a0")
    return full, quick


@pytest.mark.slow  # runs `perfdsl compare` in a child
def test_compare_of_quick_runs_says_why_a_within_run_interval_is_missing(
    full_and_quick: tuple[Path, Path],
) -> None:
    _, quick = full_and_quick
    done = _perfdsl("compare", str(quick), str(quick))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "(too few block pairs for an interval: 4 < 5)  inconclusive" in done.stdout


@pytest.mark.slow  # runs `perfdsl compare` in a child
def test_fail_on_slower_does_not_fail_on_a_quick_run_its_note_calls_no_regression(
    artifacts: Path, tmp_path: Path
) -> None:
    """It printed "a `slower` between them is no regression" and exited 1."""
    import command_fuzz

    a, c = (Path(shutil.copytree(_run(artifacts, x), tmp_path / x)) for x in "ac")
    full = _perfdsl("compare", str(a), str(c), "--fail-on-slower")
    assert full.returncode == 1
    results = json.loads((c / "results.json").read_text(encoding="utf-8"))
    (c / "results.json").write_text(json.dumps({**results, "quick": True}), encoding="utf-8")
    command_fuzz.reseal(c)
    smoke = _perfdsl("compare", str(a), str(c), "--fail-on-slower")
    assert "is no regression" in smoke.stdout and "slower in B: op change" in smoke.stdout
    assert smoke.returncode == 0
    assert "--fail-on-slower not applied: B is a quick run" in smoke.stderr


def _ticks_and_interval(svg: str) -> tuple[list[float], list[float], float]:
    """The y labels' values, the y of every interval cap, and the y of the lowest labelled tick."""
    root = ET.fromstring(svg)
    ns = "{http://www.w3.org/2000/svg}"
    labels = [
        (float(t.text), float(t.get("y")) - 4)
        for t in root.iter(f"{ns}text")
        if t.get("text-anchor") == "end"
    ]
    caps = [
        float(line.get("y1"))
        for group in root.iter(f"{ns}g")
        for line in group.iter(f"{ns}line")
        if line.get("y1") == line.get("y2")
    ]
    return [value for value, _ in labels], caps, max(y for _, y in labels)


def test_history_chart_labels_a_tick_beyond_every_point_and_draws_its_interval(
    full_and_quick: tuple[Path, Path],
) -> None:
    from perfdsl.history.figure import ratio_figure

    timeline = build_timeline([read_run(p) for p in full_and_quick])
    full = timeline.entries[0].point("op").combined
    svg = ratio_figure(timeline, "op", threshold=0.01)
    ticks, caps, lowest_tick_y = _ticks_and_interval(svg)
    assert min(ticks) <= full.ci_low and max(ticks) >= full.ci_high
    # Both ends of the interval are drawn (caps), below the lowest label's line at most.
    assert len(caps) == 2 and max(caps) <= lowest_tick_y
    assert "no ratio" in svg and "too few block pairs" in svg


def test_compare_takes_limit_shapes_the_application_and_the_study_source(tmp_path: Path) -> None:
    """Run B: the same study name from an edited file, the limit shape and the requests slower."""
    a = make_bundle(tmp_path / "a", seed=1, limits={(32, 4096): 1.0}, app_ratio=0.9)
    b = make_bundle(
        tmp_path / "b",
        seed=2,
        limits={(32, 4096): 1.3},
        app_ratio=1.05,
        sections="  # edited between the runs\n",
    )
    result = compare_runs(read_run(a), read_run(b))
    (op,) = result.operations
    assert [s.label for s in op.limits] == ["32x4096"]
    assert "op change at 32x4096" in result.slower
    assert result.application is not None and "app change" in result.slower
    assert "app baseline" not in result.slower
    text = render_text(result)
    assert "limit shapes (a `limit regression` names them" in text
    assert "application app (request time)" in text
    (source,) = [line for line in result.environment if line.startswith("study source (SHA-256): ")]
    assert source.endswith("the runs ran different `planted` files")
    assert text.index("study source") < text.index("operation op")
    same = compare_runs(read_run(a), read_run(a))
    assert not any(line.startswith("study source") for line in same.environment)
    assert same.slower == ()


def test_compare_does_not_take_a_ratio_of_requests_of_different_application_shapes(tmp_path: Path) -> None:
    """A quick run's smaller application against a full run's read as "4.1 x slower"."""
    a = make_bundle(tmp_path / "a", seed=1)
    b = make_bundle(tmp_path / "b", seed=2, app_shape={"M": 512, "N": 2048})
    result = compare_runs(read_run(a), read_run(b))
    assert result.application is not None
    assert all(arm.comparison is None for arm in result.application.arms)
    (why,) = {arm.missing for arm in result.application.arms}
    assert why is not None and why.startswith("the runs served different application shapes (A M = ")
    assert not any(s.startswith("app ") for s in result.slower)
    # Nor are their goodputs those of one request.
    assert result.goodputs[0] == f"not of the same request: {why}"


def test_compare_says_when_a_and_b_are_one_run(tmp_path: Path) -> None:
    a = make_bundle(tmp_path / "a", seed=1)
    assert "note: A and B are the same run" in render_text(compare_runs(read_run(a), read_run(a)))
    b = make_bundle(tmp_path / "b", seed=2)
    assert "same run" not in render_text(compare_runs(read_run(a), read_run(b)))


def test_compare_says_when_a_run_is_a_smoke_run_or_competed_with_other_work(tmp_path: Path) -> None:
    """Two quick runs of identical code were "slower in B", with nothing saying they are no evidence."""
    import json

    import command_fuzz

    a = make_bundle(tmp_path / "a", seed=1)
    b = make_bundle(tmp_path / "b", seed=2, busy={"application": ()})
    results = json.loads((a / "results.json").read_text(encoding="utf-8"))
    results["quick"] = True
    (a / "results.json").write_text(json.dumps(results), encoding="utf-8")
    command_fuzz.reseal(a)
    text = render_text(compare_runs(read_run(a), read_run(b)))
    assert "note: A is a quick (smoke) run: few blocks of scaled-down shapes" in text
    assert "note: B's timings competed with other work (" in text
    quiet = render_text(compare_runs(read_run(make_bundle(tmp_path / "c", seed=3)), read_run(b)))
    assert "quick (smoke)" not in quiet


def test_compare_lists_each_arms_goodput_in_both_runs_without_a_verdict(tmp_path: Path) -> None:
    """A goodput ten times higher in B went unmentioned: compare listed no load result at all."""
    a = make_bundle(tmp_path / "a", seed=1)
    b = make_bundle(tmp_path / "b", seed=2, capacities={"baseline": 400.0, "change": 300.0})
    result = compare_runs(read_run(a), read_run(b))
    (base, change) = result.goodputs
    assert base.startswith("baseline: ") and change.startswith("change: ")
    assert " -> " in change and change.split(" -> ")[0] != change.split(" -> ")[1]
    text = render_text(result)
    assert "goodput at the SLO (brackets of the rates each search tried; no interval, no verdict):" in text
    assert not any("goodput" in s for s in result.slower)


def test_history_counts_a_copied_run_once_and_names_the_copy(
    artifacts: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Copies of one bundle keep its run id, and each was a run of the series: three "runs" of
    # one measurement entered the step search.
    from perfdsl.cli import main

    copied = Path(shutil.copytree(artifacts, tmp_path / "artifacts"))
    original = _run(copied, "a")
    copy = Path(shutil.copytree(original, original.with_name("20261201T015900Z-ffffff")))
    study = tmp_path / "planted.perf"
    study.write_text((original / "study.perf").read_text(encoding="utf-8"), encoding="utf-8")
    page = tmp_path / "history.html"
    assert main(["history", str(study), "--artifacts", str(copied), "-o", str(page)]) == 0
    out, err = capsys.readouterr()
    assert out.startswith(f"wrote {page} (5 runs)")
    run_id = original.name
    assert f"perfdsl history: warning: left out {copy}: a copy of run {run_id}, at {original}" in err
