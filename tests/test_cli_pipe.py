"""A closed output pipe never changes the exit status (`perfdsl check x.perf | head -1`).

The reader's end is closed before the command starts, so every write it makes
meets EPIPE: the command must still end with the status its result warrants,
and without a traceback.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BROKEN = ROOT / "tests" / "check_cases" / "PD001_missing_comma.perf"
CLEAN = ROOT / "studies" / "rmsnorm_fusion.perf"


def _into_closed_pipe(*args: str) -> subprocess.CompletedProcess[str]:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        return subprocess.run(
            [sys.executable, "-m", "perfdsl", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=ROOT,
            check=False,
        )
    finally:
        os.close(write_end)


@pytest.mark.parametrize("form", ["full", "short", "json"])
def test_errors_still_exit_1_when_the_reader_has_gone(form: str) -> None:
    result = _into_closed_pipe("check", "--format", form, str(BROKEN))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr


def test_a_clean_study_still_exits_0() -> None:
    result = _into_closed_pipe("check", str(CLEAN))
    assert result.returncode == 0
    assert "Traceback" not in result.stderr


def test_explain_into_a_closed_pipe_has_no_traceback() -> None:
    result = _into_closed_pipe("explain", "PQ006")
    assert result.returncode == 0
    assert result.stderr == ""
