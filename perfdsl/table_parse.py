"""Lark's parse, for text that parses: its LALR tables and contextual lexer, without the bookkeeping.

Lark's LALR parser reads tokens from its contextual lexer, which matches, at each
position, the terminals the parser's current state accepts (one compiled
alternation per state, with the keywords a NAME may turn out to be) and keeps
each token's line and column; the parser steps through one method call per
token, ready to build an error from any state. On a 20,000-line study that
bookkeeping was most of the parse. `TableParser` drives the same tables, the
same per-state alternations and keywords (a table where Lark's callback matches
plain strings) and the same post-lexer in one loop, so a text that parses gives
the same reductions of the same tokens at the same offsets, and leaves out what
only an error needs (a token's line and column, the parser's state for a
message). Anything else it stops on (`Unparsed`:
a character no terminal matches, a token the state does not accept), and
`perfdsl.syntax` parses the text again with Lark's own parser, so that every
error is Lark's, with its positions, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain
from typing import Any

from lark import Token
from lark.lexer import PatternStr, UnlessCallback
from lark.parser_frontends import PostLexConnector
from lark.parsers.lalr_analysis import Shift


class Unparsed(Exception):
    """The text does not parse here: Lark's own parser is asked, for its error."""


Reduction = Callable[[list[Any]], Any]


def first_symbol(symbols: list[Any]) -> Any:
    """The reduction of a rule that passes its one symbol through; the loop applies it in place."""
    return symbols[0]


class TableParser:
    """One loop over Lark's LALR tables, reading tokens from its per-state lexers."""

    def __init__(self, lark: Any) -> None:
        frontend = lark.parser
        connector = frontend.lexer
        table = frontend.parser.parser.parse_table
        (start,) = frontend.parser_conf.start
        self._start_state = table.start_states[start]
        self._end_state = table.end_states[start]
        self._postlexer = connector.postlexer
        contextual = connector.lexer
        self._by_state = {
            state: (tuple(lexer.scanner._mres), lexer.ignore_types, *_keywords_apart(lexer.callback))
            for state, lexer in contextual.lexers.items()
        }
        rules = sorted(
            {
                arg
                for actions in table.states.values()
                for action, arg in actions.values()
                if action is not Shift
            },
            key=str,
        )
        self.rules = tuple(rules)
        """The table's own rule objects, each reduction's key."""
        number = {rule: index for index, rule in enumerate(rules)}
        self._actions = {
            state: {
                symbol: (True, arg) if action is Shift else (False, number[arg])
                for symbol, (action, arg) in actions.items()
            }
            for state, actions in table.states.items()
        }
        """Each state's actions: (True, next state) to shift, (False, rule number) to reduce;
        Lark's, with the rules numbered, so that a reduction finds its rule by index."""

    @staticmethod
    def repeats(lark: Any) -> bool:
        """Can this loop stand for `lark`'s parse? Only for LALR with a contextual lexer behind a
        post-lexer, where no ignored terminal has a callback and no user callback is set."""
        frontend = lark.parser
        connector = getattr(frontend, "lexer", None)
        if not isinstance(connector, PostLexConnector) or not hasattr(connector.lexer, "lexers"):
            return False
        for lexer in connector.lexer.lexers.values():
            lexer.scanner  # noqa: B018 (builds the callbacks it is asked about)
            if lexer.ignore_types & set(lexer.callback) or lexer.user_callbacks:
                return False
        return len(frontend.parser_conf.start) == 1

    def parse(self, text: str, reductions: dict[Any, Reduction]) -> Any:
        """The value the start rule's reduction returns, or `Unparsed`."""
        actions, end_state = self._actions, self._end_state
        state_stack = [self._start_state]
        value_stack: list[Any] = []
        shapes = [
            (
                reductions[rule],
                len(rule.expansion),
                rule.origin.name,
                reductions[rule] is first_symbol and len(rule.expansion) == 1,
            )
            for rule in self.rules
        ]
        end = _token("$END", "", len(text), len(text))
        for token in chain(self._postlexer.process(self._tokens(text, state_stack)), (end,)):
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

    def _tokens(self, text: str, state_stack: list[int]) -> Iterator[Token]:
        """Lark's `ContextualLexer.lex`: the next token among those the parser's state accepts."""
        pos, end = 0, len(text)
        by_state = self._by_state
        while pos < end:
            patterns, ignored, keywords, callbacks = by_state[state_stack[-1]]
            for pattern in patterns:
                match = pattern.match(text, pos, end)
                if match:
                    break
            else:
                raise Unparsed(pos)
            kind, stop = match.lastgroup, match.end()
            if kind not in ignored:
                value = match.group()
                callback = callbacks.get(kind)  # by the matched terminal, as Lark looks it up
                if kind in keywords:
                    kind = keywords[kind].get(value, kind)
                token = _token(kind, value, pos, stop)
                yield callback(token) if callback is not None else token
            pos = stop


def _keywords_apart(callbacks: dict[str, Any]) -> tuple[dict[str, dict[str, str]], dict[str, Any]]:
    """A state's lexer callbacks, with each keyword check as a table: {terminal: {text: keyword}}.

    Lark retypes a NAME that spells a keyword (`load`) by matching it against the
    keywords' patterns (`UnlessCallback`); where every such pattern is a plain string,
    a dictionary of them gives the same type without a regular expression per name.
    The rest of the callbacks are kept as they are.
    """
    keywords: dict[str, dict[str, str]] = {}
    rest: dict[str, Any] = {}
    for kind, callback in callbacks.items():
        terminals = getattr(getattr(callback, "scanner", None), "terminals", None)
        if (
            isinstance(callback, UnlessCallback)
            and terminals is not None
            and all(isinstance(t.pattern, PatternStr) and not t.pattern.flags for t in terminals)
        ):
            keywords[kind] = {t.pattern.value: t.name for t in terminals}
        else:
            rest[kind] = callback
    return keywords, rest


_new_str = str.__new__


def _token(kind: str, value: str, start: int, end: int) -> Token:
    """`Token(kind, value, start, None, None, None, None, end)`, its slots set directly: Token's
    constructor, which sorts out keyword and legacy arguments, cost 0.6 of a microsecond a
    token more, a sixth of this loop. Line and column are left None, as said above."""
    token = _new_str(Token, value)
    token.type, token.value, token.start_pos, token.end_pos = kind, value, start, end
    token.line = token.column = token.end_line = token.end_column = None
    return token
