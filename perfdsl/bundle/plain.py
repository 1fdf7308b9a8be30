"""A bundle's records to plain JSON values and back, by their attrs fields and type hints.

Every file a run or an evaluation writes (results.json, plan.json,
registration.json, imported.json, evaluation.json) is a tree of attrs records.
A `to_json`/`from_json` pair written by hand for each record would be a second
and a third copy of every field list, free to drift from the first: a field
added to the record and forgotten in the writer is silently lost, one forgotten
in the reader reads back as its default, and nothing fails until a report is
wrong. Instead both directions walk the fields, here, once: a new field is
written and read by declaring it, and a record that reads back unequal to the
one written is a bug of this module, tested once, not of forty records. The
price is that a layout the fields do not give (a key left out, a record's keys
merged into its parent's) is said in a field's metadata rather than in code
beside it; those cases are few and named below, where a hand-written pair would
have hidden them among a hundred methods that look alike.

`to_plain` writes every field and the record's derived keys (below);
`from_plain` builds the record back from its resolved type hints, strictly:
a value that does not fit its hint is refused naming its key (the caller names
the file), and a key the file lacks reads as the field's default, or is refused
where the field has none. Non-finite floats are written as null (`bundle.files`
writes no NaN); a float field's null reads back as the field's `null` (NaN
unless it says otherwise: an unbounded interval's end reads back as inf).
`digits`, where a file asks for it, rounds floats to that many significant
digits (evaluation.json: 12, so that a last-bit difference in a platform's
`log` never changes the file); the run's own files keep every bit (None).

A file's layout is not always its record's shape, and the bytes of bundles
already written must not change, so a field says where it differs, with
`field(...)`'s metadata:

- `written=False` (`NOT_WRITTEN`): not in the file (too large, or kept beside
  it); it reads back as its default, or as the value the reader is given;
- `absent=`: what a key that older files lack reads as, where that is not the
  field's default (`EMPTY`: the empty value of its type; a function: of the
  file's other keys, as a pre-sequential plan's window is its block count);
  a record's `ABSENT` says it once for all its fields (`ABSENT = EMPTY`);
- `when=`: written only when the predicate of the record holds;
- `null=`: what a float field's null reads back as;
- `inside=`: the value is written inside a one-key object of that key;
- `flat=True`: a record's or a mapping's keys are merged into the parent's;
- `leave_out=`: keys the field's records are written without.

A record's derived keys are its properties named in `DERIVED`, and `passed`
wherever it is a property: verdicts and constants a reader of the file wants
without recomputing them; `from_plain` ignores them.

`Plain`, the records' base, gives each record `to_json`, `from_json` and, with a
`FILE`, `read`; a file's root says which `VERSIONS` of its format it reads.
manifest.json and environment.json are not written from records (`bundle.files`
and `runtime.environment` write them as they find them); their records
(`bundle.manifest`, `bundle.environment`) are what the report reads of them.

A float field the file holds as null reads back as the one NaN object, so that
two records read from the same bytes compare equal.
"""

from __future__ import annotations

import functools
import json
import math
import sys
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, ClassVar, Literal, Self, TypeVar

import attrs

from perfdsl.bundle import versions

DIGITS = 12
"""Significant digits of evaluation.json's floats."""
WRITTEN = "written"
NOT_WRITTEN = {WRITTEN: False}
"""attrs field metadata of a field the file does not hold."""
_ABSENT = "absent"
_WHEN = "when"
_NULL = "null"
_INSIDE = "inside"
_FLAT = "flat"
_LEAVE_OUT = "leave_out"
"""The other keys of `field`'s metadata."""


class _Empty:
    def __repr__(self) -> str:
        return "EMPTY"


EMPTY: Any = _Empty()
"""`absent=EMPTY`: a key the file lacks reads as the empty value of its type (None, "", 0, (), {})."""

T = TypeVar("T")
_NAMES = {bool: "a bool", int: "an integer", str: "a string"}


