"""Lark's parse, for text that parses: its LALR tables and contextual lexer as plain data, in one loop.

Lark's LALR parser reads tokens from its contextual lexer, which matches, at each
position, the terminals the parser's current state accepts (one compiled
alternation per state, with the keywords a NAME may turn out to be) and keeps
each token's line and column; the parser steps through one method call per
token, ready to build an error from any state. On a 20,000-line study that
bookkeeping was most of the parse, and importing Lark and loading its parser
were most of a typical `perfdsl check`. `TableParser` drives the same tables,
the same per-state alternations and keywords (a table where Lark's callback
matches plain strings) and the same post-lexer in one loop, from `ParseTables`:
plain data that `perfdsl.parser_tables` takes from a Lark parser and ships with
the package, so that a text that parses is parsed without importing Lark. It gives
the same reductions of the same tokens at the same offsets, and leaves out what
only an error needs (a token's line and column, the parser's state for a
message). Anything else it stops on (`Unparsed`: a character no terminal
matches, a token the state does not accept), and `perfdsl.syntax` parses the
text again with Lark's own parser, so that every error is Lark's, with its
positions, as before.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, NamedTuple


class Unparsed(Exception):
    """The text does not parse here: Lark's own parser is asked, for its error."""


class Token(str):
    """A terminal as the loop matched it: Lark's `Token` without the line and column.

    A `str`, as Lark's is, so that what the statement builder reads of a token
    (`type`, `value`, `start_pos`, `end_pos`, its text) is the same from either parse.
    """

    __slots__ = ("end_pos", "start_pos", "type", "value")

    type: str
    value: str
    start_pos: int
    end_pos: int


_new_str = str.__new__


def _token(kind: str, value: str, start: int, end: int) -> Token:
    token = _new_str(Token, value)
    token.type, token.value, token.start_pos, token.end_pos = kind, value, start, end
    return token


class RuleShape(NamedTuple):
    """What a reduction needs of one grammar rule, as Lark's tree builder would treat it."""

    name: str
    """The rule's alias where it has one, else its origin: the statement builder's method."""
    origin: str
    """The nonterminal the rule reduces to: the parser's next state is looked up by it."""
    terms: tuple[bool, ...]
    """Per matched symbol: is it a terminal (a token)?"""
    expand1: bool
    """A `?rule` with no alias: one kept child passes through instead of becoming a node."""
    include: tuple[tuple[int, bool, int], ...]
    """The children a tree keeps: (symbol index, splice an inlined rule's children, Nones
    for absent optional parts before it)."""
    trailing: int
    """Nones after the last kept child."""


class StateLexer(NamedTuple):
    """What one parser state's lexer matches: its alternations, in order, as (pattern, flags);
    the terminals it skips; and per terminal, the texts that make it a keyword."""

    patterns: tuple[tuple[str, int], ...]
    ignored: frozenset[str]
    keywords: Mapping[str, Mapping[str, str]]


class ParseTables(NamedTuple):
    """An LALR parser with a contextual lexer, as plain data."""

    start_state: int
    end_state: int
    actions: Mapping[int, Mapping[str, tuple[bool, int]]]
    """Each state's actions: (True, next state) to shift, (False, rule number) to reduce."""
    lexers: tuple[StateLexer, ...]
    lexer_of_state: Mapping[int, int]
    rules: tuple[RuleShape, ...]

    @classmethod
    def from_literal(cls, data: Mapping[str, Any]) -> ParseTables:
        """The tables from the Python literal `to_literal` wrote (shipped in `perfdsl.parser_data`)."""
        return cls(
            data["start_state"],
            data["end_state"],
            data["actions"],
            tuple(StateLexer(tuple(p), frozenset(i), k) for p, i, k in data["lexers"]),
            data["lexer_of_state"],
            tuple(RuleShape(*rule) for rule in data["rules"]),
        )

    def to_literal(self) -> dict[str, Any]:
        """Builtin values only, so that `repr` of it is a Python literal that reads back."""
        return {
            "start_state": self.start_state,
            "end_state": self.end_state,
            "actions": {state: dict(actions) for state, actions in self.actions.items()},
            "lexers": [(list(x.patterns), sorted(x.ignored), dict(x.keywords)) for x in self.lexers],
            "lexer_of_state": dict(self.lexer_of_state),
            "rules": [tuple(rule) for rule in self.rules],
        }


