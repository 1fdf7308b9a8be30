"""`check` reads files and pipes, never a device, and never more than a study can be: one error,
never a process the kernel kills for its memory.

`check /dev/zero`, a study linked to it, and a study importing it each read until the kernel
killed the process for its memory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
from pathlib import Path

import pytest

from perfdsl.cli import main
from perfdsl.commands.check import diagnose_file
from perfdsl.source import MAX_STUDY_BYTES

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("linked", [False, True])
def test_a_device_is_no_study(tmp_path: Path, linked: bool) -> None:
    path = Path(os.devnull)
    if linked:
        (tmp_path / "zero.perf").symlink_to(os.devnull)
        path = tmp_path / "zero.perf"
    _, (found,) = diagnose_file(path)
    assert (found.code, found.message) == (
        "PD008",
        "the study file cannot be read: not a file (a device or socket)",
    )
    assert found.help == "name the study's own file: a regular file of UTF-8 text"


def _through_a_pipe(tmp_path: Path, data: bytes) -> Path:
    """A FIFO that a thread fills with `data` once (a shell's `<(...)`), and its path."""
    tmp_path.mkdir()
    fifo = tmp_path / "study.perf"
    os.mkfifo(fifo)

    def write() -> None:
        with contextlib.suppress(BrokenPipeError), open(fifo, "wb") as handle:
            handle.write(data)

    threading.Thread(target=write, daemon=True).start()
    return fifo


def test_a_study_through_a_pipe_is_checked_and_an_endless_one_is_cut_off(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = (ROOT / "studies" / "rmsnorm_cpu.perf").read_bytes()
    assert main(["check", str(_through_a_pipe(tmp_path / "one", study))]) == 0
    endless = _through_a_pipe(tmp_path / "two", b"# " + b"x" * MAX_STUDY_BYTES)
    assert main(["check", str(endless)]) == 2
    assert "larger than 64 MiB, more than any study" in capsys.readouterr().out


def test_a_study_past_the_size_of_any_study_is_refused_unread(tmp_path: Path) -> None:
    big = tmp_path / "big.perf"
    with open(big, "wb") as handle:
        handle.truncate(MAX_STUDY_BYTES + 1)  # sparse: no memory or disk spent
    _, (found,) = diagnose_file(big)
    assert found.message == "the study file cannot be read: larger than 64 MiB, more than any study"


def test_an_imported_device_is_refused_by_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    study = tmp_path / "batchnorm_imported.perf"
    shutil.copy(ROOT / "studies" / "batchnorm_imported.perf", study)
    shutil.copytree(ROOT / "studies" / "imported", tmp_path / "imported")
    text = study.read_text(encoding="utf-8").replace('"imported/pyperf_batchnorm.json"', f'"{os.devnull}"', 1)
    study.write_text(text, encoding="utf-8")
    assert main(["check", "--format", "json", str(study)]) == 1
    out = capsys.readouterr().out
    assert "not a file (a device or socket)" in out and "Traceback" not in out
