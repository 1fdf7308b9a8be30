"""The parser's LALR tables, built from the grammar ahead of time and shipped in the package.

Building Lark's tables from `grammar/perf.lark` costs every start of `perfdsl
check` about 100 ms, several times what the check of a typical study costs. A
cache written at run time would save that, but perfdsl writes nothing outside
a study's artifact directory and the output the user names, and Lark's own
`cache=True` wrote into the shared temporary directory, where a file another
account left under the expected name is unpickled. So the tables are built
once, by a developer, into `perfdsl/parser_data.py`: Lark's own serialization
of the parser (the `memo_serialize` data and memo that its stand-alone tool
embeds), as Python literals, beside the key they were built for.

Beside Lark's serialization, `PARSE_TABLES` holds the same LALR tables and
contextual lexers as plain data (`perfdsl.table_parse.ParseTables`), which
parse a text that parses without importing Lark at all: Lark's import and load
were two thirds of a typical `check`. Lark's own parser, from `DATA`, is loaded
only for a text with an error, for the error's message.

The key is the SHA-256 of the grammar's text, the parser's options and the
terminals the post-lexer always accepts; Lark's version is kept beside it, since
its serialization is Lark's. Tables whose key differs are never used, and
Lark's serialization is not used by another minor version of Lark: the parser
is built from the grammar in memory instead (correct, only slower), and
tests/test_parser_tables.py fails until the tables are rebuilt:

    .venv/bin/python -m perfdsl.parser_tables

Two builds from one grammar number the parser's states differently (Lark orders
some of its sets by object identity), so a rebuild rewrites the file even when
nothing changed; every build of one key parses alike (the test compares trees
and positions with a parser built from the grammar on every bundled study).
"""

from __future__ import annotations

import hashlib
import types
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from perfdsl.statement_breaks import POSTLEX_ACCEPTS
from perfdsl.table_parse import ParseTables, RuleShape, StateLexer

DATA_MODULE = Path(__file__).with_name("parser_data.py")
PARSER_OPTIONS = {
    "parser": "lalr",
    "lexer": "contextual",
    "propagate_positions": True,
    "maybe_placeholders": True,
}
"""How `perfdsl.syntax` parses: LALR with a contextual lexer, every node keeping its position."""


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


