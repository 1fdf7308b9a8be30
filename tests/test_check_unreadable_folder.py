"""`check DIR` never passes over a folder it cannot read."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from unprivileged import without_file_overrides

ROOT = Path(__file__).resolve().parent.parent


def test_a_folder_it_cannot_list_fails_the_check_instead_of_passing_unchecked(tmp_path: Path) -> None:
    # `check d` with d/sub unreadable said "ok: 1 study checked, no problems found", status 0,
    # while d/sub held a study with an error: a CI gate passed.
    shutil.copy(ROOT / "studies" / "rmsnorm_cpu.perf", tmp_path / "a.perf")
    hidden = tmp_path / "sub"
    hidden.mkdir()
    shutil.copy(ROOT / "tests" / "check_cases" / "PD001_missing_comma.perf", hidden)
    hidden.chmod(0)
    try:
        done = subprocess.run(
            [*without_file_overrides(), sys.executable, "-m", "perfdsl", "check", str(tmp_path)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=False,
        )
    finally:
        hidden.chmod(0o755)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == (
        f"perfdsl check: error: {hidden}: cannot read the directory: Permission denied; "
        "the studies in it would go unchecked"
    )
