"""A Pygments lexer for .perf studies, and HTML highlighting of study excerpts.

Registered under the `pygments.lexers` entry point as `perf`, so `pygmentize -l
perf`, Sphinx and MkDocs highlight studies once perfdsl is installed. The token
rules mirror grammar/perf.lark's terminals; the word lists come from
`perfdsl.editor.words`. It never yields an error token for a bundled study
(a test holds it to that), so highlighting a report's excerpt cannot show red
boxes where the study is fine.
"""

from __future__ import annotations

from typing import ClassVar

from pygments.formatters import HtmlFormatter
from pygments.lexer import RegexLexer, words
from pygments.token import Comment, Keyword, Name, Number, Operator, Punctuation, String, Whitespace

from perfdsl import HOMEPAGE
from perfdsl.editor.words import CONSTANTS, GRAMMAR_WORDS, SECTIONS, SETTINGS

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"


class PerfLexer(RegexLexer):
    """Lexer for perfdsl performance studies (`.perf`)."""

    name = "perfdsl study"
    aliases: ClassVar[list[str]] = ["perf", "perfdsl"]
    filenames: ClassVar[list[str]] = ["*.perf"]
    mimetypes: ClassVar[list[str]] = ["text/x-perfdsl"]
    url = HOMEPAGE

    tokens: ClassVar[dict[str, list]] = {
        "root": [
            (r"[ \t\f\r\n]+", Whitespace),
            (r"#[^\n]*", Comment.Single),
            (r'"([^"\\\n]|\\.)*"', String.Double),
            # An unclosed string runs to the end of its line, as PD002 reports it.
            (r'"[^\n]*', String.Double),
            (r"[KMGT]i?B/s", Name.Builtin),
            (rf"{_IDENT}(\.{_IDENT})*:{_IDENT}", Name.Namespace),
            (r"[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?", Number),
            (r"\.\.", Operator),
            (r"<=|>=|==|<|>|[+\-*/%]", Operator),
            (r"[{}()\[\],;.]", Punctuation),
            (words(SECTIONS, suffix=r"\b"), Keyword.Declaration),
            (words(GRAMMAR_WORDS, suffix=r"\b"), Keyword),
            (words(SETTINGS, suffix=r"\b"), Name.Attribute),
            (words(CONSTANTS, suffix=r"\b"), Name.Constant),
            (_IDENT, Name),
        ]
    }


def highlight_html(excerpt: str, first_line: int = 1) -> str:
    """A study excerpt as highlighted HTML, lines numbered from `first_line`.

    For a report that quotes the lines behind a finding; style it with
    `highlight_css()`. Returns a `<div class="perf-source">` block.
    """
    from pygments import highlight

    formatter = HtmlFormatter(cssclass="perf-source", linenos="inline", linenostart=first_line)
    return highlight(excerpt, PerfLexer(), formatter)


def highlight_css(style: str = "default") -> str:
    """The CSS rules `highlight_html`'s markup needs, scoped to `.perf-source`."""
    return HtmlFormatter(style=style, cssclass="perf-source").get_style_defs(".perf-source")
