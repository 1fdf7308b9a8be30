"""`perfdsl compare` and `perfdsl history` on planted bundles written through the records writer.

Run A and an A/A rerun B draw the same kernel times (0.8 x baseline) with
different seeds; run C plants a change 12.5 % slower (0.9 x baseline) and a
newer numba; runs D and E plant a change slower than its baseline (1.2 x). So
compare(A, B) must find no meaningful change and nothing slower, compare(A, C)
must name the change arm slower at both shapes and list numba's version before
any number, and the history must mark D, not E, as where a regression entered.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import attrs
import pytest
from evaluate_fixtures import make_bundle

from perfdsl.bundle.environment import EnvironmentRecord, differences
from perfdsl.history.across import DifferentStudies, compare_runs, render_text
from perfdsl.history.page import render_page
from perfdsl.history.runs import read_run
from perfdsl.history.timeline import build_timeline

ROOT = Path(__file__).resolve().parent.parent


def _environment(numba: str, commit: str, driver: str | None = None) -> dict:
    gpu = None if driver is None else {"driver_version": driver, "devices": []}
    return {
        "perfdsl": "0.1.0",
        "python": {"version": "3.11.7"},
        "os": {"system": "Linux", "release": "6.1", "machine": "x86_64"},
        "cpu": {"model": "AMD EPYC", "usable_cores": 2},
        "packages": {"numba": numba, "numpy": "2.4.6"},
        "git": {"commit": commit * 40, "dirty": False, "root": "/repo"},
        "gpu": gpu,
        "time_utc": "2026-12-01T00:00:00+00:00",
    }


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
            environment=_environment(numba, commit),
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


def test_a_planted_slowdown_is_named_after_the_environment(artifacts: Path) -> None:
    result = compare_runs(read_run(_run(artifacts, "a")), read_run(_run(artifacts, "c")))
    assert result.slower == ("op change at 64x4096", "op change at 256x1024")
    (change,) = [c for arm, c in result.operations[0].combined if arm == "change"]
    assert 1.10 < change.ci_low <= change.ratio <= change.ci_high < 1.15
    text = render_text(result)
    numba = text.index("package numba: 0.68.1 -> 0.69.0")
    assert numba < text.index("not interleaved") < text.index("1.1")
    assert re.search(r"^\s+change .* slower$", text, re.MULTILINE)


def test_environment_differences_name_each_changed_fact() -> None:
    before = EnvironmentRecord.from_json(_environment("0.68.1", "a", driver="550.54"))
    after = EnvironmentRecord.from_json(_environment("0.68.1", "b", driver="560.28"))
    assert differences(before, after) == ["GPU driver: 550.54 -> 560.28"]
    assert before.short_commit == "aaaaaaaaaa"
    assert differences(before, EnvironmentRecord.from_json(_environment("0.68.1", "a", None))) == [
        "GPU driver: 550.54 -> absent",
        "CUDA driver: unknown -> absent",
        "GPU: absent -> none",
    ]


def test_two_studies_are_refused(artifacts: Path) -> None:
    a = read_run(_run(artifacts, "a"))
    other = attrs.evolve(a, evaluation=attrs.evolve(a.evaluation, study="other"))
    with pytest.raises(DifferentStudies, match=r"a run of `planted` and .* of `other`"):
        compare_runs(a, other)


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
    assert done.stdout.strip() == f"wrote {page} (5 runs)"
    assert page.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    empty = _perfdsl("history", str(study), "--artifacts", str(tmp_path / "none"), "-o", str(page))
    assert empty.returncode == 2 and "no runs of `planted`" in empty.stderr
