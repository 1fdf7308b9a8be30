"""`check` reads only regular files: a device, pipe or oversized file is one error, never a hang.

`check /dev/zero`, a study linked to it, and a study importing it each read until the kernel
killed the process for its memory.
"""

from __future__ import annotations

import os
import shutil
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
        "the study file cannot be read: not a regular file (a device, pipe or socket)",
    )
    assert found.help == "name the study's own file: a regular file of UTF-8 text"


def test_a_pipe_is_no_study_and_is_not_waited_on(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "study.perf"
    os.mkfifo(fifo)
    assert main(["check", str(fifo)]) == 2
    assert "not a regular file" in capsys.readouterr().out


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
    assert "not a regular file (a device, pipe or socket)" in out and "Traceback" not in out
