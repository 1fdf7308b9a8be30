"""The grammar's post-lexer: which newlines end a statement.

Its own module because both the parser (`perfdsl.syntax`) and the tables built for it
(`perfdsl.parser_tables`, whose per-state lexers must accept what it may drop) need it.
"""

from __future__ import annotations

from collections.abc import Iterator

from perfdsl.table_parse import Token

POSTLEX_ACCEPTS = ("_NL",)
"""The terminals the post-lexer takes in every parser state (a newline it may drop)."""


class StatementBreaks:
    """Post-lexer: newlines end statements only where a statement can end.

    Inside (), [] a newline is layout; right after `{` it is redundant; several
    in a row are one. Tokens are passed on at once, never held back, because
    the contextual lexer chooses the next token's terminals from the parser
    state that the previous token produced.
    """

    always_accept = POSTLEX_ACCEPTS

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
