"""Reading an imported file into checked values: every error names the file, the field and what was expected.

Importers walk JSON through `Node`, which carries its JSON path (`$.benchmarks[2].real_time`),
and read CSV through `read_table`, which keeps each row's line number, so a
malformed file is reported where it is malformed and never as a traceback.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

import attrs

from perfdsl.imports.evidence import ImportFormatError
from perfdsl.source import MAX_IMPORTED_BYTES, read_bounded

NS_PER_UNIT = {
    "ns": 1.0,
    "nsecond": 1.0,
    "us": 1e3,
    "usecond": 1e3,
    "ms": 1e6,
    "msecond": 1e6,
    "s": 1e9,
    "second": 1e9,
}
"""Time units as the harnesses spell them, to nanoseconds."""

NumberStyle = Literal["1,234.5", "1.234,5"]
"""How a file writes its numbers: a point for decimals and commas between thousands (C and English
locales, the default), or the reverse (German, French and others). One file uses one style."""
POINT_DECIMALS: NumberStyle = "1,234.5"
COMMA_DECIMALS: NumberStyle = "1.234,5"
_NUMBER = {
    POINT_DECIMALS: re.compile(r"[+-]?(?:\d{1,3}(?:,\d{3})+|\d+)?(?:\.\d*)?(?:[eE][+-]?\d+)?"),
    COMMA_DECIMALS: re.compile(r"[+-]?(?:\d{1,3}(?:\.\d{3})+|\d+)?(?:,\d*)?(?:[eE][+-]?\d+)?"),
}
_ONE_SEPARATOR = re.compile(r"[+-]?(\d+)([.,])(\d*)(?:[eE][+-]?\d+)?")


def number_style(path: Path, cells: Iterable[tuple[int, str]]) -> NumberStyle:
    """The one style a file's numbers are written in, decided from every (line, text) cell given.

    A cell decides the style when only one style can read it: both separators
    (the last one is the decimal), the same separator twice (thousands), a
    separator not followed by exactly three digits or after a leading zero or
    more than three digits (a decimal). `1,234` and `117.344` decide nothing.
    With no deciding cell the file is read in the default style; cells that
    decide both ways are an error naming a line of each, never read one by one.
    """
    seen: dict[NumberStyle, int] = {}
    for line, text in cells:
        style = _decides(text.strip())
        if style is not None:
            seen.setdefault(style, line)
    if len(seen) == 2:
        raise ImportFormatError(
            f"{path}:{seen[COMMA_DECIMALS]}: writes numbers as `1.234,5` but line {seen[POINT_DECIMALS]} "
            "as `1,234.5`: one file has one number style; export it again in one locale"
        )
    return next(iter(seen), POINT_DECIMALS)


def _decides(text: str) -> NumberStyle | None:
    if "," in text and "." in text:
        return POINT_DECIMALS if text.rfind(".") > text.rfind(",") else COMMA_DECIMALS
    if text.count(",") > 1:
        return POINT_DECIMALS
    if text.count(".") > 1:
        return COMMA_DECIMALS
    found = _ONE_SEPARATOR.fullmatch(text)
    if found is None:
        return None
    whole, separator, fraction = found.groups()
    if len(fraction) == 3 and len(whole) <= 3 and whole != "0":
        return None
    return POINT_DECIMALS if separator == "." else COMMA_DECIMALS


def read_bytes(path: Path) -> tuple[bytes, str]:
    """The file's bytes and their SHA-256, or an ImportFormatError saying why it cannot be read."""
    try:
        data = read_bounded(path, MAX_IMPORTED_BYTES, "tool's results file perfdsl reads")
    except OSError as error:
        raise ImportFormatError(f"{path}: cannot read the file: {error.strerror or error}") from None
    return data, hashlib.sha256(data).hexdigest()


def load_json(path: Path) -> tuple[Node, str]:
    """The file's top-level JSON value as a Node, and the file's SHA-256."""
    data, digest = read_bytes(path)
    try:
        value = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise ImportFormatError(f"{path}: expected UTF-8 JSON text, found binary data") from None
    except RecursionError:
        raise ImportFormatError(f"{path}: JSON nested deeper than any tool writes its results") from None
    except json.JSONDecodeError as error:
        raise ImportFormatError(
            f"{path}:{error.lineno}:{error.colno}: not JSON ({error.msg}): expected the tool's JSON output"
        ) from None
    return Node(path, "$", value), digest


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean"}.get(
        type(value), "a number"
    )


