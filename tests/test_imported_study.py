"""The bundled imported-evidence study through check, run, evaluate, verify and build, and its bad inputs.

`perfdsl run` on it must run no code (no kernel module, no Numba, no target),
copy the pyperf file into the bundle where the manifest hashes it, and the
report must say on page 1 that the timing is not evidence-grade. Every run is
a child process, as in the other run tests: an exit status and the modules a
command loaded are only honest from the real command line.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from run_support import IMPORTED_STUDIES, REPO, environment, read_json, run

from perfdsl.bundle.evaluation.imported import ImportedEvaluation
from perfdsl.commands import CommandError
from perfdsl.commands.run import _run_imported
from perfdsl.evaluate.imported import evaluate_imported_bundle
from perfdsl.parse import parse
from perfdsl.runtime.imported import run_imported
from perfdsl.source import Source

STUDY = REPO / "studies" / "batchnorm_imported.perf"
FIXTURES = REPO / "tests" / "fixtures" / "imports"


def test_the_study_is_bundled_and_imported() -> None:
    assert IMPORTED_STUDIES == (STUDY,)


@pytest.mark.parametrize(
    "name",
    [
        "pyperf_batchnorm.json",
        "google_benchmark_batchnorm.json",
        "hyperfine_batchnorm_head.json",
        "ncu_batchnorm_head.csv",
    ],
)
def test_study_copies_equal_the_importer_fixtures(name: str) -> None:
    """benchmarks/imports/make_fixtures.sh writes both; an edit to one alone is caught here."""
    assert (REPO / "studies" / "imported" / name).read_bytes() == (FIXTURES / name).read_bytes()


def _modules_after(*argv: str) -> tuple[int, list[str]]:
    """Run the CLI in a fresh interpreter: its status and the modules it loaded."""
    script = (
        "import json, sys\n"
        "from perfdsl.cli import main\n"
        f"status = main({list(argv)!r})\n"
        "print(json.dumps([status, sorted(sys.modules)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=REPO,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    status, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return status, modules


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One run of the study; it must load no kernel code, no Numba and no target."""
    artifacts = tmp_path_factory.mktemp("imported")
    status, modules = _modules_after("run", str(STUDY), "--artifacts", str(artifacts))
    assert status == 0
    assert [m for m in modules if m.split(".")[0] in ("numba", "kernels", "llvmlite")] == []
    assert "perfdsl.runtime.targets" not in modules and "perfdsl.runtime.execute" not in modules
    (found,) = [p for p in (artifacts / "batchnorm_imported").iterdir() if not p.name.startswith(".")]
    return found


@pytest.mark.slow
def test_run_copies_the_file_and_hashes_it(bundle: Path) -> None:
    manifest = read_json(bundle / "manifest.json")["files"]
    index = read_json(bundle / "imported.json")
    (operation,) = index["operations"]
    source = REPO / "studies" / "imported" / "pyperf_batchnorm.json"
    for arm, entry in (("baseline", "batchnorm_numpy_passes"), ("change", "batchnorm_fused")):
        side = operation[arm]
        assert side["entry"] == entry
        assert (bundle / side["file"]).read_bytes() == source.read_bytes()
        assert manifest[side["file"]]["sha256"] == side["sha256"]
    assert operation["models"]["bytes"] == {
        "baseline": 4 * (8 * 4096 * 1024 + 5 * 1024),
        "change": 4 * (2 * 4096 * 1024 + 4 * 1024),
    }
    assert not (bundle / "results.json").exists()


@pytest.mark.slow
def test_evaluation_compares_unpaired_and_says_not_evidence_grade(bundle: Path) -> None:
    done = run("evaluate", str(bundle), timeout=300)
    assert done.returncode == 0, done.stderr
    evaluation = read_json(bundle / "evaluation.json")
    (timing,) = evaluation["timings"]
    assert timing["method"] == "unpaired"
    assert timing["verdict"].startswith("not evidence-grade: baseline and change were not interleaved")
    assert timing["evidence_grade"] is False
    assert timing["low"] < timing["ratio"] < timing["high"]
    # The point is the ratio of the arms' geometric means of block medians, from the file itself.
    data = json.loads((FIXTURES / "pyperf_batchnorm.json").read_text(encoding="utf-8"))
    medians = {
        b["metadata"]["name"]: [sorted(r["values"])[2] for r in b["runs"] if "values" in r]
        for b in data["benchmarks"]
    }
    ratio = (
        sum(map(math.log, medians["batchnorm_fused"])) / 6
        - sum(map(math.log, medians["batchnorm_numpy_passes"])) / 6
    )
    assert timing["ratio"] == pytest.approx(math.exp(ratio), rel=1e-9)
    time_prediction = next(p for p in evaluation["predictions"] if p["target"] == "normalize.time")
    assert "not evidence-grade" in time_prediction["message"]


