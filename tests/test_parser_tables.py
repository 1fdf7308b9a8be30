"""The shipped parser tables: current for the grammar, used only for the grammar they were built
from, and parsing as the parser built from the grammar does."""

from __future__ import annotations

import types
from pathlib import Path
from typing import Any

import lark
import pytest

from perfdsl import parser_data, syntax
from perfdsl.parser_tables import current, load_parser, shipped_parse_tables, table_key, tables_source
from perfdsl.source import Source
from perfdsl.table_parse import TableParser, Unparsed

ROOT = Path(__file__).resolve().parent.parent
GRAMMAR = syntax.grammar_text()
OLD_COMPARATORS = 'COMPARATOR: "<=" | ">=" | "==" | "<" | ">"'
# The changed grammar accepts `!=` as well: tables built before the change reject it.
CHANGED = GRAMMAR.replace(OLD_COMPARATORS, OLD_COMPARATORS + ' | "!="')
ONLY_CHANGED_READS = "study s {\n  slo p99 != 25\n}\n"


def _tables(grammar: str, **replace: Any) -> types.ModuleType:
    module = types.ModuleType("planted_parser_data")
    exec(tables_source(grammar, syntax.PARSER_OPTIONS, syntax.StatementBreaks()), module.__dict__)
    module.__dict__.update(replace)
    return module


def _load(grammar: str, tables: types.ModuleType) -> Any:
    return load_parser(grammar, syntax.PARSER_OPTIONS, syntax.StatementBreaks(), tables)


@pytest.fixture
def no_building(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a parser from a grammar fails: a parser made now came from tables."""

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the parser was built from the grammar, not loaded from the tables")

    monkeypatch.setattr(lark.Lark, "__init__", refuse)


def test_the_shipped_tables_are_current_for_the_grammar() -> None:
    """Fails after an edit of grammar/perf.lark until `python -m perfdsl.parser_tables` is run."""
    assert table_key(GRAMMAR, syntax.PARSER_OPTIONS) == parser_data.KEY, "run python -m perfdsl.parser_tables"
    assert current(parser_data, GRAMMAR, syntax.PARSER_OPTIONS, lark.__version__), (
        f"the tables were built by Lark {parser_data.LARK_VERSION}, Lark {lark.__version__} is installed: "
        "run python -m perfdsl.parser_tables"
    )
    assert table_key(CHANGED, syntax.PARSER_OPTIONS) != parser_data.KEY


def test_the_changed_grammar_is_a_real_change() -> None:
    """The tests below mean something only if the old grammar rejects the text the new one reads."""
    with pytest.raises(lark.exceptions.UnexpectedInput):
        _load(GRAMMAR, _tables(GRAMMAR)).parse(ONLY_CHANGED_READS)
    assert _load(CHANGED, _tables(CHANGED)).parse(ONLY_CHANGED_READS) is not None


def test_tables_of_another_grammar_are_never_used() -> None:
    assert _load(CHANGED, _tables(GRAMMAR)).parse(ONLY_CHANGED_READS) is not None


def test_tables_another_lark_built_are_never_used() -> None:
    stale = _tables(CHANGED, LARK_VERSION="0.1.0", DATA=_tables(GRAMMAR).DATA, MEMO=_tables(GRAMMAR).MEMO)
    assert _load(CHANGED, stale).parse(ONLY_CHANGED_READS) is not None


def test_current_tables_are_loaded_not_rebuilt(no_building: None) -> None:
    assert _load(GRAMMAR, parser_data).parse("study s {\n  slo p99 <= 25\n}\n") is not None


@pytest.mark.parametrize("study", sorted(ROOT.glob("studies/*.perf")), ids=lambda p: p.name)
def test_the_shipped_tables_parse_as_the_grammar_does(study: Path) -> None:
    """Trees and the positions every diagnostic's span is taken from, for every bundled study."""
    text = study.read_text(encoding="utf-8")
    built = lark.Lark(GRAMMAR, postlex=syntax.StatementBreaks(), **syntax.PARSER_OPTIONS).parse(text)
    shipped = _load(GRAMMAR, parser_data).parse(text)
    assert shipped == built
    spans = [(t.data, t.meta.start_pos, t.meta.end_pos) for t in built.iter_subtrees() if not t.meta.empty]
    assert [
        (t.data, t.meta.start_pos, t.meta.end_pos) for t in shipped.iter_subtrees() if not t.meta.empty
    ] == (spans)


def _plain_parse(tables: Any, text: str) -> object:
    parser = TableParser(tables, syntax.StatementBreaks().process)
    return parser.parse(text, syntax._StatementBuilder(Source("s.perf", text)).reductions(parser.rules))


def test_plain_tables_are_used_only_for_the_grammar_they_were_built_from() -> None:
    assert shipped_parse_tables(GRAMMAR, syntax.PARSER_OPTIONS, parser_data) is not None
    assert shipped_parse_tables(CHANGED, syntax.PARSER_OPTIONS, parser_data) is None
    with pytest.raises(Unparsed):
        _plain_parse(shipped_parse_tables(GRAMMAR, syntax.PARSER_OPTIONS, parser_data), ONLY_CHANGED_READS)
    changed = shipped_parse_tables(CHANGED, syntax.PARSER_OPTIONS, _tables(CHANGED))
    assert _plain_parse(changed, ONLY_CHANGED_READS) is not None
