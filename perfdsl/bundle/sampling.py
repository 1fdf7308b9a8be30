"""The sampler's records: what `perfdsl.runtime.timing.sample` builds and results.json holds.

Every timed call is one `Sample`, a row of `samples/<operation>/<shape>.csv`
(or `samples/application.csv`) under SAMPLE_COLUMNS; `read_sample_columns` reads
them back. Everything else the sampler measured is one `TimingRecord`, a
shape's `timing` in results.json (the application's request blocks keep
`ApplicationTiming`, its block log): its settings, warm-ups, blocks with the
readings at their edges, the rotation of buffer sets and the calls that raised.

The runtime constructs these records and the bundle writes them (`to_json`, by
their fields: `bundle.plain`), so a field is declared once, here, and the writer
and every reader agree on its key by construction. The keys are those the runtime wrote before these records
existed (`attrs.asdict` of its own records plus per-arm maps of the rotation),
so the bytes of a run did not change with them. Readers take every version:
older bundles lack fields (results/4 added `settled`, the curve, the per-arm
regime maps and the load readings; results/8 the sequential rule's settings and
`stop`). Those read as None or empty, and the judgements that need them are
not made.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.plain import EMPTY, Plain, field
from perfdsl.bundle.stopping import StoppingRule, StopRecord
from perfdsl.bundle.versions import BundleFormatError

SAMPLE_COLUMNS = ("arm", "block", "position", "buffer_set", "duration_ns", "valid")
"""The sample CSV's header, in `Sample`'s field order."""
MIN_FULL_BLOCKS = 10
"""Blocks per arm below which a run is a reduced (smoke) run, not evidence-grade."""
CAP_CALLS = 500
CAP_MS = 10_000.0
"""A full run's warm-up cap: 500 calls an arm or 10 s in all (`perfdsl.runtime.warmup`)."""
DRAM = "dram"
CACHE = "cache"
MIXED = "mixed"
"""The regimes a shape's arm runs in: its rotated working set exceeds the cache
the target must defeat (every call reads device memory), or it fits there; or
its buffers exceed it while the scratch it reuses on every call fits in a cache
that is not flushed between calls (part of its traffic is cache traffic)."""


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


def read_sample_columns(path: Path) -> dict[str, list[Any]]:
    """A sample CSV's columns by SAMPLE_COLUMNS' names, each cell converted (`valid` as a bool),
    rows in the order written (BundleFormatError for a row that is not one)."""
    columns = read_typed_csv(
        path, dict(zip(SAMPLE_COLUMNS, (str, int, int, int, _duration_ns, str), strict=True))
    )
    columns["valid"] = [cell == "1" for cell in columns["valid"]]
    return columns


MAX_DURATION_NS = 2**63 - 1
"""The longest duration a clock's 64-bit nanosecond count holds."""


def _duration_ns(cell: str) -> int:
    """A sample's duration as a clock gives it: 0 to 2^63 - 1 ns. A negative or 400-digit one ran
    into the statistics as a ValueError or OverflowError traceback."""
    value = int(cell)
    if not 0 <= value <= MAX_DURATION_NS:
        raise ValueError(f"{cell} ns is no duration a clock measures")
    return value


def read_typed_csv(path: Path, columns: Mapping[str, Callable[[str], Any]]) -> dict[str, list[Any]]:
    """The named columns of a bundle CSV, each cell converted, or BundleFormatError naming the line.

    A bundle's CSVs are read long after the run wrote them: a truncated, edited
    or garbled file is told apart here, with the line to look at, rather than
    as whatever a conversion deep in the evaluation happens to raise. Column by
    column, because an evaluation reads a million cells: a record per row was
    most of the time it spent reading.
    """
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.reader(handle)
        try:
            header = next(reader, [])
            rows = [row for row in reader if row]
        except (UnicodeDecodeError, csv.Error) as error:
            raise BundleFormatError(
                f"{path}:{reader.line_num + 1}: not the CSV the run wrote ({error}): run the study again"
            ) from None
    missing = [name for name in columns if name not in header]
    if missing:
        raise BundleFormatError(
            f"{path}:1: no column {', '.join(f'`{m}`' for m in missing)} in the header; "
            "the file is not the one the run wrote: run the study again"
        )
    where = {name: index for index, name in enumerate(header)}
    try:
        return {name: [convert(row[where[name]]) for row in rows] for name, convert in columns.items()}
    except (TypeError, ValueError, IndexError):
        raise _first_bad_cell(path, columns) from None


def _first_bad_cell(path: Path, columns: Mapping[str, Callable[[str], Any]]) -> BundleFormatError:
    """The error naming the first cell of the file that is missing or does not convert, and its
    line: the file read again row by row, which only a file that fails to convert pays for."""
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        for row in reader:
            bad = next((n for n in columns if not _converts(columns[n], row[n])), None)
            if bad is not None:
                noun = _NOUNS.get(columns[bad], f"a {columns[bad].__name__}")
                said = "missing" if row[bad] is None else f"{row[bad]!r}, not {noun}"
                return BundleFormatError(
                    f"{path}:{reader.line_num}: `{bad}` is {said}; "
                    "the file is not the one the run wrote: run the study again"
                )
    return BundleFormatError(f"{path}: not the CSV the run wrote: run the study again")


