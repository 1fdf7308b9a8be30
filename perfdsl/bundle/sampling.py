"""The sampler's records: what `perfdsl.runtime.timing.sample` builds and results.json holds.

Every timed call is one `Sample`, a row of `samples/<operation>/<shape>.csv`
(or `samples/application.csv`) under SAMPLE_COLUMNS; `read_sample_csv` reads
them back. Everything else the sampler measured is one `TimingRecord`, a
shape's `timing` in results.json (the application's request blocks keep
`ApplicationTiming`, its block log): its settings, warm-ups, blocks with the
readings at their edges, the rotation of buffer sets and the calls that raised.

The runtime constructs these records and the bundle writes them (`to_json`), so
a field is declared once, here, and the writer and every reader agree on its
key by construction. The keys are those the runtime wrote before these records
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
from perfdsl.bundle.stopping import StoppingRule, StopRecord
from perfdsl.bundle.versions import BundleFormatError

SAMPLE_COLUMNS = ("arm", "block", "position", "buffer_set", "duration_ns", "valid")
"""The sample CSV's header, in `Sample`'s field order."""
_LOAD_FIELDS = ("wall_s", "busy_s", "steal_s", "total_s", "self_s", "load1")
"""`LoadReading`'s fields, every one needed to judge a block."""
_CLOCK_FIELDS = (
    "monotonic_s",
    "sm_clock_mhz",
    "mem_clock_mhz",
    "power_w",
    "clock_event_reasons",
    "temperature_c",
    "missing",
)
"""The clock part of a block reading, as a CUDA run writes it."""

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
class TimingSettings:
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

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self, recurse=False)
        data["stopping"] = None if self.stopping is None else self.stopping.to_json()
        data["compared"] = list(self.compared)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TimingSettings:
        """The recorded settings; a key an older bundle lacks keeps its default."""
        known = {f.name for f in attrs.fields(cls)} - {"stopping", "compared"}
        stopping, compared = data.get("stopping"), data.get("compared")
        return cls(
            **{k: v for k, v in data.items() if k in known},
            stopping=StoppingRule.from_json(stopping) if stopping else None,
            compared=tuple(compared) if compared else ARMS,
        )


