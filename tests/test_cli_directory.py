"""The command line started from a directory that no longer exists."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfdsl.cli import main


@pytest.mark.parametrize("argv", [["check", "study.perf"], ["verify", "bundle"], ["explain", "PD001"]])
def test_a_removed_working_directory_is_one_line_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    # `check study.perf` from a directory removed under the shell raised FileNotFoundError from
    # Path.resolve, with a traceback.
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        f"perfdsl {argv[0]}: error: the current directory no longer exists; "
        "cd to one that does and run the command again\n"
    )
