"""Nsight Compute's CSV, either page: counted mechanism evidence, per launch.

`ncu --csv` writes one of two layouts, and which one is read from the file,
never declared:

* the **raw** page (`--page raw`): a header row (`ID`, `Process ID`, ...,
  `Kernel Name`, ..., `CC`, then one column per metric such as
  `dram__bytes_read.sum`), a units row (blank `ID`), then one row per
  profiled launch;
* the **details** page (the default, so what most scripts that run
  `ncu --csv --metrics ...` get): one row per launch and metric, with
  `Section Name`, `Metric Name`, `Metric Unit` and `Metric Value` (metrics
  asked for with `--metrics` sit in the section `Command line profiler
  metrics` under their own names; the sections' metrics under display names
  such as `Duration`), and the rule results (`Rule Name`, `Rule Type`, ...),
  which are advice, not counts, and are skipped. Newer versions end a
  metric's row before the rule columns.

On either page ncu's own `==PROF==` messages, and the profiled program's
output before the table, share the stream; an absent value prints as `n/a`.
Numbers follow the locale ncu ran in (`1,234.5` or `1.234,5`), decided once
for the whole file (`reading.number_style`). Units are brought to base units:
bytes in bytes, times in ns, frequencies in hz, rates per second.

Each kernel name is an entry whose counters hold one value per launch. These
are counts, not timings: ncu replays each launch several times with caches
flushed and clocks locked, so even `gpu__time_duration.sum` (`Duration`) is
kept as a counter and never as a timing sample. A details-page metric whose
value is text (`Cluster Scheduling Policy`: `PolicySpread`) is no counter and
is left out; a display name that two sections share is qualified by its
section (`Occupancy: Block Limit SM`).
"""

from __future__ import annotations

from pathlib import Path

from perfdsl.imports.evidence import Counter, Entry, ImportedEvidence, ImportFormatError, Label
from perfdsl.imports.reading import (
    NumberStyle,
    Row,
    decode_text,
    number_style,
    read_bytes,
    read_number,
    read_table,
)

FORMAT = "ncu-raw"
"""The study's name for this format (from when only the raw page was read; both pages are now)."""
_IDENTITY = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Kernel Time",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)
"""Columns that say which launch a row is; on the raw page every other column is a metric."""
_DETAILS = ("Section Name", "Metric Name", "Metric Unit", "Metric Value")
_RULES = ("Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup")
_ENVIRONMENT = ("Host Name", "Device", "CC", "Process Name")
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_NS = {
    "nsecond": 1.0,
    "ns": 1.0,
    "usecond": 1e3,
    "us": 1e3,
    "msecond": 1e6,
    "ms": 1e6,
    "second": 1e9,
    "s": 1e9,
}


def base_unit(unit: str) -> tuple[str, float]:
    """ncu's unit as (base unit, factor): `Kbyte` is (`byte`, 1e3), `usecond` (`nsecond`, 1e3),
    `Ghz` (`hz`, 1e9), `Gbyte/second` (`byte/second`, 1e9), `cycle/nsecond` (`cycle/second`, 1e9);
    anything else (`%`, `cycle`, `register/thread`) is kept as printed."""
    numerator, slash, denominator = unit.partition("/")
    name, factor = _one(numerator)
    if not slash:
        return name, factor
    if denominator in _NS:
        return f"{name}/second", factor * 1e9 / _NS[denominator]
    return f"{name}/{denominator}", factor


def _one(unit: str) -> tuple[str, float]:
    if unit in _NS:
        return "nsecond", _NS[unit]
    for base in ("byte", "hz"):
        prefix = unit[: -len(base)] if unit.lower().endswith(base) else None
        if prefix is not None and prefix.upper() in _PREFIX:
            return base, _PREFIX[prefix.upper()]
    return unit, 1.0


