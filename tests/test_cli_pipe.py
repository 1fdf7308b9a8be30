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


def _with_stdout(stdout: int | None, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`perfdsl ARGS` with standard output on `stdout` (None: closed before the start)."""
    return subprocess.run(
        [sys.executable, "-m", "perfdsl", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), **env},
        cwd=ROOT,
        check=False,
        close_fds=True,
        pass_fds=(),
        preexec_fn=(lambda: os.close(1)) if stdout is None else None,
    )


def test_a_closed_standard_output_keeps_the_status_the_result_warrants() -> None:
    # `perfdsl check clean.perf >&-` ended in AttributeError on None, status 1.
    clean, broken = _with_stdout(None, "check", str(CLEAN)), _with_stdout(None, "check", str(BROKEN))
    assert (clean.returncode, broken.returncode) == (0, 1), clean.stderr + broken.stderr
    assert "Traceback" not in clean.stderr + broken.stderr


def test_a_full_standard_output_is_a_failure_to_run_in_one_line() -> None:
    with open("/dev/full", "w") as full:
        done = _with_stdout(full.fileno(), "check", str(BROKEN))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        "perfdsl check: error: cannot write standard output: No space left on device"
    )


def test_an_output_encoding_that_cannot_spell_a_character_replaces_it(tmp_path: Path) -> None:
    # PYTHONIOENCODING=ascii: `evaluate` ended in UnicodeEncodeError at the first `µs`.
    study = tmp_path / "study.perf"
    lines = BROKEN.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[7] = lines[7].rstrip("\n") + "  # µs\n"  # the error's own line, which the excerpt shows
    study.write_text("".join(lines), encoding="utf-8")
    done = _with_stdout(subprocess.PIPE, "check", str(study), PYTHONIOENCODING="ascii")
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr


def test_sarif_names_a_file_whose_name_is_not_utf8(tmp_path: Path) -> None:
    # `check --format sarif $'err\xff.perf'` ended in UnicodeEncodeError in quote().
    name = os.fsdecode(b"err\xff.perf")
    (tmp_path / name).write_bytes(BROKEN.read_bytes())
    done = subprocess.run(
        [sys.executable, "-m", "perfdsl", "check", "--format", "sarif", name],
        capture_output=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT), "GITHUB_WORKSPACE": str(tmp_path)},
        check=False,
    )
    assert done.returncode == 1 and b"Traceback" not in done.stderr, done.stderr
    assert b'"uri": "err%FF.perf"' in done.stdout
