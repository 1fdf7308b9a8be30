"""Text to statements: the Lark parser and the tree walk.

The grammar (grammar/perf.lark) fixes the shape of each construct; this module
parses with LALR, turns Lark's tree into plain statement records (`Section`,
`Setting`, ...) with spans, and turns Lark's exceptions into diagnostics
(in the user's words: `perfdsl.syntax_errors`).
`perfdsl.lower` then gives the statements their meaning as a typed `Study`.
Nothing after this module sees a Lark object.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from functools import cache
from typing import Any, Union

import attrs
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedInput

from perfdsl import codes
from perfdsl.collector import collector_paused
from perfdsl.diagnostics import Diagnostic
from perfdsl.nodes import (
    BinOp,
    Condition,
    Expr,
    Imported,
    ListExpr,
    Load,
    Model,
    Name,
    Num,
    Prediction,
    QuantityRef,
    RangeExpr,
    Ref,
    Text,
    TupleExpr,
)
from perfdsl.parser_tables import PARSER_OPTIONS, grammar_text, load_parser
from perfdsl.quantity import Quantity, UnknownUnit, lookup_unit
from perfdsl.source import Source, Span
from perfdsl.syntax_errors import syntax_diagnostic

# ---------------------------------------------------------------- statements


@attrs.frozen
class Setting:
    """`key value, value`: the common statement form."""

    key: Name
    values: tuple[Expr, ...]
    span: Span


@attrs.frozen
class ShapesStatement:
    """`key (M, N) in [(1, 2), ...]`."""

    key: Name
    symbols: Expr
    shapes: ListExpr
    span: Span


@attrs.frozen
class ConditionStatement:
    """`key p99 latency <= 25 ms at 400 rps`."""

    key: Name
    condition: Condition
    span: Span


@attrs.frozen
class ModelStatement:
    model: Model
    span: Span


@attrs.frozen
class PredictionStatement:
    prediction: Prediction
    span: Span


@attrs.frozen
class LoadStatement:
    load: Load
    span: Span


@attrs.frozen
class Section:
    """`keyword [name] ["text"] { statements }`."""

    keyword: Name
    name: Name | None
    text: Text | None
    items: tuple[Statement, ...]
    span: Span
    body_span: Span | None
    """None for a labelled entry without a block: `limit unsupported "float16"`."""


Statement = Union[  # noqa: UP007
    Section,
    Setting,
    ShapesStatement,
    ConditionStatement,
    ModelStatement,
    PredictionStatement,
    LoadStatement,
]

# ---------------------------------------------------------------- the parser


class _StatementBreaks:
    """Post-lexer: newlines end statements only where a statement can end.

    Inside (), [] a newline is layout; right after `{` it is redundant; several
    in a row are one. Tokens are passed on at once, never held back, because
    the contextual lexer chooses the next token's terminals from the parser
    state that the previous token produced.
    """

    always_accept = ("_NL",)

    def process(self, stream: Iterator[Token]) -> Iterator[Token]:
        depth = 0
        previous: str | None = None
        for token in stream:
            kind = token.type
            if kind == "_NL" and (depth > 0 or previous in (None, "LBRACE", "_NL")):
                continue
            if kind in ("LPAR", "LSQB"):
                depth += 1
            elif kind in ("RPAR", "RSQB"):
                depth = max(0, depth - 1)
            previous = kind
            yield token


@cache
def _parser() -> Lark:
    return load_parser(grammar_text(), PARSER_OPTIONS, _StatementBreaks())


def _blank_line(text: str, offset: int) -> str | None:
    """The text with the line holding `offset` replaced by spaces, keeping offsets.

    Used to resume after a syntax error: statements are lines, so a broken line
    can be set aside and the rest parsed. Lines holding braces are not blanked:
    that would unbalance the blocks and invent errors.
    """
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    end = len(text) if end < 0 else end
    line = text[start:end]
    if "{" in line or "}" in line or not line.strip():
        return None
    return text[:start] + " " * len(line) + text[end:]


_MAX_SYNTAX_ERRORS = 10


def parse_statements(source: Source) -> tuple[Section | None, list[Diagnostic]]:
    """Parse a study's text into its top-level `study` section and syntax diagnostics.

    After an error in a statement that does not open or close a block, the
    statement's line is set aside and parsing resumes, so independent errors
    are reported together; any other error ends the pass.

    The collector is paused while Lark parses and the tree is walked: both
    allocate many small objects that stay alive until the end, and rescanning
    them made parse time per line grow 1.8x from 1,000 to 10,000 lines, against
    1.07x paused. Nothing they build forms a reference cycle.
    """
    diagnostics: list[Diagnostic] = []
    # A byte-order mark is how some editors start a UTF-8 file; it is a space to
    # the parser, so that every offset still matches the text as written.
    text = " " + source.text[1:] if source.text.startswith("\ufeff") else source.text
    while True:
        try:
            with collector_paused():
                tree = _parser().parse(text)
        except UnexpectedInput as error:
            diagnostic = syntax_diagnostic(source, error)
            diagnostics.append(diagnostic)
            retry = _blank_line(text, diagnostic.span.start)
            ends_pass = diagnostic.code in ("PD003", "PD006") or len(diagnostics) >= _MAX_SYNTAX_ERRORS
            if retry is None or ends_pass:
                return None, diagnostics
            text = retry
            continue
        builder = _TreeToStatements(source)
        with collector_paused():
            section = builder.transform(tree)
        diagnostics.extend(builder.diagnostics)
        return (None if diagnostics else section), diagnostics


# ---------------------------------------------------------------- the tree walk


def _span(meta_or_token: object) -> Span:
    start = getattr(meta_or_token, "start_pos", 0) or 0
    end = getattr(meta_or_token, "end_pos", start) or start
    return Span(start, end)


def _unescape(literal: str) -> str:
    body = literal[1:-1]
    out: list[str] = []
    chars = iter(body)
    escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            out.append(escapes.get(following, "\\" + following))
        else:
            out.append(char)
    return "".join(out)


class _TreeToStatements:
    """One method per grammar rule, called bottom-up with the rule's positions and children.

    The walk is this class's own, not Lark's `Transformer`: with `v_args(meta=True)` that
    made a new wrapper of the method for every node and offered every token to a method
    that does not exist, a third of a 10,000-line study's parse."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.diagnostics: list[Diagnostic] = []
        self._methods: dict[str, Any] = {}

    def transform(self, tree: Tree) -> Any:
        children = [self.transform(child) if isinstance(child, Tree) else child for child in tree.children]
        method = self._methods.get(tree.data)
        if method is None:
            method = self._methods[tree.data] = getattr(self, tree.data)
        return method(tree.meta, children)

    # -- top level
    def start(self, meta, children):
        return children[0]

    def study(self, meta, children):
        keyword_span = Span(meta.start_pos, meta.start_pos + len("study"))
        name_token, (items, body_span) = children
        return Section(
            Name("study", keyword_span), self._name(name_token), None, items, _span(meta), body_span
        )

    def body(self, meta, children):
        items = tuple(child for child in children if child is not None)
        return items, _span(meta)

    def section(self, meta, children):
        keyword, name, text, (items, body_span) = children
        return Section(
            self._name(keyword),
            self._name(name) if name is not None else None,
            Text(_unescape(text.value), _span(text)) if text is not None else None,
            items,
            _span(meta),
            body_span,
        )

    def labelled(self, meta, children):
        keyword, name, text = children
        return Section(
            self._name(keyword),
            self._name(name),
            Text(_unescape(text.value), _span(text)),
            (),
            _span(meta),
            None,
        )

    # -- statements
    def setting(self, meta, children):
        key, *values = children
        return Setting(self._name(key), tuple(values), _span(meta))

    def shapes(self, meta, children):
        key, symbols, shape_list = children
        return ShapesStatement(self._name(key), symbols, shape_list, _span(meta))

    def condition(self, meta, children):
        key, *words, comparator, bound, qualifier = children
        at = versus = None
        if qualifier is not None:
            kind, value = qualifier
            at, versus = (value, None) if kind == "at" else (None, value)
        condition = Condition(
            tuple(self._name(w) for w in words), str(comparator), bound, at, versus, _span(meta)
        )
        return ConditionStatement(self._name(key), condition, _span(meta))

    def at(self, meta, children):
        return ("at", children[0])

    def versus(self, meta, children):
        return ("vs", self._name(children[0]))

    def model(self, meta, children):
        key, baseline, change = children
        return ModelStatement(Model(self._name(key), baseline, change, _span(meta)), _span(meta))

    def prediction(self, meta, children):
        subject, quantity, statistic, comparator, bound = children
        prediction = Prediction(
            self._name(subject),
            self._name(quantity),
            self._name(statistic),
            str(comparator),
            bound,
            _span(meta),
        )
        return PredictionStatement(prediction, _span(meta))

    def load(self, meta, children):
        arrivals, rates = children
        return LoadStatement(Load(self._name(arrivals), rates, _span(meta)), _span(meta))

    # -- values
    def string(self, meta, children):
        return Text(_unescape(children[0].value), _span(meta))

    def reference(self, meta, children):
        module, _, attr = children[0].value.partition(":")
        return Ref(module, attr, _span(meta))

    def imported(self, meta, children):
        path, format_name, entry = children
        return Imported(
            Text(_unescape(path.value), _span(path)),
            format_name,
            Text(_unescape(entry.value), _span(entry)),
            _span(meta),
        )

    def format_name(self, meta, children):
        return Name("-".join(str(token.value) for token in children), _span(meta))

    def quantity_ref(self, meta, children):
        subject, quantity = children
        return QuantityRef(self._name(subject), self._name(quantity), _span(meta))

    def range(self, meta, children):
        start, stop, step, unit = children
        unit_value = unit
        return RangeExpr(
            self._number(start, unit_value),
            self._number(stop, unit_value),
            self._number(step, unit_value) if step is not None else None,
            _span(meta),
        )

    def list(self, meta, children):
        return ListExpr(tuple(child for child in children if child is not None), _span(meta))

    def tuple(self, meta, children):
        return TupleExpr(tuple(children), _span(meta))

    def name(self, meta, children):
        return self._name(children[0])

    def add(self, meta, children):
        return BinOp("+", children[0], children[1], _span(meta))

    def sub(self, meta, children):
        return BinOp("-", children[0], children[1], _span(meta))

    def mul(self, meta, children):
        return BinOp("*", children[0], children[1], _span(meta))

    def div(self, meta, children):
        return BinOp("/", children[0], children[1], _span(meta))

    def neg(self, meta, children):
        (value,) = children
        span = _span(meta)
        if isinstance(value, Num):
            return Num(Quantity(-value.quantity.value, value.quantity.unit), span)
        return BinOp("-", Num(Quantity(0.0), span), value, span)

    def quantity(self, meta, children):
        number, unit = children
        return self._number(number, unit, _span(meta))

    def word_unit(self, meta, children):
        word, per = children
        return (f"{word.value} per {per.value}" if per is not None else word.value), _span(meta)

    def per_unit(self, meta, children):
        return f"per {children[0].value}", _span(meta)

    def rate_unit(self, meta, children):
        return children[0].value, _span(meta)

    def percent_unit(self, meta, children):
        return "%", _span(meta)

    # -- helpers
    def _name(self, token: Token) -> Name:
        return Name(str(token.value), _span(token))

    def _number(self, token: Token, unit: tuple[str, Span] | None, span: Span | None = None) -> Num:
        value = float(token.value)
        span = span or _span(token)
        if math.isinf(value):
            self.diagnostics.append(
                codes.diagnostic(
                    "PD007",
                    f"`{token.value}` is too large to be a number",
                    self.source,
                    _span(token),
                    label="beyond the largest float, about 1.8e308",
                    help="check the exponent: was a smaller power of ten meant?",
                )
            )
        if unit is None:
            return Num(Quantity(value), span)
        text, unit_span = unit
        try:
            return Num(Quantity(value, lookup_unit(text)), span)
        except UnknownUnit as error:
            suggestion = (
                f"did you mean `{error.suggestions[0]}`?"
                if error.suggestions
                else ("units are ns us ms s, B KB MB GB KiB MiB GiB, GB/s TB/s, %, rps, per token")
            )
            self.diagnostics.append(
                codes.diagnostic(
                    "PD305",
                    f"unknown unit `{text}`",
                    self.source,
                    unit_span,
                    label="not a unit perfdsl knows",
                    help=suggestion,
                )
            )
            return Num(Quantity(value), span)
