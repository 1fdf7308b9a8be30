"""Nothing from a study or a matrix file reaches a shell unquoted.

Every field that reaches the job script either is refused (names, partitions,
constraints, times: `test_matrix_spec`) or travels as data: the study's path,
an environment's python, the matrix directory and every cell directory below
it. Here all of those hold `$(...)`, backticks, `;`, a newline and quotes, the
whole `perfdsl matrix` command runs them through the stand-in sbatch (which,
as Slurm does, runs the script with `sh`), and the planted commands never run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from matrix_support import FAKE, REPO, STUDY, matrix_text

pytestmark = pytest.mark.slow  # runs the whole matrix command against stand-ins

PAYLOAD = "p$(touch /tmp/pwned)`touch /tmp/pwned`;touch /tmp/pwned;'\"\nq"
PWNED = Path("/tmp/pwned")


def perfdsl_matrix(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "perfdsl", "matrix", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def toml_text(text: str) -> str:
    """`text` inside a TOML basic string."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


@pytest.fixture
def environment(tmp_path: Path) -> dict[str, str]:
    PWNED.unlink(missing_ok=True)
    return dict(
        os.environ,
        PATH=f"{FAKE}{os.pathsep}{os.environ['PATH']}",
        FAKE_SLURM_DIR=str(tmp_path / "fakeslurm"),
        FAKE_RUN_LOG=str(tmp_path / "runs.log"),
        PYTHONPATH=str(REPO),
    )


def test_paths_full_of_shell_syntax_travel_as_data(tmp_path: Path, environment: dict[str, str]) -> None:
    hostile = tmp_path / PAYLOAD  # `/tmp/pwned` makes it several directories, each hostile
    hostile.mkdir(parents=True)
    study = hostile / "study.perf"
    shutil.copyfile(STUDY, study)
    python = hostile / "python"
    shutil.copyfile(FAKE / "fake_run.py", python)
    python.chmod(0o755)
    text = matrix_text("hostile", python=toml_text(str(python))).replace(
        f'"{STUDY}"', f'"{toml_text(str(study))}"'
    )
    matrix = hostile / "m.toml"
    matrix.write_text(text, encoding="utf-8")

    done = perfdsl_matrix(
        str(matrix), "--executor", "slurm", "--poll", "0.05", "--dir", str(hostile / PAYLOAD), env=environment
    )
    assert done.returncode == 0, done.stderr
    assert not PWNED.exists(), "a planted command ran"
    assert len((tmp_path / "runs.log").read_text().split()) == 4
    bundles = list((hostile / PAYLOAD).glob("*/cells/*/runs/study/*/manifest.json"))
    assert len(bundles) == 4, "the cells did not run under the hostile paths"


@pytest.mark.parametrize(
    "field",
    ['name = "{}"', '[slurm]\npartition = "{}"', '[[machines]]\nname = "a"\nconstraint = "{}"'],
)
def test_a_hostile_scheduler_field_is_refused_in_one_line_before_anything_runs(
    tmp_path: Path, environment: dict[str, str], field: str
) -> None:
    value = toml_text(PAYLOAD)
    text = matrix_text("ok").replace("[slurm]\n", "") if "[slurm]" in field else matrix_text("ok")
    if field.startswith("name"):
        text = text.replace('name = "ok"', field.format(value))
    else:
        text = text + "\n" + field.format(value) + "\n"
    matrix = tmp_path / "m.toml"
    matrix.write_text(text, encoding="utf-8")
    done = perfdsl_matrix(str(matrix), "--executor", "slurm", "--dir", str(tmp_path / "out"), env=environment)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert (
        len(lines) == 1
        and lines[0].startswith(f"perfdsl matrix: error: {matrix}: ")
        and "refused" in lines[0]
    )
    assert not (tmp_path / "out").exists() and not (tmp_path / "fakeslurm").exists()
    assert not PWNED.exists()
