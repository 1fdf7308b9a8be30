"""Text to statements: the Lark parser, its errors in the user's words, and the tree walk.

The grammar (grammar/perf.lark) fixes the shape of each construct; this module
parses with LALR, turns Lark's tree into plain statement records (`Section`,
`Setting`, ...) with spans, and turns Lark's exceptions into diagnostics.
`perfdsl.lower` then gives the statements their meaning as a typed `Study`.
Nothing after this module sees a Lark object.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Union

import attrs
from lark import Lark, Token, Transformer, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from perfdsl import codes
from perfdsl.collector import collector_paused
from perfdsl.diagnostics import Diagnostic, suggest
from perfdsl.nodes import (
    BinOp,
    Condition,
    Expr,
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
from perfdsl.quantity import Quantity, UnknownUnit, lookup_unit
from perfdsl.source import Source, Span

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


def grammar_text() -> str:
    """The grammar, shipped inside the package or read from the source tree.

    A path beside this file, not `importlib.resources`: the package is always
    installed as files, and the resource readers cost `perfdsl check` ~5 ms.
    """
    package = Path(__file__).resolve().parent
    packaged = package / "grammar" / "perf.lark"
    if not packaged.is_file():
        packaged = package.parent / "grammar" / "perf.lark"
    return packaged.read_text(encoding="utf-8")


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
    return Lark(
        grammar_text(),
        parser="lalr",
        lexer="contextual",
        postlex=_StatementBreaks(),
        propagate_positions=True,
        maybe_placeholders=True,
        cache=True,
    )


# ---------------------------------------------------------------- errors in words

_EXPECTED_WORDS = {
    "NAME": "a name",
    "NUMBER": "a number",
    "STRING": 'a string in "double quotes"',
    "PYREF": "a Python reference like `package.module:attr`",
    "RATE_UNIT": "a bandwidth unit like `GB/s`",
    "COMPARATOR": "a comparison (`<=`, `>=`, `<`, `>`, `==`)",
    "LBRACE": "`{`",
    "RBRACE": "`}`",
    "LPAR": "`(`",
    "RPAR": "`)`",
    "LSQB": "`[`",
    "RSQB": "`]`",
    "COMMA": "`,`",
    "DOT": "`.`",
    "PERCENT": "`%`",
    "PLUS": "`+`",
    "MINUS": "`-`",
    "STAR": "`*`",
    "SLASH": "`/`",
    "_NL": "the end of the statement (a new line or `;`)",
    "STUDY": "`study`",
    "IN": "`in`",
    "AT": "`at`",
    "VS": "`vs`",
    "PER": "`per`",
    "STEP": "`step`",
    "BASELINE": "`baseline`",
    "CHANGE": "`change`",
    "LOAD": "`load`",
    "$END": "the end of the file",
}


def _describe_expected(expected: set[str]) -> str:
    words = sorted({_EXPECTED_WORDS.get(name, f"`{name.lower()}`") for name in expected})
    if len(words) > 6:
        words = [*words[:6], "..."]
    if len(words) == 1:
        return words[0]
    return ", ".join(words[:-1]) + " or " + words[-1]


def _describe_token(token: Token) -> str:
    if token.type == "$END":
        return "end of file"
    if token.type == "_NL":
        return "end of statement"
    if token.type == "STRING":
        return "string"
    return f"`{token.value}`"


def _syntax_diagnostic(source: Source, error: UnexpectedInput) -> Diagnostic:
    entry = codes.CODES
    if isinstance(error, UnexpectedCharacters):
        char = source.text[error.pos_in_stream] if error.pos_in_stream < len(source.text) else ""
        span = Span(error.pos_in_stream, error.pos_in_stream + 1)
        if char == '"':
            line_end = source.text.find("\n", error.pos_in_stream)
            line_end = len(source.text) if line_end < 0 else line_end
            return codes.diagnostic(
                "PD002",
                entry["PD002"].title,
                source,
                Span(error.pos_in_stream, line_end),
                label="this string has no closing quote on its line",
                help='close the string with `"` before the end of the line',
            )
        return codes.diagnostic(
            "PD001",
            f"unexpected character `{char}`",
            source,
            span,
            label=f"expected {_describe_expected(set(error.allowed or ()))}",
            help="remove the character, or quote the text if it belongs in a string",
        )
    assert isinstance(error, UnexpectedToken)
    token = error.token
    expected = set(error.expected or ())
    if token.type == "$END" and expected == {"STUDY"}:
        return codes.diagnostic(
            "PD006",
            "the file holds no study",
            source,
            source.end,
            label="expected `study <name> { ... }`",
            help="write the study as `study <name> { ... }`",
        )
    if token.type == "STUDY" and "NAME" not in expected:
        start = token.start_pos or 0
        return codes.diagnostic(
            "PD006",
            "the file holds more than one study",
            source,
            Span(start, start + len("study")),
            label="a second study starts here",
            help="put each study in a file of its own",
        )
    if token.type == "$END":
        span = source.end
        return codes.diagnostic(
            "PD003",
            entry["PD003"].title,
            source,
            span,
            label=f"expected {_describe_expected(expected)}",
            help="close every `{` with a `}`",
        )
    start = token.start_pos if token.start_pos is not None else 0
    end = token.end_pos if token.end_pos is not None else start + 1
    if token.type == "_NL":
        end = start + 1
    return codes.diagnostic(
        "PD001",
        f"unexpected {_describe_token(token)}",
        source,
        Span(start, max(end, start + 1)),
        label=f"expected {_describe_expected(expected)}",
        help=_syntax_help(source, token, expected),
    )


# The grammar's own keywords, by terminal name: a misspelt one gets "did you mean".
# Section and setting names are plain names, answered when the study is lowered.
_KEYWORDS = {
    "STUDY": "study",
    "IN": "in",
    "AT": "at",
    "VS": "vs",
    "PER": "per",
    "STEP": "step",
    "BASELINE": "baseline",
    "CHANGE": "change",
    "LOAD": "load",
}


_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _misspelt_keyword(word: str) -> str | None:
    """The keyword `word` is a slip of (`stpe` for `step`, `sv` for `vs`), or None.

    Letters swapped count at any length; other near misses only from four
    letters, so that units (`ms`) and names are not taken for keywords.
    """
    if word in _KEYWORDS.values():
        return None
    for keyword in _KEYWORDS.values():
        if sorted(word) == sorted(keyword):
            return keyword
        if len(word) >= 4 and difflib.SequenceMatcher(None, word, keyword).ratio() >= 0.75:
            return keyword
    return None


def _syntax_help(source: Source, token: Token, expected: set[str]) -> str:
    keywords = [_KEYWORDS[name] for name in expected if name in _KEYWORDS]
    misspelt = suggest(str(token.value), keywords) if token.type == "NAME" and keywords else ""
    if misspelt:
        return misspelt
    # A misspelt keyword often reads as a name or a unit, and the parser stops a
    # word or two later (`step` written `stpe`): look back along the line.
    start = token.start_pos or 0
    line_start = source.text.rfind("\n", 0, start) + 1
    for word in _WORD.findall(source.text[line_start : token.end_pos or start]):
        keyword = _misspelt_keyword(word)
        if keyword is not None:
            return f"did you mean `{keyword}` for `{word}`?"
    if "RBRACE" in expected and token.type in ("NAME", "STUDY"):
        return "put each statement on its own line, or separate statements with `;`"
    if expected == {"_NL"} or ("_NL" in expected and token.type in ("NAME", "NUMBER")):
        return "separate values with `,` and statements with a new line or `;`"
    if "PYREF" in expected:
        return "write the implementation as `package.module:attribute`"
    return "see `perfdsl explain PD001` for the shape of each statement"


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
            diagnostic = _syntax_diagnostic(source, error)
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


@v_args(meta=True)
class _TreeToStatements(Transformer):
    """One method per grammar rule; Lark calls them bottom-up with positions."""

    def __init__(self, source: Source) -> None:
        super().__init__()
        self.source = source
        self.diagnostics: list[Diagnostic] = []

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
