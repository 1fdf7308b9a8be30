"""`perfdsl run` when things go wrong: a broken kernel, a bad reference, a run killed midway.

The broken kernel lives in a user module beside its study (tests/run_fixtures/),
so this also shows that a study's own directory is searched for its modules.
The broken run doubles as the import check: it runs `perfdsl.cli.main` in a
child process and reports which report-side modules got imported.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from run_support import FIXTURES, REPO, bundle_dirs, environment, read_json, run, start

from perfdsl.bundle.files import latest_bundle
from perfdsl.parse import parse
from perfdsl.plan import refuse_undeclared_target
from perfdsl.source import Source

pytestmark = pytest.mark.slow

BROKEN_STUDY = FIXTURES / "broken.perf"
REPORT_SIDE = ("weasyprint", "matplotlib", "markdown_it")
MAIN_AND_MODULES = r"""
import json, sys
from perfdsl.cli import main
status = main(sys.argv[1:])
found = sorted(m for m in sys.modules if m.split(".")[0] in {report} or m.startswith("perfdsl.report"))
print(json.dumps({{"status": status, "report_modules": found}}))
"""


@pytest.fixture(scope="session")
def broken_run(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The broken study run in-process through `perfdsl.cli.main`, in a child interpreter."""
    artifacts = tmp_path_factory.mktemp("broken")
    script = MAIN_AND_MODULES.format(report=set(REPORT_SIDE))
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            script,
            "run",
            str(BROKEN_STUDY),
            "--target",
            "cpu",
            "--quick",
            "--artifacts",
            str(artifacts),
        ],
        cwd=REPO,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.strip().splitlines()
    return {
        "report": json.loads(lines[-1]),
        "bundle": Path(lines[-2]),
        "stderr": done.stderr,
        "artifacts": artifacts,
    }


def test_run_imports_nothing_from_the_report_side(broken_run: dict[str, Any]) -> None:
    assert broken_run["report"]["status"] == 0
    assert broken_run["report"]["report_modules"] == []


def test_broken_kernel_is_a_recorded_failure_and_not_timed(broken_run: dict[str, Any]) -> None:
    bundle = broken_run["bundle"]
    assert "Traceback" not in broken_run["stderr"]
    assert run("verify", str(bundle), timeout=120).returncode == 0
    results = read_json(bundle / "results.json")
    (operation,) = results["operations"]
    correctness = operation["correctness"]
    assert correctness["passed"] is False
    failed = [case for case in correctness["cases"] if not case["passed"]]
    # The planted bug: the last partial block of 1000 = 3 * 256 + 232 elements is never launched.
    assert {(case["arm"], case["variant"]) for case in failed} == {("change", "off_by_one_scale")}
    assert sorted(case["seed"] for case in failed) == [0, 1]
    for case in failed:
        assert case["shape"] == {"N": 1000} and case["adversarial"] is True
        assert case["unwritten"] == 232 and "never written" in case["message"]
    # On lengths that are a multiple of the block the broken variant is right: only the
    # adversarial shape catches it.
    assert all(c["passed"] for c in correctness["cases"] if c["arm"] == "baseline" or not c["adversarial"])
    for shape in operation["shapes"]:
        assert shape["samples"] is None and "correctness" in shape["samples_missing"]
        assert shape["timing"] is None
    assert not (bundle / "samples" / operation["name"]).exists()
    assert results["application"]["samples"] is None


def test_the_console_names_every_failing_case(broken_run: dict[str, Any]) -> None:
    """A change that fails correctness used to exit 0 with nothing on the console about it."""
    failing = [line for line in broken_run["stderr"].splitlines() if "correctness FAILED" in line]
    # Both seeds failed alike: one line says the first and counts the other.
    (line,) = failing
    assert (
        "change (`off_by_one_scale`) at N=1000, seed 0 and 1 more case: 232 element(s) of `y` never" in line
    )
    assert "no timing of a failing change supports a decision" in broken_run["stderr"]


def test_bad_reference_names_the_study_line(tmp_path: Path) -> None:
    study = tmp_path / "rmsnorm_fusion.perf"
    text = (REPO / "studies" / "rmsnorm_fusion.perf").read_text(encoding="utf-8")
    study.write_text(text.replace("kernels.rmsnorm:fused", "kernels.rmsnorm:fusd"), encoding="utf-8")
    line = next(n for n, t in enumerate(study.read_text().splitlines(), 1) if "kernels.rmsnorm:fusd" in t)
    artifacts = tmp_path / "artifacts"
    done = run("run", str(study), "--target", "cpu", "--quick", "--artifacts", str(artifacts), timeout=300)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    errors = [text for text in done.stderr.splitlines() if "error" in text]
    assert len(errors) == 1
    assert f"{study}:{line}:" in errors[0] and "fusd" in errors[0]
    assert "; help: did you mean `fused` or `unfused`? otherwise, define `fusd` in" in errors[0], (
        "the help says what to do, on the same line"
    )
    assert bundle_dirs(artifacts, "rmsnorm_fusion") == []