Reduction = Callable[[list[Any]], Any]


def first_symbol(symbols: list[Any]) -> Any:
    """The reduction of a rule that passes its one symbol through; the loop applies it in place."""
    return symbols[0]


PostLexer = Callable[[Iterator[Token]], Iterable[Token]]


class TableParser:
    """One loop over the LALR tables, reading tokens from the per-state lexers."""

    def __init__(self, tables: ParseTables, postlexer: PostLexer) -> None:
        self.tables = tables
        self.rules = tables.rules
        """The table's rules, in the order the reductions handed to `parse` follow."""
        self._postlexer = postlexer
        self._compiled: dict[int, tuple[re.Pattern[str], ...]] = {}
        """Each lexer's alternations, compiled the first time a state that uses it is reached."""

    def parse(self, text: str, reductions: Sequence[Reduction]) -> Any:
        """The value the start rule's reduction returns, or `Unparsed`.

        `reductions[n]` is the reduction of `self.rules[n]`.
        """
        actions, end_state = self.tables.actions, self.tables.end_state
        state_stack = [self.tables.start_state]
        value_stack: list[Any] = []
        shapes = [
            (reduce, len(rule.terms), rule.origin, reduce is first_symbol and len(rule.terms) == 1)
            for rule, reduce in zip(self.rules, reductions, strict=True)
        ]
        end = _token("$END", "", len(text), len(text))
        for token in chain(self._postlexer(self._tokens(text, state_stack)), (end,)):
            kind = token.type
            while True:
                try:
                    shift, arg = actions[state_stack[-1]][kind]
                except KeyError:
                    raise Unparsed(token.start_pos) from None
                if shift:
                    if token is end:
                        raise Unparsed(token.start_pos)
                    state_stack.append(arg)
                    value_stack.append(token)
                    break
                reduce, size, origin, passes = shapes[arg]
                if passes:
                    # `?sum: product`: the value stays where it is, only the state moves.
                    state_stack[-1] = actions[state_stack[-2]][origin][1]
                    if state_stack[-1] == end_state:
                        return value_stack[-1]
                    continue
                symbols = value_stack[-size:] if size else []
                if size:
                    del state_stack[-size:]
                    del value_stack[-size:]
                value_stack.append(reduce(symbols))
                state_stack.append(actions[state_stack[-1]][origin][1])
                # Only the start rule leads to the end state, and only with the text's end ahead.
                if state_stack[-1] == end_state:
                    return value_stack[-1]
        raise Unparsed(len(text))

    def _lexer(self, state: int) -> tuple[tuple[re.Pattern[str], ...], StateLexer]:
        index = self.tables.lexer_of_state[state]
        lexer = self.tables.lexers[index]
        compiled = self._compiled.get(index)
        if compiled is None:
            compiled = self._compiled[index] = tuple(re.compile(p, flags) for p, flags in lexer.patterns)
        return compiled, lexer

    def _tokens(self, text: str, state_stack: list[int]) -> Iterator[Token]:
        """Lark's `ContextualLexer.lex`: the next token among those the parser's state accepts."""
        pos, end = 0, len(text)
        lexers: dict[int, tuple[tuple[re.Pattern[str], ...], StateLexer]] = {}
        while pos < end:
            state = state_stack[-1]
            found = lexers.get(state)
            if found is None:
                found = lexers[state] = self._lexer(state)
            patterns, (_, ignored, keywords) = found
            for pattern in patterns:
                match = pattern.match(text, pos, end)
                if match:
                    break
            else:
                raise Unparsed(pos)
            kind, stop = match.lastgroup, match.end()
            if kind not in ignored:
                value = match.group()
                if kind in keywords:
                    kind = keywords[kind].get(value, kind)
                yield _token(kind, value, pos, stop)
            pos = stop