@pytest.mark.slow
def test_page_one_shows_the_label(bundle: Path, tmp_path: Path) -> None:
    out = tmp_path / "report.md"
    done = run("build", "--md", str(STUDY), "--results", str(bundle), "-o", str(out), timeout=300)
    assert done.returncode == 0, done.stderr
    page_one = out.read_text(encoding="utf-8").split("## Workload")[0]
    assert "> [!WARNING]" in page_one
    assert "not evidence-grade: baseline and change were not interleaved" in page_one
    assert "Correctness was not checked by perfdsl" in page_one
    assert "pyperf 2.11.0, raw samples, not interleaved" in out.read_text(encoding="utf-8")
    # A reader who divided the evidence table's medians took the unpaired ratio for a mistake.
    assert "time ratio (change / baseline) of the arms' geometric means of their block medians" in page_one


@pytest.mark.slow
def test_the_html_report_of_an_imported_study_is_written(bundle: Path, tmp_path: Path) -> None:
    # `build --html` and `--pdf` asked the imported evaluation whether it was a smoke run, which
    # only a measured run can be, and ended in a traceback (found by the command fuzzer).
    out = tmp_path / "report.html"
    done = run("build", "--html", str(STUDY), "--results", str(bundle), "-o", str(out), timeout=300)
    assert done.returncode == 0, done.stderr
    assert "not evidence-grade" in out.read_text(encoding="utf-8")


@pytest.mark.slow
def test_compare_and_history_refuse_an_imported_bundle_saying_what_it_is(
    bundle: Path, tmp_path: Path
) -> None:
    # A new user's `compare` of two imported runs said "plan.json: unreadable: No such file or
    # directory", which reads as a broken bundle.
    history = ("history", str(STUDY), "-o", str(tmp_path / "h.html"), "--artifacts", str(bundle.parents[1]))
    for argv in (("compare", str(bundle), str(bundle)), history):
        done = run(*argv)
        assert done.returncode == 2, (argv, done.stderr)
        assert "an imported study's bundle" in done.stderr and "plan.json" not in done.stderr
        assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_evaluate_refuses_the_ci_files_of_an_imported_bundle_instead_of_leaving_them_out(
    bundle: Path, tmp_path: Path
) -> None:
    # `--junit` and `--summary` exited 0 and wrote nothing: a job gated on them passed unjudged.
    junit, summary = tmp_path / "j.xml", tmp_path / "summary.md"
    done = run("evaluate", str(bundle), "--junit", str(junit), "--summary", str(summary), timeout=300)
    assert done.returncode == 2
    assert "--junit, --summary are for bundles `perfdsl run` measures" in done.stderr
    assert not junit.exists() and not summary.exists()
    assert run("evaluate", str(bundle), "--jsonl", str(tmp_path / "r.jsonl"), timeout=300).returncode == 0


@pytest.mark.slow
def test_a_copy_changed_after_the_run_is_refused(bundle: Path, tmp_path: Path) -> None:
    copy = tmp_path / "bundle"
    shutil.copytree(bundle, copy)
    (side_file,) = {op["baseline"]["file"] for op in read_json(copy / "imported.json")["operations"]}
    (copy / side_file).write_text("{}", encoding="utf-8")
    verified = run("verify", str(copy), timeout=120)
    assert verified.returncode != 0
    built = run(
        "build", "--md", str(STUDY), "--results", str(copy), "-o", str(tmp_path / "r.md"), timeout=300
    )
    assert built.returncode == 2
    assert "Traceback" not in built.stderr and len(built.stderr.strip().splitlines()) == 1, built.stderr