def field(
    *,
    written: bool = True,
    absent: Any = attrs.NOTHING,
    when: Callable[[Any], bool] | None = None,
    null: float = math.nan,
    inside: str | None = None,
    flat: bool = False,
    leave_out: tuple[str, ...] = (),
    **kwargs: Any,
) -> Any:
    """An attrs field with how the file holds it (the module's docstring says what each means)."""
    metadata = {WRITTEN: written, _NULL: null, _FLAT: flat, _LEAVE_OUT: leave_out}
    metadata.update({k: v for k, v in ((_WHEN, when), (_INSIDE, inside)) if v is not None})
    if absent is not attrs.NOTHING:
        metadata[_ABSENT] = absent
    return attrs.field(metadata=metadata, **kwargs)


class Plain:
    """A record of a bundle file: written and read by its fields (`to_plain`, `from_plain`)."""

    __slots__ = ()

    DIGITS: ClassVar[int | None] = None
    """Significant digits of the file's floats, for a file's root (None: every bit)."""
    VERSIONS: ClassVar[tuple[str | None, ...]] = ()
    """The format versions a file's root reads (None: a file from before it carried one)."""
    FILE: ClassVar[str] = ""
    """The file's name in the bundle, for a file's root."""
    REMEDY: ClassVar[str] = "run the study again"
    """What to do about a file that does not read."""
    ABSENT: ClassVar[Any] = attrs.NOTHING
    """What a key the file lacks reads as, for a field with no default and no `absent` of its own
    (EMPTY: a record older versions wrote with fewer keys); NOTHING: it is refused."""

    def to_json(self) -> dict[str, Any]:
        """The record as `bundle.files.dumps` writes it."""
        return to_plain(self, type(self).DIGITS)

    @classmethod
    def from_json(cls, data: Any, path: Path | None = None, **unwritten: Any) -> Self:
        """The record `to_json` wrote as `data`; `unwritten` gives fields the file does not hold.

        With `path` (a file's root), the file's version is checked and a value that
        does not fit is refused in one line naming the file (BundleFormatError);
        without, ValueError names the key.
        """
        if path is None:
            return from_plain(cls, data, **unwritten)
        try:
            if cls.VERSIONS:
                versions.check_version(_expect(data, dict, cls.__name__), path, cls.VERSIONS)
            return from_plain(cls, data, **unwritten)
        except (ValueError, TypeError) as error:
            raise versions.BundleFormatError(
                f"{path}: unreadable: malformed {cls.__name__} ({error}): {cls.REMEDY}"
            ) from None

    @classmethod
    def read(cls, bundle: Path, **unwritten: Any) -> Self:
        """Read and check the bundle's file (OSError, ValueError or BundleFormatError)."""
        path = Path(bundle) / cls.FILE
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")), path, **unwritten)


def to_plain(item: Any, digits: int | None = None) -> Any:
    """A record as JSON-ready values: records as dicts, floats rounded to `digits`, no NaN."""
    if attrs.has(type(item)):
        return _record_plain(item, digits)
    if isinstance(item, Mapping):
        return {str(k): to_plain(v, digits) for k, v in item.items()}
    if isinstance(item, list | tuple):
        return [to_plain(v, digits) for v in item]
    if isinstance(item, bool) or item is None or isinstance(item, str | int):
        return item
    if isinstance(item, float):
        if not math.isfinite(item):
            return None
        return item if digits is None else float(f"{item:.{digits}g}")
    if hasattr(item, "item"):  # a numpy scalar
        return to_plain(item.item(), digits)
    raise TypeError(f"cannot write a {type(item).__name__} into a bundle file")


