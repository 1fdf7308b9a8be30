"""Text to statements: the Lark parser, building statements as it reduces.

The grammar (grammar/perf.lark) fixes the shape of each construct; this module
parses with LALR, builds plain statement records (`Section`, `Setting`, ...)
with spans at each of the parser's reductions, and turns Lark's exceptions into diagnostics
(in the user's words: `perfdsl.syntax_errors`).
`perfdsl.lower` then gives the statements their meaning as a typed `Study`.
Nothing after this module sees a Lark object.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import cache, cached_property
from typing import Any, Union

import attrs

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
from perfdsl.parser_tables import (
    PARSER_OPTIONS,
    grammar_text,
    load_parser,
    parse_tables,
    rule_shape,
    shipped_parse_tables,
)
from perfdsl.quantity import Quantity, UnknownUnit, lookup_unit
from perfdsl.source import Source, Span
from perfdsl.statement_breaks import StatementBreaks
from perfdsl.table_parse import Reduction, RuleShape, TableParser, Token, Unparsed, first_symbol

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


class _Parser:
    """The one-loop parse (`perfdsl.table_parse`) where the text parses, Lark's own for its error.

    Both call the statement builder's reductions, one per rule, with the rule's
    matched symbols, so no tree is made: Lark's own callbacks build a `Tree` per
    reduction, each with its positions worked out from its children's
    (`propagate_positions`), for a walk to turn into statements afterwards; on a
    20,000-line study that took longer than the LALR parse itself. The loop runs on
    the shipped plain tables, so that a text that parses never imports Lark; Lark's
    parser is loaded for a text that does not, so that its error is Lark's, lines
    and columns included. Tables that are not current for the grammar are made
    from a parser built from it (slower, and tests/test_parser_tables.py fails).
    """

    def __init__(self) -> None:
        tables = shipped_parse_tables(grammar_text(), PARSER_OPTIONS)
        if tables is None:
            tables = parse_tables(self.lark)
        breaks = StatementBreaks()
        self.fast = TableParser(tables, breaks.process) if tables is not None else None

    @cached_property
    def lark(self) -> Any:
        """Lark's parser: for the errors, and where no plain tables can stand for it."""
        return load_parser(grammar_text(), PARSER_OPTIONS, StatementBreaks())

    def parse(self, text: str, source: Source) -> tuple[Section, _StatementBuilder]:
        """The study's section and the builder that made it (with its diagnostics), or
        `SyntaxFailure` holding Lark's `UnexpectedInput` for the first error."""
        if self.fast is not None:
            builder = _StatementBuilder(source)
            try:
                return self.fast.parse(text, builder.reductions(self.fast.rules)), builder
            except Unparsed:
                pass
        from lark.exceptions import UnexpectedInput

        builder = _StatementBuilder(source)
        table_parser = self.lark.parser.parser.parser
        own = table_parser.callbacks
        table_parser.callbacks = builder.lark_callbacks(self.lark.rules)
        try:
            return self.lark.parse(text), builder
        except UnexpectedInput as error:
            raise SyntaxFailure(error) from None
        finally:
            table_parser.callbacks = own


class SyntaxFailure(Exception):
    """Lark's error for a text that does not parse (Lark's exceptions are imported only then)."""

    def __init__(self, error: Any) -> None:
        super().__init__(error)
        self.error = error