def _start_and_wait_for_tmp(artifacts: Path) -> subprocess.Popen[str]:
    """Start the broken study's run and return once its temporary bundle directory exists."""
    process = start("run", str(BROKEN_STUDY), "--target", "cpu", "--quick", "--artifacts", str(artifacts))
    deadline = time.monotonic() + 120
    while not any(d.name.startswith(".tmp-") for d in bundle_dirs(artifacts, "broken_scale")):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run never opened its bundle"
        time.sleep(0.02)
    return process


def test_sigkill_midway_leaves_no_bundle(tmp_path: Path) -> None:
    process = _start_and_wait_for_tmp(tmp_path)
    process.kill()
    process.communicate(timeout=60)
    left = bundle_dirs(tmp_path, "broken_scale")
    # A killed run cannot clean up: what is left is a temporary directory, never a bundle.
    assert left and all(d.name.startswith(".tmp-") for d in left)
    assert latest_bundle(tmp_path, "broken_scale") is None
    assert run("verify", str(left[0]), timeout=120).returncode != 0


@pytest.mark.parametrize(
    ("sent", "status", "said"),
    [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 128 + signal.SIGTERM, "terminated")],
)
def test_a_signal_midway_stops_cleanly(tmp_path: Path, sent: int, status: int, said: str) -> None:
    process = _start_and_wait_for_tmp(tmp_path)
    process.send_signal(sent)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == status
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == f"perfdsl run: {said}; nothing half-written was kept"
    assert bundle_dirs(tmp_path, "broken_scale") == []


# One study whose kernels run anywhere, its `targets` set to each case's.
REFUSAL = r"""
import json, sys
from perfdsl.cli import main
status = main(sys.argv[1:])
print(json.dumps({"status": status, "numba": "numba" in sys.modules}))
"""


@pytest.mark.parametrize(("targets", "asked"), [("cuda", "cpu"), ("cpu", "cuda"), ("cpu", "cudasim")])
def test_a_target_the_study_does_not_declare_is_refused_before_anything_runs(
    tmp_path: Path, targets: str, asked: str
) -> None:
    text = (REPO / "studies" / "batchnorm_numpy.perf").read_text(encoding="utf-8")
    study = tmp_path / "one_target.perf"
    study.write_text(text.replace("targets   cpu", f"targets   {targets}"), encoding="utf-8")
    line = next(n for n, t in enumerate(study.read_text().splitlines(), 1) if t.strip().startswith("targets"))
    artifacts = tmp_path / "artifacts"
    done = subprocess.run(
        [sys.executable, "-c", REFUSAL, "run", str(study), "--target", asked, "--artifacts", str(artifacts)],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert json.loads(done.stdout) == {"status": 2, "numba": False}
    (message,) = done.stderr.splitlines()
    assert message.startswith(f"perfdsl run: error: {study}:{line}: the study runs on `{targets}`")
    assert f"not `{asked}`" in message and f"--target {targets}" in message
    assert not artifacts.exists()


@pytest.mark.parametrize(("targets", "asked"), [("cuda", "cudasim"), ("cudasim", "cudasim"), ("cpu", "cpu")])
def test_a_declared_target_is_not_refused(targets: str, asked: str) -> None:
    """The simulator runs a cuda study's kernels, so `cudasim` is allowed wherever `cuda` is."""
    text = (REPO / "studies" / "batchnorm_numpy.perf").read_text(encoding="utf-8")
    source = Source("one_target.perf", text.replace("targets   cpu", f"targets   {targets}"))
    study = parse(source).study
    assert study is not None
    refuse_undeclared_target(study, asked)


def test_auto_says_it_chose_the_refused_target(tmp_path: Path) -> None:
    """`auto` picks cuda or cpu, never the simulator: a cudasim-only study is refused either way."""
    text = (REPO / "studies" / "batchnorm_numpy.perf").read_text(encoding="utf-8")
    study = tmp_path / "simulated_only.perf"
    study.write_text(text.replace("targets   cpu", "targets   cudasim"), encoding="utf-8")
    done = run("run", str(study), "--artifacts", str(tmp_path / "artifacts"), timeout=300)
    assert done.returncode == 2
    (message,) = done.stderr.splitlines()
    assert "the study runs on `cudasim` (its `targets`)" in message
    assert "(`--target auto` chose `" in message
