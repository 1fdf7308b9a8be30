"""The parser's tables, built from the grammar once and kept in the user's own cache directory.

Building Lark's LALR tables from `grammar/perf.lark` costs every start of
`perfdsl check` several times what loading them built does. They are kept in
`$XDG_CACHE_HOME/perfdsl` (by default `~/.cache/perfdsl`), a directory of the
user's: Lark's own `cache=True` keeps them in the shared temporary directory,
where a file that another account left under the expected name is unpickled.

A table is used only for the grammar it was built from. Its file is named by,
and begins with, the SHA-256 of the grammar's text, Lark's version, the
interpreter's and the parser's options; a file whose first line is another key
(another grammar's table, left behind or planted) is never read further: the
tables are built again and replace it. A table is written beside its path and
renamed into place, so a concurrent start reads a whole table or none. Where
no cache directory can be written (a read-only home), every start builds.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Mapping
from pathlib import Path

import lark
from lark import Lark


def cache_directory() -> Path | None:
    """Where the tables are kept; None where the user has no home directory to find."""
    configured = os.environ.get("XDG_CACHE_HOME")
    if configured:
        return Path(configured) / "perfdsl"
    try:
        return Path.home() / ".cache" / "perfdsl"
    except RuntimeError:
        return None


def table_key(grammar: str, options: Mapping[str, object], postlex: object) -> str:
    """What the tables depend on, hashed: the grammar, Lark's version, the interpreter, the options.

    The post-lexer is saved with the tables by its class's name, so the name is
    part of the key too.
    """
    postlex_class = f"{type(postlex).__module__}.{type(postlex).__qualname__}"
    text = "\0".join(
        (
            grammar,
            lark.__version__,
            sys.implementation.cache_tag,
            repr(sorted(options.items())),
            postlex_class,
        )
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def table_path(directory: Path, key: str) -> Path:
    return directory / f"parser-{key[:32]}.lark-tables"


def load_or_build(
    grammar: str, options: Mapping[str, object], postlex: object, directory: Path | None
) -> Lark:
    """The LALR parser for `grammar`: its kept tables when built from it, else built (and kept)."""
    key = table_key(grammar, options, postlex)
    path = table_path(directory, key) if directory is not None else None
    if path is not None:
        kept = _read(path, key)
        if kept is not None:
            return kept
    parser = Lark(grammar, postlex=postlex, **options)
    if path is not None:
        _write(parser, path, key)
    return parser


def _read(path: Path, key: str) -> Lark | None:
    """The tables at `path` if the file begins with `key`; None when absent, unreadable or another key's."""
    try:
        with path.open("rb") as handle:
            if handle.readline() != key.encode("ascii") + b"\n":
                return None
            return Lark.load(handle)
    except (OSError, EOFError, pickle.UnpicklingError):
        return None


def _write(parser: Lark, path: Path, key: str) -> None:
    """Keep the tables for the next start; a directory that cannot be written keeps nothing."""
    from perfdsl.atomic import replacing

    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with replacing(path) as handle:
            handle.write(key.encode("ascii") + b"\n")
            # The post-lexer is saved with the tables (pickled by its class's name,
            # it holds no state), so that `Lark.load` restores a whole parser.
            parser.save(handle)
    except OSError:
        return
