"""Nsight Compute's `ncu --csv --page raw` output: counted mechanism evidence, per launch.

Layout: a header row (`ID`, `Process ID`, `Process Name`, `Host Name`,
`Kernel Name`, `Context`, `Stream`, `Block Size`, `Grid Size`, `Device`, `CC`,
then one column per metric such as `dram__bytes_read.sum`), a units row
(blank `ID`; `byte`, `Kbyte`, `nsecond`, `usecond` ...), then one row per
profiled launch. ncu's own `==PROF==` messages may surround the rows, numbers
may carry thousands separators, and an absent value prints as `n/a`.

Each kernel name is an entry whose counters hold one value per launch, bytes
in bytes and times in ns. These are counts, not timings: ncu replays each
launch several times with caches flushed and clocks locked, so even
`gpu__time_duration.sum` is kept as a counter and never as a timing sample.
"""

from __future__ import annotations

from pathlib import Path

from perfdsl.imports.evidence import Counter, Entry, ImportedEvidence, ImportFormatError, Label
from perfdsl.imports.reading import decode_text, read_bytes, read_table

FORMAT = "ncu-raw"
_IDENTITY = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)
"""Columns that say which launch a row is; every other column is a metric."""
_UNIT_SCALE = {
    "byte": ("byte", 1.0),
    "Kbyte": ("byte", 1e3),
    "Mbyte": ("byte", 1e6),
    "Gbyte": ("byte", 1e9),
    "nsecond": ("nsecond", 1.0),
    "usecond": ("nsecond", 1e3),
    "msecond": ("nsecond", 1e6),
    "second": ("nsecond", 1e9),
}
_ENVIRONMENT = ("Host Name", "Device", "CC", "Process Name")


def parse_ncu_raw(path: Path) -> ImportedEvidence:
    """Read `ncu --csv --page raw`: per kernel name, each metric's value per launch in base units."""
    data, digest = read_bytes(path)
    header, rows = read_table(path, decode_text(path, data), ("ID", "Kernel Name"))
    metrics = [column for column in header if column not in _IDENTITY]
    if not metrics:
        raise ImportFormatError(f"{path}: the header names no metric column after `Kernel Name`")
    units = {metric: ("", 1.0) for metric in metrics}
    if rows and rows[0].text("ID") == "":
        units = {
            metric: _UNIT_SCALE.get(rows[0].text(metric), (rows[0].text(metric), 1.0)) for metric in metrics
        }
        rows = rows[1:]
    if not rows:
        raise ImportFormatError(f"{path}: a header but no launch row: no kernel matched ncu's filter")
    values: dict[str, dict[str, list[float | None]]] = {}
    for row in rows:
        if not row.text("ID").isdigit():
            raise ImportFormatError(
                f"{row.path}:{row.line}: column `ID`: expected a launch number, found {row.text('ID')!r}"
            )
        per_metric = values.setdefault(row.text("Kernel Name"), {metric: [] for metric in metrics})
        for metric in metrics:
            value = row.maybe_number(metric)
            per_metric[metric].append(None if value is None else value * units[metric][1])
    entries = tuple(
        Entry(
            name=kernel,
            counters=tuple(Counter(metric, units[metric][0], tuple(v)) for metric, v in per_metric.items()),
        )
        for kernel, per_metric in values.items()
    )
    first = rows[0]
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
