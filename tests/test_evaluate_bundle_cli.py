"""`perfdsl evaluate` as a subprocess, on one real quick CPU bundle (the session's `quick_runs`)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from run_support import QuickRuns

from perfdsl import targets
from perfdsl.bundle import versions
from perfdsl.bundle.files import replace_file
from perfdsl.bundle.results import Results

ROOT = Path(__file__).resolve().parent.parent


def _perfdsl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "perfdsl", *args], cwd=ROOT, capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def real_bundle(quick_runs: QuickRuns) -> Path:
    """A quick CPU run of the bundled RMSNorm study (about 30 s), shared with other files: read only."""
    return quick_runs("studies/rmsnorm_fusion.perf").bundle


@pytest.fixture
def bundle(real_bundle: Path, tmp_path: Path) -> Path:
    """A private copy of the real bundle, so a test may tamper with it."""
    return Path(shutil.copytree(real_bundle, tmp_path / real_bundle.name))


@pytest.mark.slow
def test_evaluate_twice_is_byte_identical_and_keeps_the_bundle_verified(bundle: Path) -> None:
    first = _perfdsl("evaluate", str(bundle))
    assert first.returncode == 0 and first.stderr == ""
    written = (bundle / "evaluation.json").read_bytes()
    second = _perfdsl("evaluate", str(bundle))
    assert second.returncode == 0 and second.stdout == first.stdout
    assert (bundle / "evaluation.json").read_bytes() == written
    assert _perfdsl("verify", str(bundle)).returncode == 0
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert "evaluation.json" in manifest["files"]


@pytest.mark.slow
def test_summary_names_the_verdicts(bundle: Path) -> None:
    out = _perfdsl("evaluate", str(bundle)).stdout
    assert "operation normalize" in out and "weighted" in out
    assert "predict line" in out and "end-to-end decode_step" in out
    assert "warning[PQ007]" in out  # a quick run has 5 blocks an arm


@pytest.mark.slow
def test_evaluation_json_has_every_section(bundle: Path) -> None:
    _perfdsl("evaluate", str(bundle))
    data = json.loads((bundle / "evaluation.json").read_text())
    assert {
        "operations",
        "end_to_end",
        "load",
        "predictions",
        "value",
        "decision",
        "registration",
        "quality",
        "model_level",
    } <= set(data)
    # The cpu run is judged by the study-wide predictions and `predict cpu`, never `predict cuda`.
    assert data["expectations_target"] == "cpu" and data["expectations_missing"] is None
    assert [p["target"] for p in data["predictions"]] == [
        "normalize.bytes",
        "decode_step.time",
        "normalize.time",
    ]
    assert data["predictions"][2]["bound"] == 0.7  # cpu's bound, not cuda's 0.55
    assert data["registration"]["matches"] is True
    static = data["operations"][0]["static"]
    assert {k["kind"] for k in static["baseline"]} == {"cuda", "cpu"}


@pytest.mark.slow
def test_a_tampered_bundle_exits_2(bundle: Path) -> None:
    results = bundle / "results.json"
    results.write_text(results.read_text().replace('"quick": true', '"quick": false'))
    done = _perfdsl("evaluate", str(bundle))
    assert done.returncode == 2
    assert "fails verification" in done.stderr and "Traceback" not in done.stderr
    assert f"`perfdsl verify {bundle}` lists every file that changed" in done.stderr
    assert not (bundle / "evaluation.json").exists()


@pytest.mark.slow
def test_not_a_bundle_exits_2(tmp_path: Path) -> None:
    done = _perfdsl("evaluate", str(tmp_path / "missing"))
    assert done.returncode == 2 and "no such bundle" in done.stderr


@pytest.mark.slow
def test_an_edited_predict_section_is_flagged(bundle: Path, tmp_path: Path) -> None:
    study = tmp_path / "edited.perf"
    study.write_text(
        (ROOT / "studies/rmsnorm_fusion.perf")
        .read_text()
        .replace("normalize.time   ratio <= 0.55", "normalize.time   ratio <= 0.75")
    )
    done = _perfdsl("evaluate", str(bundle), "--study", str(study))
    assert done.returncode == 0
    assert "edited after the run" in done.stdout
    # Predictions changed since the run registered them are what `--fail-on invalid` names.
    gated = _perfdsl("evaluate", str(bundle), "--study", str(study), "--fail-on", "invalid")
    assert gated.returncode == 1
    assert f"fails the policy: invalid: registration: {study}: the `predict` section" in gated.stderr


@pytest.mark.slow
def test_evaluate_study_judges_beside_the_bundle_s_evaluation_not_into_it(
    bundle: Path, tmp_path: Path
) -> None:
    """evaluation.json's bytes depended on whether, and with which file, `--study` was given last:
    a dashboard read a different file after each job. It is the bundle's alone."""
    assert _perfdsl("evaluate", str(bundle)).returncode == 0
    alone = (bundle / "evaluation.json").read_bytes()
    edited = tmp_path / "edited.perf"
    edited.write_text(
        (ROOT / "studies/rmsnorm_fusion.perf")
        .read_text()
        .replace("normalize.time   ratio <= 0.55", "normalize.time   ratio <= 0.75")
    )
    done = _perfdsl("evaluate", str(bundle), "--study", str(edited), "--junit", str(tmp_path / "j.xml"))
    assert done.returncode == 0 and "edited after the run" in done.stdout
    assert "edited after the run" in (tmp_path / "j.xml").read_text()
    assert (bundle / "evaluation.json").read_bytes() == alone


