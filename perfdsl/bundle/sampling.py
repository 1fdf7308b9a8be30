"""The sampler's records: the sample CSVs' rows, and the warm-ups and block log inside results.json.

Every timed call is one `Sample`, a row of `samples/<operation>/<shape>.csv`
(or `samples/application.csv`) under SAMPLE_COLUMNS: the sampler builds them,
`TimingRecord.rows()` writes them and `read_sample_csv` reads them back.

The runtime writes each shape's `timing` whole (`perfdsl.runtime.timing.TimingRecord`,
through `attrs.asdict`), and `ShapeRecord` keeps that JSON as it is, so the
bytes a run writes do not depend on this module. What the evaluation and the
report judge from it (whether a warm-up settled, the clocks and the machine's
load at each block's ends) is read here, once, into typed fields: a key the
writer renames then fails in one place instead of reading as "not recorded"
everywhere. Older bundles lack fields (results/4 added `settled`, the curve and
the load readings): those read as None, and the judgements that need them are
not made.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from perfdsl.bundle.versions import BundleFormatError

SAMPLE_COLUMNS = ("arm", "block", "position", "buffer_set", "duration_ns", "valid")
"""The sample CSV's header, in `Sample`'s field order."""
_LOAD_FIELDS = ("wall_s", "busy_s", "steal_s", "total_s", "self_s", "load1")
"""`perfdsl.runtime.contention.read_load`'s reading, every one needed to judge a block."""


@attrs.frozen
class Sample:
    """One timed call: a row of a sample CSV."""

    arm: str
    block: int
    """The block's index in the interleaved order (the overhead's own blocks for EMPTY_ARM)."""
    position: int
    buffer_set: int
    duration_ns: int
    valid: bool

    def row(self) -> tuple[Any, ...]:
        """The CSV row, under SAMPLE_COLUMNS (`valid` as 0 or 1)."""
        return (self.arm, self.block, self.position, self.buffer_set, self.duration_ns, int(self.valid))


def read_sample_csv(path: Path) -> tuple[Sample, ...]:
    """Every row of a sample CSV, in the order written (BundleFormatError for a row that is not one)."""
    columns = dict(zip(SAMPLE_COLUMNS, (str, int, int, int, int, str), strict=True))
    return tuple(
        Sample(
            arm=row["arm"],
            block=row["block"],
            position=row["position"],
            buffer_set=row["buffer_set"],
            duration_ns=row["duration_ns"],
            valid=row["valid"] == "1",
        )
        for row in read_typed_csv(path, columns)
    )


def read_typed_csv(path: Path, columns: Mapping[str, Callable[[str], Any]]) -> list[dict[str, Any]]:
    """Every row of a bundle CSV with each named column converted, or BundleFormatError naming the line.

    A bundle's CSVs are read long after the run wrote them: a truncated, edited
    or garbled file is told apart here, with the line to look at, rather than
    as whatever a conversion deep in the evaluation happens to raise.
    """
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        try:
            return _typed_rows(path, reader, columns)
        except (UnicodeDecodeError, csv.Error) as error:
            raise BundleFormatError(
                f"{path}:{reader.line_num + 1}: not the CSV the run wrote ({error}): run the study again"
            ) from None


def _typed_rows(
    path: Path, reader: csv.DictReader[str], columns: Mapping[str, Callable[[str], Any]]
) -> list[dict[str, Any]]:
    """`read_typed_csv`'s rows: the header names every column, and every cell converts."""
    missing = [name for name in columns if name not in (reader.fieldnames or ())]
    if missing:
        raise BundleFormatError(
            f"{path}:1: no column {', '.join(f'`{m}`' for m in missing)} in the header; "
            "the file is not the one the run wrote: run the study again"
        )
    rows = []
    for row in reader:
        try:
            rows.append({name: convert(row[name]) for name, convert in columns.items()})
        except (TypeError, ValueError):
            bad = next(n for n in columns if not _converts(columns[n], row[n]))
            raise BundleFormatError(
                f"{path}:{reader.line_num}: `{bad}` is {row[bad]!r}, not a {columns[bad].__name__}; "
                "the file is not the one the run wrote: run the study again"
            ) from None
    return rows


