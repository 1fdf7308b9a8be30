"""Diagnostics as values, and their three renderings: full, short and JSON.

The full form copies rustc: a header with the code, the file, line and column,
the source line with a caret under the smallest span that shows the problem, a
label, and at most one help line. The short form is one line for CI and
editors. The JSON form carries the same data for tools.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

import attrs

from perfdsl.source import Source, Span

ERROR = "error"
WARNING = "warning"


@attrs.frozen
class Diagnostic:
    """One finding about a study: a code, a message and where it points."""

    code: str
    severity: str
    message: str
    source: Source = attrs.field(eq=False, repr=False)
    span: Span
    label: str = ""
    help: str = ""

    @property
    def is_error(self) -> bool:
        return self.severity == ERROR

    def sort_key(self) -> tuple[str, int, str]:
        return (self.source.path, self.span.start, self.code)


def suggest(word: str, options: Iterable[str], prefix: str = "") -> str:
    """`did you mean `a` or `b`?` for up to four close matches (as Elm does), or "";
    each match shown after `prefix` (`pkg.` for a submodule's siblings)."""
    import difflib  # here, as json below: a study that checks cleanly needs neither

    matches = difflib.get_close_matches(word, list(options), n=4, cutoff=0.6)
    return "did you mean " + " or ".join(f"`{prefix}{m}`" for m in matches) + "?" if matches else ""


def count_errors(diagnostics: Iterable[Diagnostic]) -> int:
    """How many diagnostics are errors (warnings do not fail a check)."""
    return sum(1 for d in diagnostics if d.is_error)


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _picture(match: re.Match[str]) -> str:
    code = ord(match.group())
    return chr(0x2400 + code) if code < 0x20 else "\u2421" if code == 0x7F else "\ufffd"


def visible(text: str) -> str:
    """The text with each control character but tab and newline drawn as one visible symbol
    (ESC as `␛`, NUL as `␀`), so that a study's bytes cannot drive the terminal or CI log
    that shows them (an ESC [31m in a study coloured the log), and a caret under the line
    keeps its column: one character stays one."""
    return _CONTROL.sub(_picture, text)


def _paint(text: str, style: str, color: bool) -> str:
    codes = {"error": "1;31", "warning": "1;33", "bold": "1", "blue": "1;34"}
    return f"\x1b[{codes[style]}m{text}\x1b[0m" if color else text


_LONG_LINE = 160
"""Characters of a source line shown whole; a longer one is shown around its span."""
_CONTEXT = 60
"""Characters kept each side of the span on a long line (a 200,000-character line was echoed
whole, with as many spaces before its caret: 400 KB for one error)."""


def _excerpt(line: str, first: int, count: int) -> tuple[str, int, int]:
    """The line as shown, the columns before its caret and the caret's width, for a span of
    `count` characters from index `first`. Columns are the terminal's: a wide character (CJK, an
    emoji) takes two, a combining mark none, so the caret stays under its text."""
    if len(line) > _LONG_LINE:
        low = max(0, first - _CONTEXT)
        high = min(len(line), first + min(count, _LONG_LINE) + _CONTEXT)
        prefix, suffix = ("…" if low > 0 else ""), ("…" if high < len(line) else "")
        count = min(count, high - first)
        line, first = prefix + line[low:high] + suffix, first - low + len(prefix)
    return line, _columns(line[:first]), max(1, _columns(line[first : first + count]))


def _columns(text: str) -> int:
    import unicodedata  # only when a diagnostic is shown

    def width(c: str) -> int:
        if unicodedata.combining(c):
            return 0
        # A noncharacter (U+FFFE) is "F" to the table but one replacement glyph to a terminal.
        wide = unicodedata.east_asian_width(c) in "WF" and unicodedata.category(c) != "Cn"
        return 2 if wide else 1

    return sum(map(width, text))


def render_full(diagnostic: Diagnostic, color: bool = False) -> str:
    """The rustc-style rendering, with the source line and a caret; the study's text
    drawn `visible`."""
    source, span = diagnostic.source, diagnostic.span
    start = source.position(span.start)
    whole = visible(source.line_text(start.line).expandtabs(1))
    end = source.position(span.end)
    count = (end.column - start.column) if end.line == start.line else len(whole) - start.column + 1
    line_text, pad, width = _excerpt(whole, start.column - 1, max(1, count))
    gutter = " " * len(str(start.line))
    head = _paint(f"{diagnostic.severity}[{diagnostic.code}]", diagnostic.severity, color)
    lines = [
        f"{head}: {_paint(visible(diagnostic.message), 'bold', color)}",
        f"{gutter}{_paint('-->', 'blue', color)} {visible(source.path)}:{start.line}:{start.column}",
        f"{gutter} {_paint('|', 'blue', color)}",
        f"{_paint(str(start.line), 'blue', color)} {_paint('|', 'blue', color)} {line_text}",
    ]
    caret = " " * pad + "^" * width
    label = f" {visible(diagnostic.label)}" if diagnostic.label else ""
    lines.append(f"{gutter} {_paint('|', 'blue', color)} {_paint(caret + label, diagnostic.severity, color)}")
    if diagnostic.help:
        lines.append(f"{gutter} {_paint('|', 'blue', color)}")
        lines.append(f"{gutter} {_paint('=', 'blue', color)} help: {visible(diagnostic.help)}")
    return "\n".join(lines) + "\n"


def render_short(diagnostic: Diagnostic) -> str:
    """`path:line:col: error[CODE]: message`, one line, drawn `visible`."""
    position = diagnostic.source.position(diagnostic.span.start)
    return visible(
        f"{diagnostic.source.path}:{position.line}:{position.column}: "
        f"{diagnostic.severity}[{diagnostic.code}]: {diagnostic.message}"
    )


def to_json(diagnostic: Diagnostic) -> dict[str, object]:
    """The same data as the renderings, as a JSON-ready dictionary: 1-based line and column in
    characters, and the offset in characters into the text as read (universal newlines: each
    line end one `\n`), as README.md states it."""
    start = diagnostic.source.position(diagnostic.span.start)
    end = diagnostic.source.position(diagnostic.span.end)
    return {
        "code": diagnostic.code,
        "severity": diagnostic.severity,
        "message": diagnostic.message,
        "file": diagnostic.source.path,
        "span": {
            "start": {"line": start.line, "column": start.column, "offset": diagnostic.span.start},
            "end": {"line": end.line, "column": end.column, "offset": diagnostic.span.end},
        },
        "label": diagnostic.label,
        "help": diagnostic.help,
    }


def render_json(diagnostics: Sequence[Diagnostic]) -> str:
    """A JSON list of every diagnostic, stable key order."""
    import json

    return json.dumps([to_json(d) for d in diagnostics], indent=2, sort_keys=True) + "\n"


def summary_line(path: str, diagnostics: Sequence[Diagnostic]) -> str:
    """`error: 2 errors, 1 warning in studies/x.perf` (empty when there is nothing)."""
    errors = count_errors(diagnostics)
    warnings = len(diagnostics) - errors
    parts = []
    if errors:
        parts.append(f"{errors} error{'s' if errors != 1 else ''}")
    if warnings:
        parts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    if not parts:
        return ""
    severity = ERROR if errors else WARNING
    return f"{severity}: {', '.join(parts)} in {path}"