@pytest.mark.slow
def test_a_study_that_does_not_check_is_no_current_study(bundle: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.perf"
    broken.write_text(
        (ROOT / "studies/rmsnorm_fusion.perf").read_text().replace("uses  normalize", "uses  nope")
    )
    done = _perfdsl("evaluate", str(bundle), "--study", str(broken))
    assert done.returncode == 2
    assert "the study does not check (1 error)" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_study_file_that_cannot_be_compared_is_refused_in_one_line(bundle: Path, tmp_path: Path) -> None:
    latin1, other = tmp_path / "latin1.perf", tmp_path / "other.perf"
    latin1.write_bytes(b'study rmsnorm_fusion { title "caf\xe9" }\n')
    other.write_text((ROOT / "studies/planted_null.perf").read_text())
    cases = {
        tmp_path / "missing.perf": "cannot read the study: No such file or directory",
        latin1: "not UTF-8 text (byte 33)",
        other: "is study `planted_null`, and the bundle is of study `rmsnorm_fusion`",
    }
    for path, said in cases.items():
        done = _perfdsl("evaluate", str(bundle), "--study", str(path))
        assert done.returncode == 2, done.stdout
        assert said in done.stderr and "Traceback" not in done.stderr


@pytest.mark.slow
def test_a_real_bundle_reads_into_records_and_back(real_bundle: Path) -> None:
    results = Results.read(real_bundle)
    assert results.schema == versions.RESULTS and results.target == "cpu"
    assert results.timer_resolution_ns == targets.CPU.resolution_ns
    assert results.operations[0].shapes and results.application and results.application.load
    raw = json.loads((real_bundle / "results.json").read_text())
    assert results.to_json() == raw
    assert Results.from_json(json.loads(json.dumps(results.to_json())), real_bundle) == results


def _set_version(bundle: Path, schema: str) -> None:
    """Give results.json another format version, the manifest updated to match."""
    data = json.loads((bundle / "results.json").read_text())
    replace_file(bundle, "results.json", json.dumps({**data, "schema": schema}).encode())


def _one_line_refusal(done: subprocess.CompletedProcess[str], command: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith(f"perfdsl {command}: error: ")
    assert "results.json: format version 'perfdsl.results/99'" in line


@pytest.mark.slow
def test_evaluate_refuses_a_bundle_of_an_unknown_version(bundle: Path) -> None:
    _set_version(bundle, "perfdsl.results/99")
    _one_line_refusal(_perfdsl("evaluate", str(bundle)), "evaluate")
    assert not (bundle / "evaluation.json").exists()


@pytest.mark.slow
def test_build_refuses_a_bundle_of_an_unknown_version_even_when_evaluated(
    bundle: Path, tmp_path: Path
) -> None:
    assert _perfdsl("evaluate", str(bundle)).returncode == 0
    _set_version(bundle, "perfdsl.results/99")
    out = tmp_path / "report.md"
    done = _perfdsl("build", "--md", "studies/rmsnorm_fusion.perf", "--results", str(bundle), "-o", str(out))
    _one_line_refusal(done, "build")
    assert not out.exists()


def _set_evaluation_version(bundle: Path, schema: str) -> None:
    """Give evaluation.json another format version, the manifest updated to match."""
    data = json.loads((bundle / versions.EVALUATION_FILE).read_text())
    replace_file(bundle, versions.EVALUATION_FILE, json.dumps({**data, "schema": schema}).encode())


@pytest.mark.slow
def test_build_refuses_an_evaluation_of_an_unknown_version(bundle: Path, tmp_path: Path) -> None:
    assert _perfdsl("evaluate", str(bundle)).returncode == 0
    _set_evaluation_version(bundle, "perfdsl.evaluation/99")
    out = tmp_path / "report.md"
    done = _perfdsl("build", "--md", "studies/rmsnorm_fusion.perf", "--results", str(bundle), "-o", str(out))
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("perfdsl build: error: ")
    assert "evaluation.json: format version 'perfdsl.evaluation/99'" in line
    assert not out.exists()


@pytest.mark.slow
def test_build_evaluates_an_evaluation_of_an_earlier_version_again(bundle: Path, tmp_path: Path) -> None:
    assert _perfdsl("evaluate", str(bundle)).returncode == 0
    _set_evaluation_version(bundle, "perfdsl.evaluation/4")
    out = tmp_path / "report.md"
    done = _perfdsl("build", "--md", "studies/rmsnorm_fusion.perf", "--results", str(bundle), "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert "evaluated" in done.stderr and out.is_file()
    assert json.loads((bundle / versions.EVALUATION_FILE).read_text())["schema"] == versions.EVALUATION