@cache
def _parser() -> _Parser:
    return _Parser()


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

    The collector is paused while Lark parses: the statements it builds are many
    small objects that stay alive until the end, and rescanning them made parse
    time per line grow 1.8x from 1,000 to 10,000 lines, against 1.07x paused.
    Nothing it builds forms a reference cycle.
    """
    diagnostics: list[Diagnostic] = []
    # A byte-order mark is how some editors start a UTF-8 file; it is a space to
    # the parser, so that every offset still matches the text as written.
    text = " " + source.text[1:] if source.text.startswith("\ufeff") else source.text
    while True:
        try:
            with collector_paused():
                section, builder = _parser().parse(text, source)
        except SyntaxFailure as failure:
            from perfdsl.syntax_errors import syntax_diagnostic

            diagnostic = syntax_diagnostic(source, failure.error)
            diagnostics.append(diagnostic)
            retry = _blank_line(text, diagnostic.span.start)
            ends_pass = diagnostic.code in ("PD003", "PD006") or len(diagnostics) >= _MAX_SYNTAX_ERRORS
            if retry is None or ends_pass:
                return None, diagnostics
            text = retry
            continue
        diagnostics.extend(builder.diagnostics)
        return (None if diagnostics else section), diagnostics


# ---------------------------------------------------------------- the statements, built as the parser reduces


def _span(token: Token) -> Span:
    return Span(token.start_pos, token.end_pos)


def _unescape(literal: str) -> str:
    body = literal[1:-1]
    if "\\" not in body:
        return body  # most strings escape nothing: no walk over their characters
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


class _Inlined:
    """What an inlined rule (`_values`, Lark's `__` helpers) hands its parent: its children."""

    __slots__ = ("children",)

    def __init__(self, children: list[Any]) -> None:
        self.children = children


def _between_tokens(symbols: list[Any]) -> tuple[int, int]:
    """The reach of a rule that starts and ends with a terminal: from its first token to its last."""
    return symbols[0].start_pos, symbols[-1].end_pos


def _keep_symbols(symbols: list[Any]) -> list[Any]:
    return symbols


def _children_for(rule: RuleShape) -> Reduction:
    """The children a tree of `rule` would have, from its matched symbols (`RuleShape.include`)."""
    include, trailing = rule.include, rule.trailing
    if include == tuple((index, False, 0) for index in range(len(rule.terms))) and not trailing:
        # Most rules keep every symbol, in order: the fresh list the parser hands over.
        return _keep_symbols

    def children_of(symbols: list[Any]) -> list[Any]:
        children: list[Any] = []
        for index, splice, nones in include:
            if nones:
                children += [None] * nones
            if splice and children:
                children += symbols[index].children
            elif splice:
                # Left recursion (`__body_star_0`): take over the list the previous
                # reduction built, as Lark's own child filter does, not copy it
                # (a copy per item made a long body's parse quadratic).
                children = symbols[index].children
            else:
                children.append(symbols[index])
        if trailing:
            children += [None] * trailing
        return children

    return children_of


class _StatementBuilder:
    """One method per grammar rule, called at each reduction with the rule's span and children.

    The children are shaped as Lark shapes a tree's: anonymous tokens left out, an
    inlined rule's children spliced in, None where an optional part is absent, and a
    `?rule` with one child replaced by that child. The span is the one Lark's
    `propagate_positions` gives the node: from the start of its first matched symbol
    to the end of its last, where a symbol that a `?rule` passed through reaches as far
    as the text that rule matched (`(4 * M)` as a factor includes its parentheses).
    Reductions come bottom-up, left to right, so the diagnostics come in text order.
    A matched symbol is a token exactly where it is a `str`: the loop's tokens and
    Lark's both are, and no reduction builds one.
    """

    def __init__(self, source: Source) -> None:
        self.source = source
        self.diagnostics: list[Diagnostic] = []
        self._extent: dict[int, tuple[int, int]] = {}
        """Each built value's reach in the text, by id: every value stays alive until the parse ends."""

    def reductions(self, rules: tuple[RuleShape, ...]) -> list[Reduction]:
        """The reduction of each of the plain tables' rules, in their order."""
        return [self._reduction(rule) for rule in rules]

    def lark_callbacks(self, rules: list[Any]) -> dict[Any, Reduction]:
        """The reduction of each of Lark's rules, as its parser's callbacks."""
        return {rule: self._reduction(rule_shape(rule)) for rule in rules}

    def _reduction(self, rule: RuleShape) -> Reduction:
        name = rule.name
        passes_through = rule.expand1
        if passes_through and len(rule.terms) == 1 and rule.include == ((0, False, 0),) and not rule.trailing:
            # `?sum: product`: the value, and the text it reaches, are its one symbol's.
            return first_symbol
        inlined = name.startswith("_")
        method = None if inlined else getattr(self, name, None)
        if method is None and not inlined and not passes_through:
            raise LookupError(f"the grammar's rule `{name}` has no statement builder")
        extent = self._extent
        reach_of = self._reach_for(rule.terms)
        children_of = _children_for(rule)
        # One closure per kind of rule, so that a reduction runs no test its rule settles
        # once: a 20,000-line study makes half a million of them.
        if inlined and not passes_through:

            def reduce_inlined(symbols: list[Any]) -> Any:
                reach = reach_of(symbols)
                value = _Inlined(children_of(symbols))
                if reach is not None:
                    extent[id(value)] = reach
                return value

            return reduce_inlined
        if not passes_through:

            def reduce_built(symbols: list[Any]) -> Any:
                reach = reach_of(symbols)
                value = method(Span(*reach) if reach is not None else Span(0, 0), children_of(symbols))
                if reach is not None and not isinstance(value, str):
                    extent[id(value)] = reach
                return value

            return reduce_built

        def reduce_passing(symbols: list[Any]) -> Any:
            """A `?rule` of several symbols: its one child where one is kept (`"(" expr ")"`)."""
            reach = reach_of(symbols)
            children = children_of(symbols)
            if len(children) == 1:
                value = children[0]
            elif inlined:
                value = _Inlined(children)
            elif method is None:
                raise LookupError(f"the grammar's rule `{name}` has no statement builder")
            else:
                value = method(Span(*reach) if reach is not None else Span(0, 0), children)
            if reach is not None and not isinstance(value, str):
                extent[id(value)] = reach
            return value

        return reduce_passing

    def _reach_for(self, terms: tuple[bool, ...]) -> Callable[[list[Any]], tuple[int, int] | None]:
        """`_reach`, or its shortcut where the rule starts (and ends) with a terminal: that
        symbol is a token, whose position is its own."""
        if not terms or not terms[0]:
            return self._reach
        if terms[-1]:
            return _between_tokens
        end_of = self._end

        def from_token(symbols: list[Any]) -> tuple[int, int] | None:
            end = end_of(symbols)
            return (symbols[0].start_pos, end) if end is not None else None

        return from_token

    def _reach(self, symbols: list[Any]) -> tuple[int, int] | None:
        """From the start of the first positioned symbol to the end of the last."""
        extent = self._extent
        for symbol in symbols:
            if isinstance(symbol, str):
                start = symbol.start_pos
                break
            found = extent.get(id(symbol))
            if found is not None:
                start = found[0]
                break
        else:
            return None
        end = self._end(symbols)
        return (start, end) if end is not None else None

    def _end(self, symbols: list[Any]) -> int | None:
        """The end of the last positioned symbol."""
        extent = self._extent
        for symbol in reversed(symbols):
            if isinstance(symbol, str):
                return symbol.end_pos
            found = extent.get(id(symbol))
            if found is not None:
                return found[1]
        return None

    # -- top level
    def start(self, span, children):
        return children[0]

    def study(self, span, children):
        keyword_span = Span(span.start, span.start + len("study"))
        name_token, (items, body_span) = children
        return Section(Name("study", keyword_span), self._name(name_token), None, items, span, body_span)

    def body(self, span, children):
        items = tuple(child for child in children if child is not None)
        return items, span

    def section(self, span, children):
        keyword, name, text, (items, body_span) = children
        return Section(
            self._name(keyword),
            self._name(name) if name is not None else None,
            Text(_unescape(text.value), _span(text)) if text is not None else None,
            items,
            span,
            body_span,
        )

    def labelled(self, span, children):
        keyword, name, text = children
        return Section(
            self._name(keyword),
            self._name(name),
            Text(_unescape(text.value), _span(text)),
            (),
            span,
            None,
        )

    # -- statements
    def setting(self, span, children):
        key, *values = children
        return Setting(self._name(key), tuple(values), span)

    def shapes(self, span, children):
        key, symbols, shape_list = children
        return ShapesStatement(self._name(key), symbols, shape_list, span)

    def condition(self, span, children):
        key, *words, comparator, bound, qualifier = children
        at = versus = None
        if qualifier is not None:
            kind, value = qualifier
            at, versus = (value, None) if kind == "at" else (None, value)
        condition = Condition(tuple(self._name(w) for w in words), str(comparator), bound, at, versus, span)
        return ConditionStatement(self._name(key), condition, span)

    def at(self, span, children):
        return ("at", children[0])

    def versus(self, span, children):
        return ("vs", self._name(children[0]))

    def model(self, span, children):
        key, baseline, change = children
        return ModelStatement(Model(self._name(key), baseline, change, span), span)

    def prediction(self, span, children):
        subject, quantity, statistic, comparator, bound = children
        prediction = Prediction(
            self._name(subject),
            self._name(quantity),
            self._name(statistic),
            str(comparator),
            bound,
            span,
        )
        return PredictionStatement(prediction, span)

    def load(self, span, children):
        arrivals, rates = children
        return LoadStatement(Load(self._name(arrivals), rates, span), span)

    # -- values
    def string(self, span, children):
        return Text(_unescape(children[0].value), span)

    def reference(self, span, children):
        module, _, attr = children[0].value.partition(":")
        return Ref(module, attr, span)

    def imported(self, span, children):
        path, format_name, entry = children
        return Imported(
            Text(_unescape(path.value), _span(path)),
            format_name,
            Text(_unescape(entry.value), _span(entry)),
            span,
        )

    def format_name(self, span, children):
        return Name("-".join(str(token.value) for token in children), span)

    def quantity_ref(self, span, children):
        subject, quantity = children
        return QuantityRef(self._name(subject), self._name(quantity), span)

    def range(self, span, children):
        start, stop, step, unit = children
        unit_value = unit
        return RangeExpr(
            self._number(start, unit_value),
            self._number(stop, unit_value),
            self._number(step, unit_value) if step is not None else None,
            span,
        )

    def list(self, span, children):
        return ListExpr(tuple(child for child in children if child is not None), span)

    def tuple(self, span, children):
        return TupleExpr(tuple(children), span)

    def name(self, span, children):
        return self._name(children[0])

    def add(self, span, children):
        return BinOp("+", children[0], children[1], span)

    def sub(self, span, children):
        return BinOp("-", children[0], children[1], span)

    def mul(self, span, children):
        return BinOp("*", children[0], children[1], span)

    def div(self, span, children):
        return BinOp("/", children[0], children[1], span)

    def neg(self, span, children):
        (value,) = children
        span = span
        if isinstance(value, Num):
            return Num(Quantity(-value.quantity.value, value.quantity.unit), span)
        return BinOp("-", Num(Quantity(0.0), span), value, span)

    def quantity(self, span, children):
        number, unit = children
        return self._number(number, unit, span)

    def word_unit(self, span, children):
        word, per = children
        return (f"{word.value} per {per.value}" if per is not None else word.value), span

    def per_unit(self, span, children):
        return f"per {children[0].value}", span

    def rate_unit(self, span, children):
        return children[0].value, span

    def percent_unit(self, span, children):
        return "%", span

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
