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