def _record_plain(item: Any, digits: int | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for f in _written(type(item)):
        when = f.metadata.get(_WHEN)
        if when is not None and not when(item):
            continue
        plain = to_plain(getattr(item, f.name), digits)
        if f.metadata.get(_LEAVE_OUT) and isinstance(plain, list):
            dropped = f.metadata[_LEAVE_OUT]
            plain = [{k: v for k, v in p.items() if k not in dropped} for p in plain]
        if f.metadata.get(_INSIDE) and plain is not None:
            plain = {f.metadata[_INSIDE]: plain}
        if f.metadata.get(_FLAT):
            out.update(plain or {})
        else:
            out[f.name] = plain
    for name in _derived(type(item)):
        out[name] = to_plain(getattr(item, name), digits)
    return out


def from_plain(kind: type[T], data: Any, **unwritten: Any) -> T:
    """The record of type `kind` that `to_plain` wrote as `data`.

    `unwritten` gives values of fields the file does not hold. Raises ValueError
    naming the first key that does not fit its type; the caller names the file.
    """
    return _record(kind, data, kind.__name__, unwritten)


Reader = Callable[[Any, str], Any]
"""Reads one value of a type hint from a file's `data`, `where` naming its key for an error."""


@functools.cache
def _reader(hint: Any, null: float = math.nan) -> Reader:
    """The reader of one type hint, worked out once per hint: a results.json holds tens of
    thousands of values of a few dozen hints, and asking `typing` of each value was most of
    the time a bundle took to open."""
    if hint is Any:
        return lambda data, where: data
    if attrs.has(hint):
        return lambda data, where: _record(hint, data, where, {})
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (types.UnionType, typing.Union):
        return _union_reader(args, null)
    if origin is Literal:
        return functools.partial(_literal, args)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return functools.partial(_many, _reader(args[0]))
        return functools.partial(_fixed, tuple(_reader(a) for a in args))
    if origin in (dict, Mapping):
        return functools.partial(_mapping, _reader(args[0]), _reader(args[1]))
    if hint is float:
        return functools.partial(_float, null)
    if hint in (bool, int, str):
        return functools.partial(_exactly, hint)
    raise TypeError(f"cannot read a {hint!r} from a bundle file")


def _union_reader(args: tuple[Any, ...], null: float) -> Reader:
    options = [a for a in args if a is not type(None)]
    if len(options) != 1:

        def refuse(data: Any, where: str) -> Any:
            if data is None and type(None) in args:
                return None
            raise ValueError(f"{where}: no single type to read a union of {options} as")

        return refuse
    inner = _reader(options[0], null)
    if type(None) not in args:
        return inner
    return lambda data, where: None if data is None else inner(data, where)


_UNNAMED = "?"
"""The `where` of an item read before any item failed: the names of a list's thousand items
are made only when one fails, by reading them again (the readers have no side effects)."""


def _many(item: Reader, data: Any, where: str) -> tuple[Any, ...]:
    items = _expect(data, list, where)
    try:
        return tuple([item(v, _UNNAMED) for v in items])
    except ValueError:
        return tuple([item(v, f"{where}[{i}]") for i, v in enumerate(items)])


def _fixed(readers: tuple[Reader, ...], data: Any, where: str) -> tuple[Any, ...]:
    items = _expect(data, list, where)
    if len(items) != len(readers):
        raise ValueError(f"{where}: {len(items)} items where {len(readers)} belong")
    return tuple(r(v, f"{where}[{i}]") for i, (r, v) in enumerate(zip(readers, items, strict=True)))


def _mapping(key: Reader, value: Reader, data: Any, where: str) -> dict[Any, Any]:
    mapping = _expect(data, dict, where)
    try:
        return {key(k, _UNNAMED): value(v, _UNNAMED) for k, v in mapping.items()}
    except ValueError:
        return {key(k, where): value(v, f"{where}.{k}") for k, v in mapping.items()}


def _literal(allowed: tuple[Any, ...], data: Any, where: str) -> Any:
    if data not in allowed:
        raise ValueError(f"{where}: {data!r} is not one of {allowed}")
    return data


def _float(null: float, data: Any, where: str) -> Any:
    if data is None:
        return null
    # An int is a float's value too (PEP 484); kept as it was written so it writes back the same.
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise ValueError(f"{where}: {data!r} is not a number")
    return data


def _exactly(kind: type, data: Any, where: str) -> Any:
    if type(data) is not kind:
        raise ValueError(f"{where}: {data!r} is not {_NAMES[kind]}")
    return data


def _record(kind: type, data: Any, where: str, unwritten: Mapping[str, Any]) -> Any:
    mapping = _expect(data, dict, where)
    hints = _hints(kind)
    values = dict(unwritten)
    for f in _written(kind):
        here = f"{where}.{f.name}"
        if f.metadata.get(_FLAT):
            value = _flat(hints[f.name], mapping, _taken(kind), here)
        elif f.name in mapping:
            value = _value(f, hints[f.name], mapping[f.name], here)
        elif _ABSENT in f.metadata:
            value = _absent(f.metadata[_ABSENT], hints[f.name], mapping)
        elif f.default is not attrs.NOTHING:
            continue
        elif getattr(kind, "ABSENT", attrs.NOTHING) is not attrs.NOTHING:
            value = _absent(kind.ABSENT, hints[f.name], mapping)
        else:
            raise ValueError(f"{where}: no `{f.name}`")
        values[f.name] = value
    return kind(**values)


def _value(f: attrs.Attribute, hint: Any, data: Any, where: str) -> Any:
    if f.metadata.get(_INSIDE) and data is not None:
        data = _expect(data, dict, where).get(f.metadata[_INSIDE])
    return _reader(hint, f.metadata.get(_NULL, math.nan))(data, where)


def whole(kind: type[T], data: Any) -> T | None:
    """The record of type `kind` in `data` where every one of its keys is there, not null, and fits,
    else None: a part of a file that a reading may lack as a whole (a block edge's load)."""
    names = [f.name for f in _written(kind)]
    if not isinstance(data, Mapping) or any(data.get(name) is None for name in names):
        return None
    try:
        return _record(kind, {name: data[name] for name in names}, kind.__name__, {})
    except ValueError:
        return None


def _flat(hint: Any, mapping: Mapping[str, Any], taken: frozenset[str], where: str) -> Any:
    """A flattened field from its parent's keys: a record where all its keys are there (else
    None), or a mapping of every key no other field takes."""
    kind = _concrete(hint)
    if attrs.has(kind):
        return whole(kind, mapping)
    return _reader(hint)({k: v for k, v in mapping.items() if k not in taken}, where)


def _absent(absent: Any, hint: Any, mapping: Mapping[str, Any]) -> Any:
    if absent is not EMPTY:
        return absent(mapping) if callable(absent) else absent
    kind = typing.get_origin(hint) or hint
    if kind in (types.UnionType, typing.Union):
        return None
    return {tuple: (), dict: {}, Mapping: {}, str: "", bool: False, int: 0, float: 0.0}[kind]


def _concrete(hint: Any) -> Any:
    """The one type of `X | None`."""
    options = [a for a in typing.get_args(hint) if a is not type(None)]
    return options[0] if typing.get_origin(hint) in (types.UnionType, typing.Union) else hint


def _expect(data: Any, kind: type, where: str) -> Any:
    if not isinstance(data, kind):
        raise ValueError(f"{where}: {data!r} is not a {'list' if kind is list else 'mapping'}")
    return data


@functools.cache
def _written(kind: type) -> tuple[attrs.Attribute, ...]:
    return tuple(f for f in attrs.fields(kind) if f.metadata.get(WRITTEN, True))


@functools.cache
def _taken(kind: type) -> frozenset[str]:
    """The keys of a record's file that its fields and derived keys take: a flattened mapping
    holds the others."""
    own = {f.name for f in attrs.fields(kind) if not f.metadata.get(_FLAT)}
    return frozenset(own | set(_derived(kind)))


@functools.cache
def _derived(kind: type) -> tuple[str, ...]:
    """The derived keys a record writes: its `DERIVED`, and `passed` where that is a property."""
    named = tuple(getattr(kind, "DERIVED", ()))
    passed = isinstance(getattr(kind, "passed", None), property) and "passed" not in named
    return (*named, "passed") if passed else named


@functools.cache
def _hints(kind: type) -> Mapping[str, Any]:
    """The written fields' type hints, resolved in the record's module.

    Not `typing.get_type_hints`: a field the file does not hold may name a type
    only imported for type checking (numpy's array), which need not resolve.
    """
    namespace = vars(sys.modules[kind.__module__])
    return {f.name: eval(f.type, namespace) if isinstance(f.type, str) else f.type for f in _written(kind)}
