"""`perfdsl new NAME`: the scaffold checks, runs, and never overwrites a file.

Run as the real command line in a temporary directory outside the repository,
so the study must find its kernel module from its own directory, as a user's would.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from run_support import RUN_TIMEOUT_S, environment, perfdsl_command


def _perfdsl(cwd: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        perfdsl_command(*args), cwd=cwd, env=environment(), capture_output=True, text=True, timeout=timeout
    )


@pytest.mark.slow
def test_new_study_checks_and_runs(tmp_path: Path) -> None:
    made = _perfdsl(tmp_path, "new", "demo")
    assert made.returncode == 0, made.stderr
    assert made.stderr == ""
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.perf", "demo_kernels.py"]

    checked = _perfdsl(tmp_path, "check", "demo.perf")
    assert checked.returncode == 0, checked.stdout
    assert checked.stderr == ""
    assert "no problems found" in checked.stdout

    ran = _perfdsl(tmp_path, "run", "--target", "cpu", "--quick", "demo.perf", timeout=RUN_TIMEOUT_S)
    assert ran.returncode == 0, ran.stderr
    bundles = [p for p in (tmp_path / "artifacts" / "demo").iterdir() if p.is_dir()]
    assert len(bundles) == 1
    assert (bundles[0] / "manifest.json").is_file()


def test_new_refuses_to_overwrite(tmp_path: Path) -> None:
    kernels = tmp_path / "demo_kernels.py"
    kernels.write_text("# someone's work\n", encoding="utf-8")
    refused = _perfdsl(tmp_path, "new", "demo")
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1
    assert "demo_kernels.py already exists" in refused.stderr
    assert kernels.read_text(encoding="utf-8") == "# someone's work\n"
    assert not (tmp_path / "demo.perf").exists()


@pytest.mark.parametrize("name", ["2fast", "my-study", "a.b"])
def test_new_refuses_a_name_that_is_not_an_identifier(tmp_path: Path, name: str) -> None:
    refused = _perfdsl(tmp_path, "new", name)
    assert refused.returncode == 2
    assert "is not a study name" in refused.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_name_the_file_system_refuses_is_one_line(tmp_path: Path) -> None:
    refused = _perfdsl(tmp_path, "new", "n" * 300)  # longer than a file name may be
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1
    assert "cannot write" in refused.stderr
    assert list(tmp_path.iterdir()) == []
