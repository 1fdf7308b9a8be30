"""ncu's `--csv --page raw --print-units base` output read into launches, whatever ncu mixed in.

The log is the only record of what ncu counted, and it is not a clean CSV: ncu's
own messages come before, between and after the rows, numbers may carry thousands
separators, absent values print as `n/a`, and units depend on ncu's printing.
Reading it is kept apart from what the launches mean (attribution), so a change
in ncu's format touches this module alone.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence

import attrs

from perfdsl.runtime.counters.names import kernel_function_name

_UNIT_SCALE = {
    "byte": ("byte", 1.0),
    "Kbyte": ("byte", 1e3),
    "Mbyte": ("byte", 1e6),
    "Gbyte": ("byte", 1e9),
    "Tbyte": ("byte", 1e12),
    "nsecond": ("nsecond", 1.0),
    "usecond": ("nsecond", 1e3),
    "msecond": ("nsecond", 1e6),
    "second": ("nsecond", 1e9),
}
"""Byte and time units to bytes and nanoseconds, so a quantity's unit never depends on
ncu's printing (`--print-units base` should already give these)."""
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")


class CounterError(Exception):
    """ncu's output could not be read as the expected CSV; the message says what was wrong."""


@attrs.frozen
class Launch:
    """One profiled kernel launch: one row of `--page raw`."""

    id: int
    kernel: str
    """The function's name (see kernel_function_name)."""
    metrics: dict[str, float | None]
    """None where ncu printed `n/a` or nothing: absent, not zero."""


@attrs.frozen
class RawTable:
    """ncu's `--csv --page raw --print-units base` output, read."""

    units: dict[str, str]
    launches: tuple[Launch, ...]


def parse_number(text: str) -> float | None:
    """A metric value as ncu prints it: `1,234,567`, `12.5`, `4.0e-05`; `n/a` and blanks are None."""
    text = text.strip()
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def parse_raw_csv(text: str, metrics: Sequence[str]) -> RawTable:
    """Read the raw page: a header row, a units row, then one row per launch.

    ncu's own messages (`==PROF==`, `==WARNING==`) may come before, between or after
    the rows and are skipped. Byte and time values are converted to bytes and
    nanoseconds. Only the requested metrics are read; one ncu does not print is
    absent from every launch. Raises CounterError when there is no header or no row.
    """
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("==")]
    rows = list(csv.reader(lines))
    header_at = next((i for i, row in enumerate(rows) if row[:1] == ["ID"] and "Kernel Name" in row), None)
    if header_at is None:
        raise CounterError('ncu printed no CSV header (no `"ID",...,"Kernel Name"` row)')
    header = rows[header_at]
    column = {name: i for i, name in enumerate(header)}
    wanted = [m for m in metrics if m in column]
    units: dict[str, str] = {}
    scale: dict[str, float] = {}
    launches = []
    for row in rows[header_at + 1 :]:
        if len(row) != len(header):
            continue
        if row[0] == "" and not units:
            for metric in wanted:
                unit, factor = _UNIT_SCALE.get(row[column[metric]], (row[column[metric]], 1.0))
                units[metric], scale[metric] = unit, factor
            continue
        if not row[0].strip().isdigit():
            continue
        values = {}
        for metric in wanted:
            value = parse_number(row[column[metric]])
            values[metric] = None if value is None else value * scale.get(metric, 1.0)
        launches.append(Launch(int(row[0]), kernel_function_name(row[column["Kernel Name"]]), values))
    if not launches:
        raise CounterError("ncu's CSV has a header but no launch: no kernel matched the filter")
    return RawTable(units, tuple(sorted(launches, key=lambda launch: launch.id)))