_NOUNS: dict[Callable[[str], Any], str] = {
    int: "a whole number",
    float: "a number",
    _duration_ns: "a duration of 0 to 2^63 - 1 ns",
}
"""What a cell must be, in words ("'nan', not a int" read as a typo of the tool's)."""


def _converts(convert: Callable[[str], Any], cell: str | None) -> bool:
    if cell is None:
        return False
    try:
        convert(cell)
    except ValueError:
        return False
    return True


@attrs.frozen
class TimingSettings(Plain):
    """How much to warm up and sample; the defaults are the full settings."""

    warmup_calls: int = 10
    warmup_ms: float = 200.0
    warmup_cap_calls: int = CAP_CALLS
    warmup_cap_ms: float = CAP_MS
    repeats: int = 100
    blocks: int = MIN_FULL_BLOCKS
    """Blocks per arm: the fixed count, or the sequential rule's cap."""
    stopping: StoppingRule | None = None
    """The sequential rule: stop after the round whose pair decides `compared`'s verdict."""
    compared: tuple[str, str] = ARMS
    """The arms the rule compares, baseline first."""


@attrs.frozen
class Warmup(Plain):
    """What the warm-up did for one arm: its whole curve, and whether it settled."""

    arm: str
    calls: int | None = field(absent=None)
    elapsed_ns: int | None = field(absent=None)
    durations_ns: tuple[int, ...] = ()
    """Every warm-up call's duration, in order: the warm-up curve, not samples (empty before results/4)."""
    settled: bool | None = None
    """Whether the settle rule held when the warm-up ended; None before results/4."""


@attrs.frozen
class LoadReading(Plain):
    """The machine's CPU times at one edge of a block or a load probe (results/4; Linux only)."""

    wall_s: float
    busy_s: float
    steal_s: float
    total_s: float
    self_s: float
    """This process's own CPU time, which is not other work."""
    load1: float


def _clocked(reading: BlockReading) -> bool:
    """Whether a block reading has clocks: every clock key is written, or none."""
    return reading.monotonic_s is not None


@attrs.frozen
class BlockReading(Plain):
    """The reading at one edge of a block: the GPU's clocks (a CUDA run's only) and the machine's load.

    The clock fields are all None where the run read no clocks (`monotonic_s`
    None: not CUDA); a field the driver refused is None, and `missing` says why.
    Numbers keep the type the reading gave them.
    """

    monotonic_s: float | None = field(default=None, when=_clocked)
    sm_clock_mhz: float | None = field(default=None, when=_clocked)
    mem_clock_mhz: float | None = field(default=None, when=_clocked)
    power_w: float | None = field(default=None, when=_clocked)
    clock_event_reasons: int | None = field(default=None, when=_clocked)
    """NVML's clock-event bitmask (`perfdsl.runtime.environment.CLOCK_EVENT_REASONS`)."""
    temperature_c: float | None = field(default=None, when=_clocked)
    missing: str | None = field(default=None, when=_clocked)
    """Why a clock field is None, as the run said it."""
    load: LoadReading | None = field(default=None, flat=True)
    """None where the reading has no load (not Linux, or before results/4): its keys are the
    reading's own, and a reading without every one of them has none."""


NO_READING = BlockReading()
"""A block edge with nothing read (the application's request blocks, a reading hook left out)."""


@attrs.frozen
class Block(Plain):
    """One block of the interleaved order: which arm, where it fell, and the readings at its edges."""

    ABSENT = EMPTY

    index: int | None
    """The block's index in the interleaved order: the sample CSV's `block`."""
    arm: str
    arm_block: int | None
    """The arm's own count of blocks: 0, 1, ..."""
    start: BlockReading = field(absent=NO_READING)
    end: BlockReading = field(absent=NO_READING)
    samples: int | None
    """Timed calls in the block; a kernel shape's block log leaves it out (the CSV has the samples)."""
    failed: bool


def regime(working_set_bytes: int, cache_target_bytes: int) -> str:
    """The cache regime of a working set: DRAM when it exceeds the cache target, else CACHE."""
    return DRAM if working_set_bytes > cache_target_bytes else CACHE