@attrs.frozen
class Node:
    """A JSON value with the file and JSON path it came from, for errors that point at it."""

    path: Path
    where: str
    value: Any

    def fail(self, expected: str) -> ImportFormatError:
        """An error at this node: what was expected, and what is there."""
        found = repr(self.value) if isinstance(self.value, str | int | float) else _kind(self.value)
        return ImportFormatError(f"{self.path}: {self.where}: expected {expected}, found {found}")

    def has(self, key: str) -> bool:
        return isinstance(self.value, dict) and key in self.value

    def key(self, key: str) -> Node:
        """The member `key` of this object; an error if this is no object or the member is missing."""
        if not isinstance(self.value, dict):
            raise self.fail(f"an object with `{key}`")
        if key not in self.value:
            raise ImportFormatError(f"{self.path}: {self.where}: missing field `{key}`")
        return Node(self.path, f"{self.where}.{key}", self.value[key])

    def optional(self, key: str) -> Node | None:
        """The member `key`, or None when it is absent or null."""
        if not isinstance(self.value, dict):
            raise self.fail(f"an object with `{key}`")
        if self.value.get(key) is None:
            return None
        return self.key(key)

    def items(self) -> Iterator[Node]:
        """The elements of this array."""
        if not isinstance(self.value, list):
            raise self.fail("an array")
        for i, item in enumerate(self.value):
            yield Node(self.path, f"{self.where}[{i}]", item)

    def members(self) -> Iterator[tuple[str, Node]]:
        """The members of this object, in the file's order."""
        if not isinstance(self.value, dict):
            raise self.fail("an object")
        for key, item in self.value.items():
            yield key, Node(self.path, f"{self.where}.{key}", item)

    def string(self) -> str:
        if not isinstance(self.value, str):
            raise self.fail("a string")
        return self.value

    def number(self) -> float:
        """A finite number; a number written as a string (NVBench's values) is accepted too."""
        value = self.value
        if isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise self.fail("a number") from None
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise self.fail("a finite number")
        return float(value)

    def duration(self) -> float:
        """A non-negative number: a time."""
        value = self.number()
        if value < 0:
            raise self.fail("a duration (a number >= 0)")
        return value

    def integer(self) -> int:
        value = self.number()
        if value != int(value):
            raise self.fail("an integer")
        return int(value)


def environment_of(node: Node | None, fields: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    """The named scalar fields of an object, as text, in the order given; absent fields are left out."""
    if node is None or not isinstance(node.value, dict):
        return ()
    found = []
    for field in fields:
        value = node.value.get(field)
        if isinstance(value, str | int | float) and not isinstance(value, bool) and value != "":
            found.append((field, str(value)))
    return tuple(found)


def to_ns(node: Node, unit: str, unit_field: str) -> float:
    """A duration in `unit` (named by the field `unit_field`) to nanoseconds."""
    if unit not in NS_PER_UNIT:
        raise ImportFormatError(
            f"{node.path}: {unit_field}: expected a time unit ({', '.join(sorted(NS_PER_UNIT))}), "
            f"found {unit!r}"
        )
    return node.duration() * NS_PER_UNIT[unit]


@attrs.frozen
class Row:
    """One CSV row: its line in the file, and its cells by column name."""

    path: Path
    line: int
    cells: dict[str, str]

    def text(self, column: str) -> str:
        return self.cells[column].strip()

    def number(self, column: str) -> float:
        """A cell as a finite number: `1,234,567`, `12.5`, `4.0e-05`; anything else is an error."""
        value = self.maybe_number(column)
        if value is None:
            raise ImportFormatError(
                f"{self.path}:{self.line}: column `{column}`: expected a number, found {self.cells[column]!r}"
            )
        return value

    def maybe_number(self, column: str, style: NumberStyle = POINT_DECIMALS) -> float | None:
        """A cell as a number in the file's `style`; None where the tool printed `n/a`, `-` or nothing."""
        text = self.text(column)
        if text in ("", "n/a", "-"):
            return None
        value = read_number(text, style)
        if value is None:
            raise ImportFormatError(
                f"{self.path}:{self.line}: column `{column}`: expected a number"
                f"{'' if style == POINT_DECIMALS else f' written as {style}'}, found {self.cells[column]!r}"
            )
        if not math.isfinite(value):
            raise ImportFormatError(
                f"{self.path}:{self.line}: column `{column}`: expected a finite number, found {text!r}"
            )
        return value


def read_number(text: str, style: NumberStyle) -> float | None:
    """`text` as a number in `style` (`1,234.5` or `1.234,5`, grouping optional), None if it is not one."""
    if not any(ch.isdigit() for ch in text) or not _NUMBER[style].fullmatch(text):
        return None
    thousands, decimal = (",", ".") if style == POINT_DECIMALS else (".", ",")
    return float(text.replace(thousands, "").replace(decimal, "."))


def read_table(
    path: Path, text: str, required: tuple[str, ...], optional: tuple[str, ...] = ()
) -> tuple[list[str], list[Row]]:
    """The header and rows of a CSV that may have the tool's messages (or the program's output) before it.

    The header is the first row that has every `required` column; lines before it
    (`Processing [...]`, `==PROF==` messages) are skipped. After it, a row with the
    wrong number of cells is an error naming its line, except the tool's own
    `==` messages, which are skipped wherever they are, and a row that stops
    before header columns that are all `optional` (read as empty).
    """
    lines = text.splitlines()
    header: list[str] | None = None
    rows: list[Row] = []
    reader = csv.reader(lines)
    while True:
        try:
            cells = next(reader)
        except StopIteration:
            break
        except csv.Error as error:
            raise ImportFormatError(f"{path}:{reader.line_num}: not CSV ({error})") from None
        number = reader.line_num
        if not cells or lines[number - 1].startswith("=="):
            continue
        if header is None:
            if all(column in cells for column in required):
                header = cells
            continue
        if len(cells) < len(header) and all(column in optional for column in header[len(cells) :]):
            cells += [""] * (len(header) - len(cells))
        if len(cells) != len(header):
            raise ImportFormatError(
                f"{path}:{number}: expected {len(header)} comma-separated cells as in the header, "
                f"found {len(cells)}"
            )
        rows.append(Row(path, number, dict(zip(header, cells, strict=True))))
    if header is None:
        columns = ", ".join(f"`{c}`" for c in required)
        raise ImportFormatError(f"{path}: no CSV header with the columns {columns}")
    return header, rows


def decode_text(path: Path, data: bytes) -> str:
    """The bytes of a text export as text, or an error naming the file."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ImportFormatError(f"{path}: expected UTF-8 CSV text, found binary data") from None