def table_key(grammar: str, options: Mapping[str, object]) -> str:
    """What the tables depend on, hashed: the grammar's text, the parser's options and the
    terminals the post-lexer always accepts (each state's lexer matches them too)."""
    text = "\0".join((grammar, repr(sorted(options.items())), repr(POSTLEX_ACCEPTS)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load_parser(
    grammar: str, options: Mapping[str, Any], postlex: Any, tables: types.ModuleType | None = None
) -> Any:
    """A Lark parser for `grammar`: from the shipped tables when they were built from it, else built.

    `tables` stands in for `perfdsl.parser_data` (tests plant other tables there).
    """
    import lark

    tables = tables or _shipped()
    if tables is not None and current(tables, grammar, options, lark.__version__):
        return lark.Lark._load_from_dict(tables.DATA, tables.MEMO, postlex=postlex)
    return lark.Lark(grammar, postlex=postlex, **options)


def _shipped() -> types.ModuleType | None:
    """`perfdsl.parser_data`, or None in a source tree whose tables were never built."""
    try:
        from perfdsl import parser_data
    except ImportError:
        return None
    return parser_data


def shipped_parse_tables(
    grammar: str, options: Mapping[str, Any], tables: types.ModuleType | None = None
) -> ParseTables | None:
    """The shipped plain tables when they were built from `grammar` and `options`, else None.

    They are Lark's tables copied out, not its serialization: any Lark reads the same
    grammar into the same language, so only the key decides. `tables` stands in for
    `perfdsl.parser_data`.
    """
    tables = tables or _shipped()
    literal = getattr(tables, "PARSE_TABLES", None)
    if literal is None or getattr(tables, "KEY", None) != table_key(grammar, options):
        return None
    return ParseTables.from_literal(literal)


def parse_tables(parser: Any) -> ParseTables | None:
    """The plain tables of a Lark parser, or None where the one loop cannot stand for its parse:
    only LALR with a contextual lexer behind a post-lexer, where no ignored terminal has a
    callback, no user callback is set, and every lexer callback is a keyword check by
    plain strings (Lark retypes a NAME that spells a keyword, `load`, by matching the
    keywords' patterns; a table of their texts gives the same type)."""
    from lark.lexer import PatternStr, UnlessCallback
    from lark.parser_frontends import PostLexConnector
    from lark.parsers.lalr_analysis import Shift

    frontend = parser.parser
    connector = getattr(frontend, "lexer", None)
    if not isinstance(connector, PostLexConnector) or not hasattr(connector.lexer, "lexers"):
        return None
    if len(frontend.parser_conf.start) != 1:
        return None
    lexers: list[StateLexer] = []
    lexer_of_state: dict[int, int] = {}
    for state, lexer in connector.lexer.lexers.items():
        scanner = lexer.scanner  # builds the alternations and the callbacks
        if lexer.ignore_types & set(lexer.callback) or lexer.user_callbacks:
            return None
        keywords: dict[str, dict[str, str]] = {}
        for kind, callback in lexer.callback.items():
            terminals = getattr(getattr(callback, "scanner", None), "terminals", None)
            if not (
                isinstance(callback, UnlessCallback)
                and terminals is not None
                and all(isinstance(t.pattern, PatternStr) and not t.pattern.flags for t in terminals)
            ):
                return None
            keywords[kind] = {t.pattern.value: t.name for t in terminals}
        described = StateLexer(
            tuple((m.pattern, m.flags) for m in scanner._mres), frozenset(lexer.ignore_types), keywords
        )
        if described not in lexers:
            lexers.append(described)
        lexer_of_state[state] = lexers.index(described)
    table = frontend.parser.parser.parse_table
    (start,) = frontend.parser_conf.start
    rules = sorted(
        {arg for actions in table.states.values() for action, arg in actions.values() if action is not Shift},
        key=str,
    )
    number = {rule: index for index, rule in enumerate(rules)}
    actions = {
        state: {
            symbol: (True, arg) if action is Shift else (False, number[arg])
            for symbol, (action, arg) in actions.items()
        }
        for state, actions in table.states.items()
    }
    return ParseTables(
        table.start_states[start],
        table.end_states[start],
        actions,
        tuple(lexers),
        lexer_of_state,
        tuple(rule_shape(rule) for rule in rules),
    )


def rule_shape(rule: Any) -> RuleShape:
    """What a reduction needs of a Lark rule, the children kept as Lark's tree builder keeps them.

    Lark's own plan, read back from the child filter it would build, so that the
    children are exactly a tree's.
    """
    from lark.parse_tree_builder import ChildFilterLALR, maybe_create_child_filter

    options = rule.options
    plan = maybe_create_child_filter(rule.expansion, options.keep_all_tokens, False, options.empty_indices)
    if plan is None:
        include, trailing = [(index, False, 0) for index in range(len(rule.expansion))], 0
    elif plan.func is ChildFilterLALR:
        include, trailing = plan.args
    else:
        include, trailing = [(index, splice, 0) for index, splice in plan.args[0]], 0
    return RuleShape(
        name=str(rule.alias or rule.origin.name),  # Lark's names may be its Tokens: plain text here
        origin=str(rule.origin.name),
        terms=tuple(symbol.is_term for symbol in rule.expansion),
        expand1=bool(options.expand1) and not rule.alias,
        include=tuple(tuple(entry) for entry in include),
        trailing=trailing,
    )


def current(tables: types.ModuleType, grammar: str, options: Mapping[str, object], lark_version: str) -> bool:
    """Were these tables built from this grammar and options, by this Lark's minor version?

    Lark's serialization changes with its features, not its bug-fix releases: the
    major and minor version are what the tables' format follows.
    """
    built_by = str(getattr(tables, "LARK_VERSION", ""))
    return getattr(tables, "KEY", None) == table_key(grammar, options) and _minor(built_by) == _minor(
        lark_version
    )


def _minor(version: str) -> tuple[str, ...]:
    return tuple(version.split(".")[:2])


def tables_source(grammar: str, options: Mapping[str, Any], postlex: Any) -> str:
    """The text of `parser_data.py` for `grammar`: its key, Lark's version, and the tables.

    `postlex` is the post-lexer the parser runs with (its `always_accept` must be
    `POSTLEX_ACCEPTS`, which the key covers).
    """
    import lark
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    if tuple(postlex.always_accept) != POSTLEX_ACCEPTS:
        raise ValueError(f"the post-lexer accepts {postlex.always_accept}, the key says {POSTLEX_ACCEPTS}")
    # Lark's serialization would hold the post-lexer object itself: it is given at load time.
    data, memo = lark.Lark(grammar, **options).memo_serialize([TerminalDef, Rule])
    plain = parse_tables(lark.Lark(grammar, postlex=postlex, **options))
    return (
        '"""The parser\'s tables, generated by `python -m perfdsl.parser_tables` from\n'
        'grammar/perf.lark (see perfdsl/parser_tables.py): do not edit."""\n\n'
        f"KEY = {table_key(grammar, options)!r}\n"
        f"LARK_VERSION = {lark.__version__!r}\n"
        f"DATA = {data!r}\n"
        f"MEMO = {memo!r}\n"
        f"PARSE_TABLES = {plain.to_literal() if plain is not None else None!r}\n"
    )


def main() -> None:
    """Rebuild `parser_data.py` from the grammar the package holds."""
    from perfdsl.atomic import replacing
    from perfdsl.statement_breaks import StatementBreaks

    with replacing(DATA_MODULE) as handle:
        handle.write(tables_source(grammar_text(), PARSER_OPTIONS, StatementBreaks()).encode("utf-8"))
    print(f"wrote {DATA_MODULE}")


if __name__ == "__main__":
    main()