@attrs.frozen
class Rotation(Plain):
    """How an arm's buffer sets compare with the cache they must defeat."""

    arm: str
    sets: int
    set_bytes: int
    cache_target_bytes: int
    read_share: float | None = None
    read_share_source: str = ""
    scratch_bytes: int = 0
    scratch_cached: bool = False
    """Whether that scratch fits in a cache that is not flushed between calls."""
    compulsory_bytes: int | None = field(
        default=None, when=lambda rotation: rotation.compulsory_bytes is not None
    )
    """`set_bytes` less the inputs the variant reads only in part (`Variant.sparse_inputs`, results/13):
    the traffic no call can avoid. Written only where a variant declares some; None: all of `set_bytes`."""
    allocations: int = field(default=1, when=lambda rotation: rotation.allocations != 1)
    """How many arms' allocations of `sets` buffer sets this arm's blocks took turns on (results/14:
    `runtime.timing.Arm.allocation_of`); 1, and not written: only its own."""

    @property
    def unavoidable_bytes(self) -> int:
        """The bytes no call of this arm can avoid moving: its buffers, less any it reads only in part."""
        return self.set_bytes if self.compulsory_bytes is None else self.compulsory_bytes

    @property
    def exceeds_cache(self) -> bool:
        """Whether all sets together are larger than the cache (the samples are cold)."""
        return self.sets * self.set_bytes > self.cache_target_bytes

    @property
    def regime(self) -> str:
        """DRAM when the rotated working set exceeds the cache target, else cache-resident;
        MIXED when it exceeds it but the reused scratch stays in the cache."""
        found = regime(self.sets * self.set_bytes, self.cache_target_bytes)
        return MIXED if found == DRAM and self.scratch_cached else found

    @property
    def buffer_bytes(self) -> int:
        """What the arm's buffers cost in memory: every set, inputs and outputs."""
        return self.sets * self.set_bytes


@attrs.frozen
class SamplerFailure(Plain):
    """A call that raised (its arm stops there), or an arm left out because its code ended the worker."""

    ABSENT = EMPTY

    arm: str
    phase: str
    """"warmup", "block", "overhead", or WORKER_PHASE (`perfdsl.bundle.results`)."""
    block: int | None
    position: int | None
    message: str


def _per_arm(name: str) -> Any:
    """A per-arm map of the rotation's `name`, as results.json carries it beside the rotation itself."""
    return lambda record: {r.arm: getattr(r, name) for r in record.rotation}


@attrs.frozen
class TimingRecord(Plain):
    """Everything the sampler measured at one shape but the samples themselves (those are the CSV).

    results.json carries, beside the rotation, per-arm maps of it (`set_bytes`,
    `exceeds_cache`, `regime`, `buffer_bytes`, `read_share`,
    `read_share_source`): the runtime's record fills them from its rotation, and
    a reader takes them as the file has them (an older bundle lacks the later
    maps, and judges no regime).
    """

    ABSENT = EMPTY
    DERIVED = ("full",)

    target: str
    timings_valid: bool
    flushed: bool
    """Whether the cache was flushed before every timed call."""
    settings: TimingSettings = field(absent=TimingSettings())
    arms: tuple[str, ...]
    order: tuple[str, ...]
    blocks: tuple[Block, ...] = field(leave_out=("samples",))
    """A shape's block log never carried the blocks' sample counts (the CSV has the samples);
    the application's does. Kept so, for the bytes of results/1-8."""
    warmup: tuple[Warmup, ...]
    rotation: tuple[Rotation, ...]
    failures: tuple[SamplerFailure, ...]
    stop: StopRecord | None = None
    """When and why the sequential rule stopped the blocks (None: the fixed design)."""
    set_bytes: dict[str, int] = field(
        default=attrs.Factory(_per_arm("set_bytes"), takes_self=True), absent=EMPTY
    )
    """Bytes each arm's buffer set moves per call (the bandwidth numerator)."""
    exceeds_cache: dict[str, bool] = field(
        default=attrs.Factory(_per_arm("exceeds_cache"), takes_self=True), absent=EMPTY
    )
    regime: dict[str, str] = field(default=attrs.Factory(_per_arm("regime"), takes_self=True), absent=EMPTY)
    """Arm -> DRAM, CACHE or MIXED (results/4)."""
    buffer_bytes: dict[str, int] = field(
        default=attrs.Factory(_per_arm("buffer_bytes"), takes_self=True), absent=EMPTY
    )
    read_share: dict[str, float | None] = field(
        default=attrs.Factory(_per_arm("read_share"), takes_self=True), absent=EMPTY
    )
    read_share_source: dict[str, str] = field(
        default=attrs.Factory(_per_arm("read_share_source"), takes_self=True), absent=EMPTY
    )

    @property
    def full(self) -> bool:
        """Whether each arm was given at least MIN_FULL_BLOCKS blocks."""
        return self.settings.blocks >= MIN_FULL_BLOCKS

    def failure_of(self, arm: str) -> str | None:
        """Why `arm` stopped at this shape (its call raised, or its code ended the worker), if it did."""
        return next((f.message for f in self.failures if f.arm == arm), None)


@attrs.frozen
class ApplicationTiming(Plain):
    """The application's request timing beside its CSV: the block log, the calls that raised, the stop."""

    ABSENT = EMPTY

    blocks: tuple[Block, ...]
    failures: tuple[SamplerFailure, ...]
    stop: StopRecord | None = None
    """When and why the sequential rule stopped the request blocks (results/8; None: fixed design)."""
