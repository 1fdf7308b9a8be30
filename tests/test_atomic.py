"""A replaced file is the old one or the whole new one, never half of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfdsl.atomic import replacing


def test_the_new_file_replaces_the_old_when_the_block_finishes(tmp_path: Path) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"old")
    with replacing(target) as handle:
        handle.write(b"new")
        assert target.read_bytes() == b"old"  # nothing shows until the block ends
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]


def test_an_error_keeps_the_old_file_and_leaves_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "report.pdf"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError), replacing(target) as handle:
        handle.write(b"half")
        raise RuntimeError("interrupted")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["report.pdf"]


def test_a_symbolic_link_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    target = tmp_path / "results" / "verdicts.jsonl"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link = tmp_path / "latest.jsonl"
    link.symlink_to(target)
    with replacing(link) as handle:
        handle.write(b"new")
    assert link.is_symlink() and target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["latest.jsonl", "results", "verdicts.jsonl"]


def test_a_named_pipe_is_written_into_not_replaced(tmp_path: Path) -> None:
    """As `/dev/stdout` is: renaming over it would put a regular file where the device was."""
    import os
    import stat
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    with replacing(fifo) as handle:
        handle.write(b"one line\n")
    reader.join(timeout=10)
    assert received == [b"one line\n"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


def test_a_replaced_file_keeps_its_permissions(tmp_path: Path) -> None:
    """A report kept private (600) came back readable by everyone (644) after `build` replaced it."""
    import stat

    private = tmp_path / "report.md"
    private.write_bytes(b"old")
    private.chmod(0o600)
    with replacing(private) as handle:
        handle.write(b"new")
    assert private.read_bytes() == b"new" and stat.S_IMODE(private.stat().st_mode) == 0o600
