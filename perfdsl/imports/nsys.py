"""Nsight Systems' `nsys stats --format csv` reports: `cuda_gpu_trace` and `cuda_gpu_kern_sum`.

`cuda_gpu_trace` has one row per GPU activity: `Start (ns)`, `Duration (ns)`,
`CorrId`, grid and block sizes, registers, shared memory, `Bytes (MB)`,
`Device`, `Ctx`, `Strm` and `Name` (kernel rows have a grid; memory copies
and sets do not, and are left out). Every launch's duration is a raw sample;
a kernel's launches are one block. Whether two kernels were interleaved is
in the start times: when their launches alternate on the timeline, they were.
A `--timeunit` other than ns shows in the column names and is converted.

`cuda_gpu_kern_sum` has one row per kernel name: `Time (%)`, `Total Time (ns)`,
`Instances`, `Avg (ns)`, `Med (ns)`, `Min (ns)`, `Max (ns)`, `StdDev (ns)`,
`Name`: aggregates only, and nothing says how the launches were ordered.

Neither CSV carries the machine. nsys's version shows only where `nsys stats`
printed its progress into the same file: `Processing [x.sqlite] with
[/opt/nvidia/nsight-systems-cli/2024.7.1/target-linux-x64/reports/...]` names
the installation the report script ran from (absent when the CSV came
from `--output`, or nsys was installed without a version in its path).
"""

from __future__ import annotations

import re
from pathlib import Path

from perfdsl.imports.evidence import (
    Entry,
    ImportedEvidence,
    ImportFormatError,
    Interleaved,
    Label,
    Statistic,
    coarsest,
)
from perfdsl.imports.reading import NS_PER_UNIT, Row, decode_text, read_bytes, read_table

TRACE_FORMAT = "nsys-gpu-trace"
KERN_SUM_FORMAT = "nsys-kern-sum"
_UNIT = re.compile(r"^(?P<what>.+) \((?P<unit>ns|us|ms|s)\)$")
_INSTALLED = re.compile(r"nsight[- ]systems(?:-cli)?[-/ \\](?P<version>\d{4}\.\d+(?:\.\d+)*)", re.IGNORECASE)
_SUM_STATISTICS = (("Avg", "mean"), ("Med", "median"), ("Min", "min"), ("Max", "max"))


def parse_nsys_gpu_trace(path: Path) -> ImportedEvidence:
    """Read `nsys stats --report cuda_gpu_trace --format csv`: each kernel's launches as raw samples."""
    data, digest = read_bytes(path)
    text = decode_text(path, data)
    header, rows = read_table(path, text, ("Name", "GrdX"))
    start, start_scale = _timed_column(path, header, "Start")
    duration, duration_scale = _timed_column(path, header, "Duration")
    launches: dict[str, list[tuple[float, float]]] = {}
    for row in rows:
        if row.maybe_number("GrdX") is None:
            continue
        when = _duration(row, start) * start_scale
        launches.setdefault(row.text("Name"), []).append((when, _duration(row, duration) * duration_scale))
    entries = tuple(
        Entry(name=name, blocks=(tuple(d for _, d in sorted(timed)),), calls_per_sample=1)
        for name, timed in launches.items()
    )
    return ImportedEvidence(
        TRACE_FORMAT, entries, _label(path, digest, text, entries, _interleaved(launches))
    )


def parse_nsys_kern_sum(path: Path) -> ImportedEvidence:
    """Read `nsys stats --report cuda_gpu_kern_sum --format csv`: each kernel's statistics only."""
    data, digest = read_bytes(path)
    text = decode_text(path, data)
    header, rows = read_table(path, text, ("Name", "Instances"))
    columns = {what: _timed_column(path, header, what) for what, _ in _SUM_STATISTICS}
    entries = tuple(
        Entry(
            name=row.text("Name"),
            statistics=tuple(
                Statistic(name, _duration(row, columns[what][0]) * columns[what][1])
                for what, name in _SUM_STATISTICS
            ),
        )
        for row in rows
    )
    return ImportedEvidence(KERN_SUM_FORMAT, entries, _label(path, digest, text, entries, "unknown"))


def _timed_column(path: Path, header: list[str], what: str) -> tuple[str, float]:
    """The column `what (unit)` and the factor from its unit to ns."""
    for column in header:
        match = _UNIT.match(column)
        if match and match["what"] == what:
            return column, NS_PER_UNIT[match["unit"]]
    raise ImportFormatError(f"{path}: no column `{what} (ns)` (or us, ms, s) in the header")


def _duration(row: Row, column: str) -> float:
    value = row.number(column)
    if value < 0:
        raise ImportFormatError(
            f"{row.path}:{row.line}: column `{column}`: expected a time >= 0, found {value}"
        )
    return value


def _interleaved(launches: dict[str, list[tuple[float, float]]]) -> Interleaved:
    """`yes` when different kernels' launches alternate in time, `no` when each kernel's are contiguous."""
    if len(launches) < 2:
        return "unknown"
    timeline = [
        name for _, name in sorted((when, name) for name, timed in launches.items() for when, _ in timed)
    ]
    stretches = sum(1 for i, name in enumerate(timeline) if i == 0 or timeline[i - 1] != name)
    return "yes" if stretches > len(launches) else "no"


def _version(text: str) -> str | None:
    """nsys's version from its `Processing [...] with [<install>/reports/...]` line, if it printed one."""
    for line in text.splitlines():
        if line.startswith("Processing [") and (found := _INSTALLED.search(line)):
            return found["version"]
    return None


def _label(path: Path, digest: str, text: str, entries: tuple[Entry, ...], interleaved: Interleaved) -> Label:
    return Label(
        tool="Nsight Systems",
        tool_version=_version(text),
        granularity=coarsest(entries),
        interleaved=interleaved,
        environment=(),
        sha256=digest,
        path=str(path),
    )
