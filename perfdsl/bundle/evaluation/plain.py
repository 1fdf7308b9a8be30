"""evaluation.json's records to plain JSON values and back, by their attrs fields and type hints.

The evaluation is some forty records; writing a `to_json`/`from_json` pair by
hand for each would be a second copy of every field list, free to drift from
the first. Instead both directions walk the fields: `to_plain` writes every
field (floats to 12 significant digits, so that a last-bit difference in a
platform's `log` never changes the file; non-finite floats as null) and each
`passed` property, the derived verdict a reader of the file wants without
recomputing it; `from_plain` builds the record back from its resolved type
hints and ignores such derived keys. A field marked `NOT_WRITTEN` (too large
for the file: bootstrap replicates, the pairs' arrays) is neither written nor
read: it reads back as its default, None.

A float field the file holds as null reads back as NaN (the writer cannot say
whether it was NaN or infinite; both are "no finite number"); the one NaN
object is used so that two records read from the same bytes compare equal.
"""

from __future__ import annotations

import functools
import json
import math
import sys
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import attrs

from perfdsl.bundle import versions

DIGITS = 12
WRITTEN = "written"
NOT_WRITTEN = {WRITTEN: False}
"""attrs field metadata of a field the file does not hold."""

T = TypeVar("T")


def to_plain(item: Any) -> Any:
    """A record as JSON-ready values: records as dicts, floats rounded, no NaN."""
    if attrs.has(type(item)):
        out = {f.name: to_plain(getattr(item, f.name)) for f in _written(type(item))}
        if isinstance(getattr(type(item), "passed", None), property):
            out["passed"] = bool(item.passed)
        return out
    if isinstance(item, dict):
        return {str(k): to_plain(v) for k, v in item.items()}
    if isinstance(item, list | tuple):
        return [to_plain(v) for v in item]
    if isinstance(item, bool) or item is None or isinstance(item, str | int):
        return item
    if isinstance(item, float):
        return float(f"{item:.{DIGITS}g}") if math.isfinite(item) else None
    if hasattr(item, "item"):  # a numpy scalar
        return to_plain(item.item())
    raise TypeError(f"cannot write a {type(item).__name__} into evaluation.json")


def from_plain(kind: type[T], data: Any) -> T:
    """The record of type `kind` that `to_plain` wrote as `data`.

    Raises ValueError naming the first key that does not fit its type; the
    caller names the file.
    """
    return _structure(kind, data, kind.__name__)


def _structure(hint: Any, data: Any, where: str) -> Any:
    if hint is Any:
        return data
    if attrs.has(hint):
        return _record(hint, data, where)
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        if data is None and type(None) in args:
            return None
        options = [a for a in args if a is not type(None)]
        if len(options) != 1:
            raise ValueError(f"{where}: no single type to read a union of {options} as")
        return _structure(options[0], data, where)
    if origin is Literal:
        if data not in args:
            raise ValueError(f"{where}: {data!r} is not one of {args}")
        return data
    if origin is tuple:
        items = _expect(data, list, where)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(_structure(args[0], v, f"{where}[{i}]") for i, v in enumerate(items))
        if len(items) != len(args):
            raise ValueError(f"{where}: {len(items)} items where {len(args)} belong")
        return tuple(
            _structure(a, v, f"{where}[{i}]") for i, (a, v) in enumerate(zip(args, items, strict=True))
        )
    if origin is dict:
        key, value = args
        mapping = _expect(data, dict, where)
        return {_structure(key, k, where): _structure(value, v, f"{where}.{k}") for k, v in mapping.items()}
    if hint is float:
        if data is None:
            return math.nan
        # An int is a float's value too (PEP 484); kept as it was written so it writes back the same.
        if isinstance(data, bool) or not isinstance(data, int | float):
            raise ValueError(f"{where}: {data!r} is not a number")
        return data
    if hint in (bool, int, str):
        if type(data) is not hint:
            raise ValueError(f"{where}: {data!r} is not a {hint.__name__}")
        return data
    raise TypeError(f"{where}: cannot read a {hint!r} from evaluation.json")


def _record(kind: type, data: Any, where: str) -> Any:
    mapping = _expect(data, dict, where)
    hints = _hints(kind)
    values = {}
    for f in _written(kind):
        if f.name in mapping:
            values[f.name] = _structure(hints[f.name], mapping[f.name], f"{where}.{f.name}")
        elif f.default is attrs.NOTHING:
            raise ValueError(f"{where}: no `{f.name}`")
    return kind(**values)


def _expect(data: Any, kind: type, where: str) -> Any:
    if not isinstance(data, kind):
        raise ValueError(f"{where}: {data!r} is not a {'list' if kind is list else 'mapping'}")
    return data


def _written(kind: type) -> tuple[attrs.Attribute, ...]:
    return tuple(f for f in attrs.fields(kind) if f.metadata.get(WRITTEN, True))


@functools.cache
def _hints(kind: type) -> Mapping[str, Any]:
    """The written fields' type hints, resolved in the record's module.

    Not `typing.get_type_hints`: a field the file does not hold may name a type
    only imported for type checking (numpy's array), which need not resolve.
    """
    namespace = vars(sys.modules[kind.__module__])
    return {f.name: eval(f.type, namespace) if isinstance(f.type, str) else f.type for f in _written(kind)}


def read_versioned(kind: type[T], data: Mapping[str, Any], path: Path, version: str) -> T:
    """A parsed evaluation.json of `version` as its record; another version refused in one line."""
    versions.check_version(data, path, (version,))
    return read_plain(kind, data, path)


def read_evaluation_file(kind: type[T], bundle: Path, version: str) -> T:
    """A bundle's evaluation.json as its record (OSError, ValueError or BundleFormatError)."""
    path = Path(bundle) / versions.EVALUATION_FILE
    return read_versioned(kind, json.loads(path.read_text(encoding="utf-8")), path, version)


def read_plain(kind: type[T], data: Mapping[str, Any], path: Path) -> T:
    """`from_plain`, with a file that does not fit its records refused in one line naming it."""
    try:
        return from_plain(kind, data)
    except (ValueError, TypeError) as error:
        raise versions.BundleFormatError(
            f"{path}: not a readable {kind.__name__} ({error}): evaluate the bundle again"
        ) from None