@attrs.frozen
class Warmup:
    """What the warm-up did for one arm: its whole curve, and whether it settled."""

    arm: str
    calls: int | None
    elapsed_ns: int | None
    durations_ns: tuple[int, ...] = ()
    """Every warm-up call's duration, in order: the warm-up curve, not samples (empty before results/4)."""
    settled: bool | None = None
    """Whether the settle rule held when the warm-up ended; None before results/4."""

    def to_json(self) -> dict[str, Any]:
        return {**attrs.asdict(self), "durations_ns": list(self.durations_ns)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Warmup:
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
    """The machine's CPU times at one edge of a block or a load probe (results/4; Linux only)."""

    wall_s: float
    busy_s: float
    steal_s: float
    total_s: float
    self_s: float
    """This process's own CPU time, which is not other work."""
    load1: float

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> LoadReading | None:
        """The load part of a reading, or None unless every field is a number."""
        values = [data.get(name) for name in _LOAD_FIELDS]
        if not all(_is_number(v) for v in values):
            return None
        return cls(*values)


@attrs.frozen
class BlockReading:
    """The reading at one edge of a block: the GPU's clocks (a CUDA run's only) and the machine's load.

    The clock fields are all None where the run read no clocks (`monotonic_s`
    None: not CUDA); a field the driver refused is None, and `missing` says why.
    Numbers keep the type the reading gave them.
    """

    monotonic_s: float | None = None
    sm_clock_mhz: float | None = None
    mem_clock_mhz: float | None = None
    power_w: float | None = None
    clock_event_reasons: int | None = None
    """NVML's clock-event bitmask (`perfdsl.runtime.environment.CLOCK_EVENT_REASONS`)."""
    temperature_c: float | None = None
    missing: str | None = None
    """Why a clock field is None, as the run said it."""
    load: LoadReading | None = None
    """None where the reading has no load (not Linux, or before results/4)."""

    def to_json(self) -> dict[str, Any]:
        """One flat object: the clock keys where clocks were read, the load's keys where it was."""
        clocks = {name: getattr(self, name) for name in _CLOCK_FIELDS} if self.monotonic_s is not None else {}
        return {**clocks, **(self.load.to_json() if self.load is not None else {})}

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


NO_READING = BlockReading()
"""A block edge with nothing read (the application's request blocks, a reading hook left out)."""


@attrs.frozen
class Block:
    """One block of the interleaved order: which arm, where it fell, and the readings at its edges."""

    index: int | None
    """The block's index in the interleaved order: the sample CSV's `block`."""
    arm: str
    arm_block: int | None
    """The arm's own count of blocks: 0, 1, ..."""
    start: BlockReading
    end: BlockReading
    samples: int | None
    failed: bool

    def to_json(self) -> dict[str, Any]:
        return {**attrs.asdict(self, recurse=False), "start": self.start.to_json(), "end": self.end.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Block:
        return cls(
            index=_integer(data.get("index")),
            arm=str(data.get("arm")),
            arm_block=_integer(data.get("arm_block")),
            start=BlockReading.from_json(data.get("start")),
            end=BlockReading.from_json(data.get("end")),
            samples=_integer(data.get("samples")),
            failed=bool(data.get("failed")),
        )


def regime(working_set_bytes: int, cache_target_bytes: int) -> str:
    """The cache regime of a working set: DRAM when it exceeds the cache target, else CACHE."""
    return DRAM if working_set_bytes > cache_target_bytes else CACHE


@attrs.frozen
class Rotation:
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

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Rotation:
        known = {f.name for f in attrs.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@attrs.frozen
class SamplerFailure:
    """A call that raised (its arm stops there), or an arm left out because its code ended the worker."""

    arm: str
    phase: str
    """"warmup", "block", "overhead", or WORKER_PHASE (`perfdsl.bundle.results`)."""
    block: int | None
    position: int | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SamplerFailure:
        return cls(
            arm=str(data.get("arm")),
            phase=str(data.get("phase", "")),
            block=_integer(data.get("block")),
            position=_integer(data.get("position")),
            message=str(data.get("message", "")),
        )


_PER_ARM = ("set_bytes", "exceeds_cache", "regime", "buffer_bytes", "read_share", "read_share_source")


def _per_arm(name: str) -> Any:
    """A per-arm map of the rotation's `name`, as results.json carries it beside the rotation itself."""
    return lambda record: {r.arm: getattr(r, name) for r in record.rotation}


@attrs.frozen
class TimingRecord:
    """Everything the sampler measured at one shape but the samples themselves (those are the CSV).

    results.json carries, beside the rotation, per-arm maps of it (`set_bytes`,
    `exceeds_cache`, `regime`, `buffer_bytes`, `read_share`,
    `read_share_source`): the runtime's record fills them from its rotation, and
    a reader takes them as the file has them (an older bundle lacks the later
    maps, and judges no regime).
    """

    target: str
    timings_valid: bool
    flushed: bool
    """Whether the cache was flushed before every timed call."""
    settings: TimingSettings
    arms: tuple[str, ...]
    order: tuple[str, ...]
    blocks: tuple[Block, ...]
    warmup: tuple[Warmup, ...]
    rotation: tuple[Rotation, ...]
    failures: tuple[SamplerFailure, ...]
    stop: StopRecord | None = None
    """When and why the sequential rule stopped the blocks (None: the fixed design)."""
    set_bytes: dict[str, int] = attrs.field(default=attrs.Factory(_per_arm("set_bytes"), takes_self=True))
    """Bytes each arm's buffer set moves per call (the bandwidth numerator)."""
    exceeds_cache: dict[str, bool] = attrs.field(
        default=attrs.Factory(_per_arm("exceeds_cache"), takes_self=True)
    )
    regime: dict[str, str] = attrs.field(default=attrs.Factory(_per_arm("regime"), takes_self=True))
    """Arm -> DRAM, CACHE or MIXED (results/4)."""
    buffer_bytes: dict[str, int] = attrs.field(
        default=attrs.Factory(_per_arm("buffer_bytes"), takes_self=True)
    )
    read_share: dict[str, float | None] = attrs.field(
        default=attrs.Factory(_per_arm("read_share"), takes_self=True)
    )
    read_share_source: dict[str, str] = attrs.field(
        default=attrs.Factory(_per_arm("read_share_source"), takes_self=True)
    )

    @property
    def full(self) -> bool:
        """Whether each arm was given at least MIN_FULL_BLOCKS blocks."""
        return self.settings.blocks >= MIN_FULL_BLOCKS

    def failure_of(self, arm: str) -> str | None:
        """Why `arm` stopped at this shape (its call raised, or its code ended the worker), if it did."""
        return next((f.message for f in self.failures if f.arm == arm), None)

    def to_json(self) -> dict[str, Any]:
        return {
            **attrs.asdict(self, recurse=False),
            "full": self.full,
            "settings": self.settings.to_json(),
            "arms": list(self.arms),
            "order": list(self.order),
            # A shape's block log never carried the blocks' sample counts (the CSV has the
            # samples); the application's does. Kept so, for the bytes of results/1-8.
            "blocks": [{k: v for k, v in b.to_json().items() if k != "samples"} for b in self.blocks],
            "warmup": [w.to_json() for w in self.warmup],
            "rotation": [r.to_json() for r in self.rotation],
            "failures": [f.to_json() for f in self.failures],
            "stop": None if self.stop is None else self.stop.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TimingRecord:
        stop = data.get("stop")
        return cls(
            target=str(data.get("target", "")),
            timings_valid=bool(data.get("timings_valid", False)),
            flushed=bool(data.get("flushed", False)),
            settings=TimingSettings.from_json(data.get("settings") or {}),
            arms=tuple(data.get("arms") or ()),
            order=tuple(data.get("order") or ()),
            blocks=tuple(Block.from_json(b) for b in data.get("blocks") or ()),
            warmup=tuple(Warmup.from_json(w) for w in data.get("warmup") or ()),
            rotation=tuple(Rotation.from_json(r) for r in data.get("rotation") or ()),
            failures=tuple(SamplerFailure.from_json(f) for f in data.get("failures") or ()),
            stop=StopRecord.from_json(stop) if stop else None,
            **{key: dict(data.get(key) or {}) for key in _PER_ARM},
        )


@attrs.frozen
class ApplicationTiming:
    """The application's request timing beside its CSV: the block log, the calls that raised, the stop."""

    blocks: tuple[Block, ...]
    failures: tuple[SamplerFailure, ...]
    stop: StopRecord | None = None
    """When and why the sequential rule stopped the request blocks (results/8; None: fixed design)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "blocks": [b.to_json() for b in self.blocks],
            "failures": [f.to_json() for f in self.failures],
            "stop": None if self.stop is None else self.stop.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ApplicationTiming:
        stop = data.get("stop")
        return cls(
            blocks=tuple(Block.from_json(b) for b in data.get("blocks") or ()),
            failures=tuple(SamplerFailure.from_json(f) for f in data.get("failures") or ()),
            stop=StopRecord.from_json(stop) if stop else None,
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float)


def _number(value: Any) -> float | None:
    return value if _is_number(value) else None


def _integer(value: Any) -> int | None:
    return int(value) if _is_number(value) else None
