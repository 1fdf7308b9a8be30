"""The kept parser: used for the grammar it was generated from, and never for another.

Each test generates a real parser from grammar/perf.lark (or a changed copy of
it) into a temporary cache directory.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from perfdsl import syntax
from perfdsl.parser_cache import cache_directory, load_or_build, table_key, table_path

GRAMMAR = syntax.grammar_text()
OLD_COMPARATORS = 'COMPARATOR: "<=" | ">=" | "==" | "<" | ">"'
# The changed grammar accepts `!=` as well: a table built before the change rejects it.
CHANGED = GRAMMAR.replace(OLD_COMPARATORS, OLD_COMPARATORS + ' | "!="')
ONLY_CHANGED_READS = "study s {\n  slo p99 != 25\n}\n"


def _parser(grammar: str, directory: Path | None):
    return load_or_build(grammar, syntax._OPTIONS, directory).Lark_StandAlone(
        postlex=syntax._StatementBreaks()
    )


def _path(grammar: str, directory: Path) -> Path:
    return table_path(directory, table_key(grammar, syntax._OPTIONS))


def test_the_changed_grammar_is_a_real_change() -> None:
    """The tests below mean something only if the old grammar rejects the text the new one reads."""
    assert CHANGED != GRAMMAR
    old = load_or_build(GRAMMAR, syntax._OPTIONS, None)
    with pytest.raises(old.UnexpectedInput):
        old.Lark_StandAlone(postlex=syntax._StatementBreaks()).parse(ONLY_CHANGED_READS)
    assert _parser(CHANGED, None).parse(ONLY_CHANGED_READS) is not None


def test_a_changed_grammar_does_not_reuse_a_stale_table(tmp_path: Path) -> None:
    """The old grammar's table planted where the changed grammar's belongs is not read."""
    _parser(GRAMMAR, tmp_path)
    stale, fresh = _path(GRAMMAR, tmp_path), _path(CHANGED, tmp_path)
    assert stale.is_file() and stale != fresh
    shutil.copyfile(stale, fresh)
    parser = _parser(CHANGED, tmp_path)
    assert parser.parse(ONLY_CHANGED_READS) is not None
    # The planted file was replaced by the changed grammar's own table, which is then used.
    assert fresh.read_bytes() != stale.read_bytes()
    assert _parser(CHANGED, tmp_path).parse(ONLY_CHANGED_READS) is not None


def test_a_kept_table_is_read_not_rebuilt(tmp_path: Path) -> None:
    _parser(GRAMMAR, tmp_path)
    path = _path(GRAMMAR, tmp_path)
    before = path.stat()
    text = (Path(__file__).resolve().parent.parent / "studies" / "rmsnorm_fusion.perf").read_text()
    assert _parser(GRAMMAR, tmp_path).parse(text) == _parser(GRAMMAR, None).parse(text)
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert [p.name for p in tmp_path.iterdir()] == [path.name]


def test_a_damaged_table_is_rebuilt(tmp_path: Path) -> None:
    """A file with the right first line but cut-off code is generated again, not an error."""
    path = _path(GRAMMAR, tmp_path)
    _parser(GRAMMAR, tmp_path)
    cut = path.read_bytes()[: path.stat().st_size // 2]
    path.write_bytes(cut)
    assert _parser(GRAMMAR, tmp_path).parse("study s {\n  seeds 5\n}\n") is not None
    assert path.read_bytes() != cut


def test_no_writable_cache_directory_still_parses(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory", encoding="utf-8")
    assert _parser(GRAMMAR, blocked / "perfdsl").parse("study s {\n  seeds 5\n}\n") is not None


def test_the_cache_is_the_users_own(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache_directory() == tmp_path / "perfdsl"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache_directory() == tmp_path / "home" / ".cache" / "perfdsl"
