"""Imported counters as mechanism evidence, and imported application times, through check, run and evaluate.

The bundled study (studies/batchnorm_imported.perf) imports both: a
hand-written Nsight Compute profile for `normalize`'s mechanism and hyperfine
request times for its application. Each test copies the study's directory and
edits one thing, so a rule is shown failing on that edit alone. Expected
counts are computed here from the CSV text with the csv module, not with the
parser under test.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from run_support import REPO, environment

from perfdsl.check import check
from perfdsl.evaluate.imported import ImportedEvaluation, evaluate_imported_bundle
from perfdsl.parse import parse
from perfdsl.runtime.imported import run_imported
from perfdsl.source import Source

STUDY = REPO / "studies" / "batchnorm_imported.perf"
PROFILE = REPO / "studies" / "imported" / "ncu_batchnorm_head.csv"


def _study(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    """The bundled study and its files in tmp_path, with each (old, new) edit applied once."""
    shutil.copytree(REPO / "studies" / "imported", tmp_path / "imported")
    text = STUDY.read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "s.perf"
    path.write_text(text, encoding="utf-8")
    return path


def _codes(path: Path) -> list[tuple[str, str]]:
    parsed = parse(Source.read(path))
    assert parsed.study is not None
    return [(d.code, d.message) for d in check(parsed.study) if d.severity == "error"]


def _evaluate(path: Path) -> ImportedEvaluation:
    parsed = parse(Source.read(path))
    assert parsed.study is not None
    return evaluate_imported_bundle(run_imported(parsed.study, path.parent / "art"))


def _profile_bytes(kernel_pattern: str) -> tuple[int, int]:
    """DRAM bytes read + written and launches of the kernels whose name starts with the pattern."""
    lines = [line for line in PROFILE.read_text(encoding="utf-8").splitlines() if not line.startswith("==")]
    rows = list(csv.DictReader(lines))[1:]
    chosen = [r for r in rows if r["Kernel Name"].startswith(kernel_pattern)]
    total = sum(
        int(r[m].replace(",", "")) for r in chosen for m in ("dram__bytes_read.sum", "dram__bytes_write.sum")
    )
    return total, len(chosen)


def test_the_bundled_study_checks_clean() -> None:
    assert _codes(STUDY) == []


def test_counts_sum_every_matched_kernel_and_stay_off_cpu_predictions(tmp_path: Path) -> None:
    evaluation = _evaluate(_study(tmp_path))
    (counted,) = evaluation.counted
    assert counted.label == "counted, imported"
    base_bytes, base_launches = _profile_bytes("cupy_")
    change_bytes, change_launches = _profile_bytes("batchnorm_fused_kernel")
    assert (counted.baseline.launches, counted.change.launches) == (base_launches, change_launches) == (7, 1)
    found = counted.quantity("bytes")
    assert found is not None and (found.baseline, found.change) == (base_bytes, change_bytes)
    assert counted.quantity("launches").ratio == pytest.approx(1 / 7)
    # The study times cpu code: the GPU profile is shown, and the prediction stays on the model.
    assert not counted.judged and "counts a GPU build" in counted.mismatch
    bytes_prediction = next(p for p in evaluation.predictions if p.target == "normalize.bytes")
    assert bytes_prediction.basis == "modelled"
    assert bytes_prediction.value == pytest.approx(
        (2 * 4096 * 1024 + 4 * 1024) / (8 * 4096 * 1024 + 5 * 1024)
    )
    assert "imported counts not used" in bytes_prediction.message


def test_counts_judge_the_prediction_when_the_timing_is_a_gpus(tmp_path: Path) -> None:
    evaluation = _evaluate(_study(tmp_path, ("targets   cpu", "targets   cuda")))
    (counted,) = evaluation.counted
    assert counted.judged and counted.mismatch is None
    base_bytes, _ = _profile_bytes("cupy_")
    change_bytes, _ = _profile_bytes("batchnorm_fused_kernel")
    bytes_prediction = next(p for p in evaluation.predictions if p.target == "normalize.bytes")
    assert bytes_prediction.basis == "counted" and bytes_prediction.message.startswith("counted, imported ")
    assert bytes_prediction.value == pytest.approx(change_bytes / base_bytes)
    assert bytes_prediction.verdict == "confirmed"
    # The record is one a build can read back: "counted, imported" as its basis was refused
    # ("is not one of ('measured', 'modelled', 'counted', 'mixed', 'none')"), and the build with it.
    read_back = ImportedEvaluation.from_json(json.loads(json.dumps(evaluation.to_json())))
    assert [p.basis for p in read_back.predictions] == [p.basis for p in evaluation.predictions]


def test_a_counted_ratio_above_the_bound_refutes(tmp_path: Path) -> None:
    path = _study(
        tmp_path,
        ("targets   cpu", "targets   cuda"),
        ("normalize.bytes ratio <= 0.3", "normalize.bytes ratio <= 0.2"),
    )
    bytes_prediction = next(p for p in _evaluate(path).predictions if p.target == "normalize.bytes")
    assert (bytes_prediction.basis, bytes_prediction.verdict) == ("counted", "refuted")


def test_a_profile_without_the_mechanisms_metric_is_pd316(tmp_path: Path) -> None:
    path = _study(tmp_path)
    text = (tmp_path / "imported" / "ncu_batchnorm_head.csv").read_text(encoding="utf-8")
    (tmp_path / "imported" / "ncu_batchnorm_head.csv").write_text(
        text.replace("dram__bytes_write.sum", "lts__t_bytes.sum"), encoding="utf-8"
    )
    found = _codes(path)
    assert [code for code, _ in found] == ["PD316", "PD316"]
    assert "does not count `bytes`" in found[0][1]


@pytest.mark.parametrize(
    ("edit", "code", "words"),
    [
        (('entry "cupy_.*"', 'entry "thrust_.*"'), "PD315", "cannot be used"),
        (('entry "cupy_.*"', 'entry "cupy_.*|batchnorm_fused_kernel"'), "PD315", "for both arms"),
        (
            ('format ncu-raw entry "cupy_.*"', 'format nsys-gpu-trace entry "cupy_.*"'),
            "PD315",
            "`ncu-raw` files",
        ),
        (
            (
                '    change_counters   import "imported/ncu_batchnorm_head.csv" format ncu-raw entry '
                '"batchnorm_fused_kernel"\n',
                "",
            ),
            "PD412",
            "of one implementation only",
        ),
        (
            ("evidence end_to_end  { }", "evidence end_to_end  { load poisson 5..60 step 5 rps }"),
            "PD412",
            "load",
        ),
        (
            (
                "    uses     normalize\n",
                "    uses     normalize\n    entry    kernels.batchnorm:classifier_head\n",
            ),
            "PD412",
            "both an `entry` and imported times",
        ),
    ],
)
def test_bad_imports_are_named_at_check(tmp_path: Path, edit: tuple[str, str], code: str, words: str) -> None:
    found = _codes(_study(tmp_path, edit))
    assert any(c == code and words in message for c, message in found), found


def test_imports_beside_kernels_perfdsl_runs_are_refused(tmp_path: Path) -> None:
    path = _study(
        tmp_path,
        (
            'baseline  import "imported/pyperf_batchnorm.json" format pyperf entry "batchnorm_numpy_passes"',
            "baseline  kernels.batchnorm:numpy_passes",
        ),
        (
            'change    import "imported/pyperf_batchnorm.json" format pyperf entry "batchnorm_fused"',
            "change    kernels.batchnorm:fused\n    reference kernels.batchnorm:reference",
        ),
    )
    messages = [m for c, m in _codes(path) if c == "PD412"]
    assert any("imports counters for kernels that perfdsl runs" in m for m in messages), messages
    assert any("imports its times, but the study runs its operations" in m for m in messages), messages


def test_imported_application_time_with_amdahl_not_established(tmp_path: Path) -> None:
    evaluation = _evaluate(_study(tmp_path))
    (app,) = evaluation.applications
    data = json.loads((tmp_path / "imported" / "hyperfine_batchnorm_head.json").read_text(encoding="utf-8"))
    times = {r["command"]: sorted(r["times"]) for r in data["results"]}
    median = {k: (v[3] + v[4]) / 2 for k, v in times.items()}  # eight runs each
    assert app.timing.method == "medians"
    assert app.timing.ratio == pytest.approx(median["head_fused"] / median["head_numpy_passes"])
    assert app.timing.verdict.startswith("not evidence-grade: baseline and change were not interleaved")
    assert app.amdahl.startswith("not established")
    assert app.claimed_bound == pytest.approx(0.7 + 0.3 * evaluation.timings[0].ratio)
    assert app.value is None and "not evidence-grade" in app.value_missing
    amdahl = next(p for p in evaluation.predictions if p.target == "head.time")
    assert amdahl.verdict == "not evidence" and "not established" in amdahl.message


def test_imported_application_blocks_are_compared_unpaired(tmp_path: Path) -> None:
    """Request times with several blocks per arm get an interval, from the same statistics as an operation."""
    path = _study(
        tmp_path,
        (
            '"imported/hyperfine_batchnorm_head.json" format hyperfine entry "head_numpy_passes"',
            '"imported/pyperf_batchnorm.json" format pyperf entry "batchnorm_numpy_passes"',
        ),
        (
            '"imported/hyperfine_batchnorm_head.json" format hyperfine entry "head_fused"',
            '"imported/pyperf_batchnorm.json" format pyperf entry "batchnorm_fused"',
        ),
    )
    evaluation = _evaluate(path)
    (app,) = evaluation.applications
    (operation,) = evaluation.timings
    assert app.timing.method == "unpaired"
    assert (app.timing.ratio, app.timing.low, app.timing.high) == (
        operation.ratio,
        operation.low,
        operation.high,
    )
    assert not app.timing.evidence_grade


def _serve(fifo: Path, payloads: list[bytes], stop: threading.Event) -> None:
    """Give each opening of the FIFO the next payload (the last one again once they run out)."""
    index = 0
    while not stop.is_set():
        try:
            fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            stop.wait(0.01)
            continue
        os.set_blocking(fd, True)
        try:
            os.write(fd, payloads[min(index, len(payloads) - 1)])
        except BrokenPipeError:
            pass
        finally:
            os.close(fd)
        index += 1
        stop.wait(0.2)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "reads_by_check", "good_to_bad", "field"),
    [
        # check reads the profile once per arm; the timing file once for both arms.
        ("ncu_batchnorm_head.csv", 2, ('"16,809,984"', '"sixteen"'), "column `dram__bytes_read.sum`"),
        ("hyperfine_batchnorm_head.json", 1, ('"times": [', '"times": ["fast", '), "$.results[0].times[0]"),
    ],
)
def test_a_file_corrupted_after_check_stops_run_with_one_line(
    tmp_path: Path, name: str, reads_by_check: int, good_to_bad: tuple[str, str], field: str
) -> None:
    """The real CLI: `check` inside `run` reads the good file, the run's own read gets the corrupt one.

    The imported file is a FIFO that serves the good bytes to check's readings
    and corrupt bytes afterwards (the run's own reading), which is exactly a
    file changed after check passed, without a race.
    """
    path = _study(tmp_path)
    good = (tmp_path / "imported" / name).read_bytes()
    bad = good.decode("utf-8").replace(*good_to_bad, 1).encode("utf-8")
    assert bad != good
    fifo = tmp_path / "imported" / name
    fifo.unlink()
    os.mkfifo(fifo)
    stop = threading.Event()
    server = threading.Thread(target=_serve, args=(fifo, [good] * reads_by_check + [bad], stop), daemon=True)
    server.start()
    artifacts = tmp_path / "art"
    try:
        done = subprocess.run(
            [sys.executable, "-m", "perfdsl", "run", str(path), "--artifacts", str(artifacts)],
            cwd=REPO,
            env=environment(),
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        stop.set()
        server.join(timeout=5)
    assert done.returncode == 2, done.stderr
    errors = [line for line in done.stderr.splitlines() if "from imported files (no code is run)" not in line]
    assert len(errors) == 1 and "Traceback" not in done.stderr, done.stderr
    assert str(fifo) in errors[0] and field in errors[0], errors[0]
    assert not artifacts.exists() or not any(artifacts.rglob("*.json")), list(artifacts.rglob("*"))
