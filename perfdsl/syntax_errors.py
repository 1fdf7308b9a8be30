"""Syntax errors in the user's words: Lark's exceptions turned into diagnostics.

Lark names terminals (`RBRACE`, `_NL`); people read "`}`" and "the end of the
statement". A misspelt keyword gets "did you mean", even when the parser only
stops a word or two after it.
"""

from __future__ import annotations

import re

from lark import Token
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from perfdsl import codes
from perfdsl.diagnostics import Diagnostic, suggest
from perfdsl.quantity import known_units
from perfdsl.source import Source, Span

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


def syntax_diagnostic(source: Source, error: UnexpectedInput) -> Diagnostic:
    """Lark's exception as a diagnostic: what was expected, in words, and a help line."""
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
_OPERATORS = {"STAR", "PLUS", "MINUS", "SLASH"}
"""What the parser expects after a complete expression: a unit there ends a formula."""
_UNIT_FACTORS = {"KiB": "1024", "MiB": "1048576", "KB": "1000", "MB": "1000000"}


def _misspelt_keyword(word: str) -> str | None:
    """The keyword `word` is a slip of (`stpe` for `step`, `sv` for `vs`), or None.

    Letters swapped count at any length; other near misses only from four
    letters, so that units (`ms`) and names are not taken for keywords.
    """
    if word in _KEYWORDS.values():
        return None
    import difflib  # here: only a syntax error needs it, not every `perfdsl check`

    for keyword in _KEYWORDS.values():
        if len(word) == len(keyword) and sorted(word) == sorted(keyword):
            return keyword
        # The length bound first: `ratio` compares every pair of positions, and a 200,000-
        # character string where a keyword was expected took 1.4 s to be told it is none.
        matcher = difflib.SequenceMatcher(None, word, keyword)
        if len(word) >= 4 and matcher.real_quick_ratio() >= 0.75 and matcher.ratio() >= 0.75:
            return keyword
    return None


_BLOCK_SECTIONS = ("workload", "operation", "application", "change", "predict", "target", "evidence", "value")
"""The sections whose body is always a `{ ... }` block (a `limit` may have none)."""
_NAMED_SECTIONS = ("operation", "application", "target", "evidence")
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_SECTION_HEADER = re.compile(
    r"\s*(?:(?P<named>" + "|".join(_NAMED_SECTIONS) + r")\s+(?P<name>" + _NAME + r")"
    r"|(?P<bare>" + "|".join(w for w in _BLOCK_SECTIONS if w not in _NAMED_SECTIONS) + r"))"
    r"(?P<rest>(?:\s.*)?)$"
)
"""A section's header at a line's start: `evidence timing` (a name then space or the end, not
`evidence normalize.time`, a rejected hypothesis's statement), or a bare `workload`."""


def _unopened_section(text: str, start: int) -> str | None:
    """The help for a section header written without its `{`, or None.

    `evidence timing   warmup 10; ...` was read as a statement and its help said to
    separate values with `,`. The header is on the error's own line, or, where the
    parser went on reading the body as statements (and the section's `}` as the
    study's), alone on a line above it.
    """
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    here = _header_without_brace(text[line_start : line_end if line_end >= 0 else len(text)], alone=False)
    if here is not None:
        return here
    closed = False  # the `}` meant for the unopened section closed the study: step over one
    for line in reversed(text[:line_start].splitlines()):
        if line.strip() == "}" and not closed:
            closed = True
            continue
        if "{" in line or "}" in line:
            break
        above = _header_without_brace(line, alone=True)
        if above is not None:
            return above
    return None


def _header_without_brace(line: str, alone: bool) -> str | None:
    """The help where `line` starts a block section without `{` (and, if `alone`, holds nothing else)."""
    found = _SECTION_HEADER.match(line.split("#", 1)[0].rstrip())
    if found is None or "{" in line:
        return None
    rest = found.group("rest").strip()
    if rest and (alone or found.group("bare")):
        return None  # `change kernels.x:fused` is an operation's setting, not the `change` section
    header = f"{found.group('named')} {found.group('name')}" if found.group("named") else found.group("bare")
    return (
        f"the `{header}` section's body is a block: open it with `{{` after `{header}` and close it with `}}`"
    )


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
    if token.type == "NAME" and str(token.value) in known_units() and expected & _OPERATORS:
        # `4*(M*N) KiB`: a unit ends a quantity (`16 KiB`), never a formula.
        return (
            f"a unit follows a number only (`16 {token.value}`), not a formula: a byte or launch formula "
            "counts plain bytes or launches, so drop the unit, or write its factor as a number "
            f"(`{_UNIT_FACTORS.get(str(token.value), 'the factor')}*(...)`)"
        )
    opened = _unopened_section(source.text, start)
    if opened is not None:
        return opened
    if "RBRACE" in expected and token.type in ("NAME", "STUDY"):
        return "put each statement on its own line, or separate statements with `;`"
    if expected == {"_NL"} or ("_NL" in expected and token.type in ("NAME", "NUMBER")):
        return "separate values with `,` and statements with a new line or `;`"
    if "PYREF" in expected:
        return "write the implementation as `package.module:attribute`"
    return "see `perfdsl explain PD001` for the shape of each statement"
