"""The statements built at each reduction carry the spans Lark's own tree gives the same nodes."""

from __future__ import annotations

from pathlib import Path

import attrs
import lark
import pytest

from perfdsl import syntax
from perfdsl.nodes import BinOp, ListExpr, RangeExpr, Ref, TupleExpr
from perfdsl.source import Source

ROOT = Path(__file__).resolve().parent.parent
STUDIES = sorted(ROOT.glob("studies/*.perf")) + sorted(ROOT.glob("docs/examples/*/*.perf"))

RECORD_OF_RULE = {
    "study": syntax.Section,
    "section": syntax.Section,
    "labelled": syntax.Section,
    "setting": syntax.Setting,
    "shapes": syntax.ShapesStatement,
    "condition": syntax.ConditionStatement,
    "model": syntax.ModelStatement,
    "prediction": syntax.PredictionStatement,
    "load": syntax.LoadStatement,
    "range": RangeExpr,
    "list": ListExpr,
    "tuple": TupleExpr,
    "reference": Ref,
    "add": BinOp,
    "sub": BinOp,
    "mul": BinOp,
    "div": BinOp,
}
"""Rules whose node becomes one record of its own, with the node's span."""


def _records(value: object) -> list[tuple[str, int, int]]:
    """(record kind, start, end) of every record of `RECORD_OF_RULE`'s kinds inside `value`."""
    kinds = tuple(set(RECORD_OF_RULE.values()))
    found: list[tuple[str, int, int]] = []

    def visit(item: object) -> None:
        if isinstance(item, tuple):
            for part in item:
                visit(part)
        elif attrs.has(type(item)):
            if isinstance(item, kinds):
                found.append((type(item).__name__, item.span.start, item.span.end))
            for field in attrs.fields(type(item)):
                visit(getattr(item, field.name))

    visit(value)
    return sorted(found)


def _tree_nodes(text: str) -> list[tuple[str, int, int]]:
    """The same, read off the tree Lark builds with `propagate_positions`."""
    tree = lark.Lark(syntax.grammar_text(), postlex=syntax.StatementBreaks(), **syntax.PARSER_OPTIONS).parse(
        text
    )
    return sorted(
        (RECORD_OF_RULE[node.data].__name__, node.meta.start_pos, node.meta.end_pos)
        for node in tree.iter_subtrees()
        if node.data in RECORD_OF_RULE
    )


@pytest.mark.parametrize("study", STUDIES, ids=lambda p: p.name)
def test_every_record_spans_what_the_tree_node_spans(study: Path) -> None:
    text = study.read_text(encoding="utf-8")
    section, diagnostics = syntax.parse_statements(Source(str(study), text))
    assert section is not None, diagnostics
    assert _records(section) == _tree_nodes(text)


def test_a_parenthesised_factor_reaches_its_closing_parenthesis() -> None:
    """A `?rule` that passes its one child through (`( expr )`) lends it the text it matched."""
    text = "study s {\n  operation op {\n    bytes baseline 4*(5*M*N + M), change 2*(M)\n  }\n}\n"
    section, diagnostics = syntax.parse_statements(Source("s.perf", text))
    assert section is not None and not diagnostics
    (statement,) = section.items[0].items
    baseline, change = statement.model.baseline, statement.model.change
    assert text[baseline.span.start : baseline.span.end] == "4*(5*M*N + M)"
    assert text[change.span.start : change.span.end] == "2*(M)"
    assert text[baseline.right.span.start : baseline.right.span.end] == "5*M*N + M"


def test_diagnostics_of_a_parse_that_fails_are_not_kept() -> None:
    """Values are built while the parser reduces: a number too large in a study whose later
    line breaks the parse is reported once the rest parses, never twice."""
    text = "study s {\n  seeds 1e999\n  seeds 5 5\n}\n"
    _, diagnostics = syntax.parse_statements(Source("s.perf", text))
    assert [d.code for d in diagnostics] == ["PD001", "PD007"]


@pytest.mark.parametrize(
    "written, read",
    [
        ('"plain text, no escape"', "plain text, no escape"),
        ('"a \\"quoted\\" word"', 'a "quoted" word'),
        ('"two\\nlines\\tand a tab"', "two\nlines\tand a tab"),
        ('"a backslash \\\\ kept once"', "a backslash \\ kept once"),
        ('"an unknown \\q stays"', "an unknown \\q stays"),
    ],
)
def test_a_string_reads_as_its_escapes_say(written: str, read: str) -> None:
    text = f"study s {{\n  title {written}\n}}\n"
    section, diagnostics = syntax.parse_statements(Source("s.perf", text))
    assert not diagnostics
    (title,) = section.items
    assert title.values[0].value == read