def parse_ncu_raw(path: Path) -> ImportedEvidence:
    """Read `ncu --csv` of either page: per kernel name, each metric's value per launch in base units."""
    data, digest = read_bytes(path)
    header, rows = read_table(path, decode_text(path, data), ("ID", "Kernel Name"), _RULES)
    if all(column in header for column in _DETAILS):
        entries = _details(path, rows)
    else:
        entries = _raw(path, header, rows)
    first = next(row for row in rows if row.text("ID"))  # the raw page's units row has none
    label = Label(
        tool="Nsight Compute",
        tool_version=None,
        granularity="raw",
        interleaved="no",
        environment=tuple((field, first.text(field)) for field in _ENVIRONMENT if field in first.cells),
        sha256=digest,
        path=str(path),
    )
    return ImportedEvidence(FORMAT, entries, label)


def _raw(path: Path, header: list[str], rows: list[Row]) -> tuple[Entry, ...]:
    metrics = [column for column in header if column not in _IDENTITY]
    if not metrics:
        raise ImportFormatError(f"{path}: the header names no metric column after `Kernel Name`")
    units = {metric: ("", 1.0) for metric in metrics}
    if rows and rows[0].text("ID") == "":
        units = {metric: base_unit(rows[0].text(metric)) for metric in metrics}
        rows = rows[1:]
    if not rows:
        raise ImportFormatError(f"{path}: a header but no launch row: no kernel matched ncu's filter")
    style = number_style(path, ((row.line, row.cells[m]) for row in rows for m in metrics))
    values: dict[str, dict[str, list[float | None]]] = {}
    for row in rows:
        _launch(row)
        per_metric = values.setdefault(row.text("Kernel Name"), {metric: [] for metric in metrics})
        for metric in metrics:
            value = row.maybe_number(metric, style)
            per_metric[metric].append(None if value is None else value * units[metric][1])
    return tuple(
        Entry(
            name=kernel,
            counters=tuple(Counter(metric, units[metric][0], tuple(v)) for metric, v in per_metric.items()),
        )
        for kernel, per_metric in values.items()
    )


def _details(path: Path, rows: list[Row]) -> tuple[Entry, ...]:
    metric_rows = [row for row in rows if row.text("Metric Name")]
    if not metric_rows:
        raise ImportFormatError(f"{path}: a header but no metric row: no kernel matched ncu's filter")
    style = number_style(path, ((row.line, row.cells["Metric Value"]) for row in metric_rows))
    sections: dict[str, set[str]] = {}
    for row in metric_rows:
        sections.setdefault(row.text("Metric Name"), set()).add(row.text("Section Name"))
    launches: dict[str, list[str]] = {}
    found: dict[str, dict[str, tuple[str, dict[str, float | None]]]] = {}
    text_valued: set[str] = set()
    for row in metric_rows:
        kernel, launch, metric = row.text("Kernel Name"), _launch(row), row.text("Metric Name")
        if len(sections[metric]) > 1:
            metric = f"{row.text('Section Name')}: {metric}"
        if launch not in launches.setdefault(kernel, []):
            launches[kernel].append(launch)
        unit, factor = base_unit(row.text("Metric Unit"))
        if _is_text(row.text("Metric Value"), style):
            text_valued.add(metric)
            continue
        value = row.maybe_number("Metric Value", style)
        if metric in text_valued:
            raise ImportFormatError(
                f"{path}:{row.line}: metric `{metric}` is a number here and a word in an earlier row"
            )
        known_unit, per_launch = found.setdefault(kernel, {}).setdefault(metric, (unit, {}))
        if known_unit != unit:
            raise ImportFormatError(
                f"{path}:{row.line}: metric `{metric}` in `{unit}`, earlier in `{known_unit}`: "
                "one metric has one unit"
            )
        per_launch[launch] = None if value is None else value * factor
    return tuple(
        Entry(
            name=kernel,
            counters=tuple(
                Counter(metric, unit, tuple(per_launch.get(launch) for launch in launches[kernel]))
                for metric, (unit, per_launch) in found.get(kernel, {}).items()
                if metric not in text_valued
            ),
        )
        for kernel in launches
    )


def _launch(row: Row) -> str:
    launch = row.text("ID")
    if not launch.isdigit():
        raise ImportFormatError(
            f"{row.path}:{row.line}: column `ID`: expected a launch number, found {launch!r}"
        )
    return launch


def _is_text(value: str, style: NumberStyle) -> bool:
    """A details-page value that is a word (`PolicySpread`, `all`): not a number, and not a broken one."""
    return value[:1].isalpha() and read_number(value, style) is None