def _study_beside(tmp_path: Path, text: str, data: bytes) -> Path:
    """Every file of the study in tmp_path, the pyperf file holding `data`."""
    shutil.copytree(REPO / "studies" / "imported", tmp_path / "imported")
    (tmp_path / "imported" / "pyperf_batchnorm.json").write_bytes(data)
    path = tmp_path / "s.perf"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_broken_after_check_is_one_line_at_run(tmp_path: Path) -> None:
    """The run reads every file again: one changed since `check` is a one-line error, exit 2."""
    good = (REPO / "studies" / "imported" / "pyperf_batchnorm.json").read_bytes()
    path = _study_beside(tmp_path, STUDY.read_text(encoding="utf-8"), good)
    parsed = parse(Source.read(path))
    assert parsed.study is not None and parsed.study.imported
    data = json.loads(good)
    del data["benchmarks"][0]["runs"][1]["values"]
    data["benchmarks"][0]["runs"][1]["values"] = "fast"
    (tmp_path / "imported" / "pyperf_batchnorm.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CommandError) as caught:
        _run_imported(parsed.study, argparse.Namespace(artifacts=str(tmp_path / "art")))
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith(str(tmp_path / "imported" / "pyperf_batchnorm.json"))
    assert "$.benchmarks[0].runs[1].values" in message
    assert not (tmp_path / "art" / "batchnorm_imported").exists() or not any(
        (tmp_path / "art" / "batchnorm_imported").iterdir()
    )


@pytest.mark.slow
def test_a_malformed_file_stops_run_at_check_with_the_field(tmp_path: Path) -> None:
    path = _study_beside(tmp_path, STUDY.read_text(encoding="utf-8"), b'{"benchmarks": 3}')
    done = subprocess.run(
        [sys.executable, "-m", "perfdsl", "run", str(path), "--artifacts", str(tmp_path / "art")],
        cwd=REPO,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert "error[PD315]" in done.stderr and "$: missing field `version`" in done.stderr


def _evaluate_variant(
    tmp_path: Path, fixture: str, fmt: str, baseline: str, change: str
) -> ImportedEvaluation:
    """The bundled study with its timing taken from another fixture: run and evaluated in-process."""
    text = STUDY.read_text(encoding="utf-8")
    for old, new in (
        ('format pyperf entry "batchnorm_numpy_passes"', f'format {fmt} entry "{baseline}"'),
        ('format pyperf entry "batchnorm_fused"', f'format {fmt} entry "{change}"'),
    ):
        assert old in text
        text = text.replace(old, new)
    path = _study_beside(tmp_path, text, (FIXTURES / fixture).read_bytes())
    parsed = parse(Source.read(path))
    assert parsed.study is not None
    return evaluate_imported_bundle(run_imported(parsed.study, tmp_path / "art"))


def test_google_benchmark_repetitions_are_blocks_of_one_value(tmp_path: Path) -> None:
    evaluation = _evaluate_variant(
        tmp_path,
        "google_benchmark_batchnorm.json",
        "google-benchmark",
        "BM_batchnorm/numpy_passes",
        "BM_.*/fused",
    )
    (timing,) = evaluation.timings
    assert timing.method == "unpaired"
    assert (timing.baseline.blocks, timing.baseline.samples, timing.baseline.granularity) == (
        5,
        5,
        "per_block",
    )
    assert timing.change.entry == "BM_batchnorm/fused"
    assert "does not show whether baseline and change were interleaved" in timing.verdict
    assert timing.low is not None and timing.low < timing.ratio < timing.high


def test_aggregates_only_give_a_point_and_no_time_verdict(tmp_path: Path) -> None:
    evaluation = _evaluate_variant(
        tmp_path,
        "google_benchmark_batchnorm_aggregates.json",
        "google-benchmark",
        "BM_batchnorm/numpy_passes",
        "BM_batchnorm/fused",
    )
    (timing,) = evaluation.timings
    assert timing.method == "medians" and timing.low is None
    assert timing.ratio == pytest.approx(timing.change.median_ns / timing.baseline.median_ns)
    assert timing.verdict.startswith("not evidence-grade: aggregates only")
    time_prediction = next(p for p in evaluation.predictions if p.target == "normalize.time")
    assert time_prediction.verdict == "not evidence"
    assert time_prediction.message.startswith("no interval: not evidence-grade")