def _converts(convert: Callable[[str], Any], cell: str | None) -> bool:
    try:
        convert(cell)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False
    return True


@attrs.frozen
class WarmupRecord:
    """What the warm-up did for one arm (`perfdsl.runtime.warmup.Warmup`)."""

    arm: str
    calls: int | None
    elapsed_ns: int | None
    durations_ns: tuple[int, ...]
    """Every warm-up call's duration, in order (empty before results/4)."""
    settled: bool | None
    """Whether the settle rule held when the warm-up ended; None before results/4."""

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> WarmupRecord:
        settled = data.get("settled")
        return cls(
            arm=str(data.get("arm")),
            calls=_integer(data.get("calls")),
            elapsed_ns=_integer(data.get("elapsed_ns")),
            durations_ns=tuple(int(d) for d in data.get("durations_ns") or ()),
            settled=settled if isinstance(settled, bool) else None,
        )


@attrs.frozen
class LoadReading:
    """The machine's CPU times at one edge of a block (results/4; Linux only)."""

    wall_s: float
    busy_s: float
    steal_s: float
    total_s: float
    self_s: float
    """This process's own CPU time, which is not other work."""
    load1: float

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoadReading | None:
        """The load part of a block hook's reading, or None unless every field is a number."""
        values = [data.get(name) for name in _LOAD_FIELDS]
        if not all(_is_number(v) for v in values):
            return None
        return cls(*values)


@attrs.frozen
class BlockReading:
    """The block hook's reading at one edge of a block (`perfdsl.runtime.worker._block_hook`).

    The clock fields are a CUDA run's only (`perfdsl.runtime.environment.ClockReading`);
    a field the run could not read is None. Numbers keep the type the JSON gave them.
    """

    monotonic_s: float | None
    sm_clock_mhz: float | None
    mem_clock_mhz: float | None
    power_w: float | None
    clock_event_reasons: int | None
    """NVML's clock-event bitmask (`perfdsl.runtime.environment.CLOCK_EVENT_REASONS`)."""
    temperature_c: float | None
    missing: str | None
    """Why a clock field is None, as the run said it."""
    load: LoadReading | None
    """None where the reading has no load (not Linux, or before results/4)."""

    @classmethod
    def from_json(cls, data: Any) -> BlockReading:
        reading: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
        reasons = reading.get("clock_event_reasons")
        missing = reading.get("missing")
        return cls(
            monotonic_s=_number(reading.get("monotonic_s")),
            sm_clock_mhz=_number(reading.get("sm_clock_mhz")),
            mem_clock_mhz=_number(reading.get("mem_clock_mhz")),
            power_w=_number(reading.get("power_w")),
            clock_event_reasons=int(reasons) if _is_number(reasons) else None,
            temperature_c=_number(reading.get("temperature_c")),
            missing=None if missing is None else str(missing),
            load=LoadReading.from_json(reading),
        )


@attrs.frozen
class BlockRecord:
    """One block of the interleaved order (`perfdsl.runtime.timing.Block`)."""

    index: int | None
    """The block's index in the interleaved order: the sample CSV's `block`."""
    arm: str
    arm_block: int | None
    """The arm's own count of blocks: 0, 1, ..."""
    start: BlockReading
    end: BlockReading
    samples: int | None
    failed: bool

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> BlockRecord:
        return cls(
            index=_integer(data.get("index")),
            arm=str(data.get("arm")),
            arm_block=_integer(data.get("arm_block")),
            start=BlockReading.from_json(data.get("start")),
            end=BlockReading.from_json(data.get("end")),
            samples=_integer(data.get("samples")),
            failed=bool(data.get("failed")),
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float)


def _number(value: Any) -> float | None:
    return value if _is_number(value) else None


def _integer(value: Any) -> int | None:
    return int(value) if _is_number(value) else None
