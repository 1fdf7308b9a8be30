"""The interleaved block sampler: every raw timing sample of baseline and change.

The procedure (research/measurement.md §5.1):

* **Warm-up** until the timing has settled (`perfdsl.runtime.warmup`): arms
  take turns, one call each, for at least `warmup_calls` calls and `warmup_ms`,
  then until each arm's latest two windows of calls agree, up to a cap, so JIT
  compilation, first-touch allocation, the thread pool's start and clock ramp-up
  stay out of the samples. The warm-up curve is kept; it is not samples.
* **Blocks**, the statistical unit: `repeats` timed calls of one arm in a row,
  rotating over its buffer sets so consecutive calls touch different memory.
* **Interleaving** in rounds that alternate forward and reversed arm order:
  A B | B A | A B | ..., i.e. ABBA, so a linear drift falls equally on both arms.
* **Overhead**: an empty call timed the same way, in one block before and one
  after the sampled blocks, so the evaluator can tell when a kernel is launch-bound.
* **Nothing is dropped**: every sample is kept with its validity flag; a call
  that raises becomes a Failure for its arm, which then stops while the others go on.
* **Stopping**: the fixed design runs `blocks` rounds. Under a sequential rule
  (`TimingSettings.stopping`), `blocks` is the cap, and after each round (one
  more baseline/change pair) the rule looks at the pairs so far and may stop
  the rounds there (`perfdsl.runtime.sequential`); the record says when and why.

The garbage collector is paused inside each block (as `timeit` does) and run
between blocks, outside the timed calls; the objects alive when the blocks
begin are frozen out of those collections (`collector.survivors_frozen`), so
each one costs microseconds rather than a rescan of everything numba loaded.
"""

from __future__ import annotations

import gc
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from perfdsl.bundle.arms import ARMS, EMPTY_ARM
from perfdsl.bundle.sampling import SAMPLE_COLUMNS, Sample
from perfdsl.bundle.stopping import StoppingRule, StopRecord
from perfdsl.collector import collector_paused, survivors_frozen
from perfdsl.kernel import Reference, Shape, Variant
from perfdsl.runtime.sequential import Watch
from perfdsl.runtime.targets import Target
from perfdsl.runtime.warmup import CAP_CALLS, CAP_MS, Warmup, WarmupPolicy, warm_up

MIN_FULL_BLOCKS = 10
"""Blocks per arm below which a run is a reduced (smoke) run, not evidence-grade."""
MAX_BUFFER_SETS = 256
"""Rotation stops growing here; a tiny shape then fits in cache and says so."""
DRAM = "dram"
CACHE = "cache"
MIXED = "mixed"
"""The regimes a shape's arm runs in: its rotated working set exceeds the cache
the target must defeat (every call reads device memory), or it fits there; or
its buffers exceed it while the scratch it reuses on every call fits in a cache
that is not flushed between calls (part of its traffic is cache traffic)."""

BlockHook = Callable[[], Mapping[str, Any]]


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

    @property
    def warmup_policy(self) -> WarmupPolicy:
        """The settle rule with these settings' floor and cap."""
        return WarmupPolicy(
            min_calls=self.warmup_calls,
            min_ms=self.warmup_ms,
            cap_calls=max(self.warmup_cap_calls, self.warmup_calls),
            cap_ms=max(self.warmup_cap_ms, self.warmup_ms),
        )


@attrs.frozen
class Arm:
    """One implementation ready to time: a no-argument call per buffer set."""

    name: str
    calls: tuple[Callable[[], None], ...]
    set_bytes: int = 0
    """Bytes one buffer set occupies (inputs and outputs), for the cache check."""
    read_share: float | None = None
    """The share of the bytes this arm moves that are reads (see `Variant.read_share`)."""
    read_share_source: str = ""
    """Where `read_share` comes from, in words, for the report."""
    scratch_bytes: int = 0
    """Scratch the variant reuses on every call (`Variant.scratch_bytes`), not rotated."""


@attrs.frozen
class Block:
    """One block: which arm, where it fell in the order, and the hook's readings."""

    index: int
    arm: str
    arm_block: int
    """The arm's own count of blocks: 0, 1, ..."""
    start: Mapping[str, Any]
    end: Mapping[str, Any]
    samples: int
    failed: bool


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


def regime(working_set_bytes: int, cache_target_bytes: int) -> str:
    """The cache regime of a working set: DRAM when it exceeds the cache target, else CACHE."""
    return DRAM if working_set_bytes > cache_target_bytes else CACHE


@attrs.frozen
class Failure:
    """A call that raised: the arm stops there."""

    arm: str
    phase: str
    """"warmup", "block" or "overhead"."""
    block: int | None
    position: int | None
    message: str


@attrs.frozen
class TimingRecord:
    """Everything the sampler measured, raw."""

    target: str
    timings_valid: bool
    flushed: bool
    """Whether the cache was flushed before every timed call."""
    settings: TimingSettings
    arms: tuple[str, ...]
    order: tuple[str, ...]
    samples: tuple[Sample, ...]
    blocks: tuple[Block, ...]
    warmup: tuple[Warmup, ...]
    rotation: tuple[Rotation, ...]
    overhead: tuple[Sample, ...]
    failures: tuple[Failure, ...]
    stop: StopRecord | None = None
    """When and why the sequential rule stopped the blocks (None: the fixed design)."""

    @property
    def full(self) -> bool:
        """Whether each arm was given at least MIN_FULL_BLOCKS blocks."""
        return self.settings.blocks >= MIN_FULL_BLOCKS

    def rows(self) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
        """A CSV header and one row per sample, overhead samples included."""
        return SAMPLE_COLUMNS, [s.row() for s in (*self.samples, *self.overhead)]


def block_order(arms: Sequence[str], blocks: int) -> tuple[str, ...]:
    """Rounds alternating forward and reversed arm order: A B B A A B B A ... for two arms."""
    order: list[str] = []
    for round_ in range(blocks):
        order.extend(arms if round_ % 2 == 0 else reversed(arms))
    return tuple(order)


def rotation_sets(set_bytes: int, cache_target_bytes: int, requested: int) -> int:
    """Buffer sets to rotate over: at least `requested`, and enough to exceed the cache.

    Capped at MAX_BUFFER_SETS (or `requested`, if larger): below that cap a tiny
    shape cannot defeat the cache, and Rotation.exceeds_cache records it.
    """
    sets = max(requested, 1)
    if set_bytes > 0 and cache_target_bytes > 0:
        sets = max(sets, cache_target_bytes // set_bytes + 1)
    return min(sets, max(MAX_BUFFER_SETS, requested))


def seeded_rng(seed: int, shape: Shape, *extra: int) -> np.random.Generator:
    """The generator for (seed, shape, ...): the same data for every variant and target."""
    return np.random.default_rng([seed, *(int(shape[k]) for k in sorted(shape)), *extra])


def prepare_arms(
    target: Target,
    reference: Reference,
    variants: Sequence[Variant],
    shape: Shape,
    dtype: Any,
    requested_sets: int,
    seed: int = 0,
) -> tuple[Arm, ...]:
    """Draw the rotated input sets once and bind each variant to its own copies of them.

    Every variant sees the same input data; each gets its own device copies and
    outputs, so one arm's writes never land in the other's cache lines.
    """
    dtype = np.dtype(dtype)
    out_shapes = reference.outputs(shape)
    first = reference.inputs(shape, seeded_rng(seed, shape, 0), dtype)
    read_bytes = sum(np.asarray(a).nbytes for a in first.values())
    set_bytes = read_bytes + sum(math.prod(s) * dtype.itemsize for s in out_shapes.values())
    sets = rotation_sets(set_bytes, target.rotation_bytes(), requested_sets)
    host_sets = [first] + [reference.inputs(shape, seeded_rng(seed, shape, i), dtype) for i in range(1, sets)]
    arms = []
    for variant in variants:
        calls = []
        for host in host_sets:
            arrays = {**target.to_device(host), **target.alloc(out_shapes, dtype)}
            calls.append(target.bind(variant, arrays))
        share, source = _read_share(variant, read_bytes, set_bytes)
        scratch = int(variant.scratch_bytes(shape)) if variant.scratch_bytes else 0
        arms.append(Arm(variant.name, tuple(calls), set_bytes, share, source, scratch))
    return tuple(arms)


def _read_share(variant: Variant, read_bytes: int, set_bytes: int) -> tuple[float | None, str]:
    """The variant's declared read share, else its buffers' (inputs read once, outputs written once)."""
    if variant.read_share is not None:
        return variant.read_share, f"declared by `{variant.name}`"
    if set_bytes <= 0:
        return None, "no buffers"
    return read_bytes / set_bytes, "from its buffers: each input read once, each output written once"


def sample(
    target: Target,
    arms: Sequence[Arm],
    settings: TimingSettings,
    on_block: BlockHook | None = None,
) -> TimingRecord:
    """Warm up, then time interleaved blocks of every arm, keeping every sample.

    `on_block` is called at the start and at the end of every block (outside the
    timed calls); what it returns is stored with the block. An exception it
    raises is the harness's own bug and propagates.
    """
    names = tuple(a.name for a in arms)
    if len(set(names)) != len(names) or EMPTY_ARM in names:
        raise ValueError(f"arm names must be distinct and not {EMPTY_ARM!r}: {names}")
    by_name = {a.name: a for a in arms}
    cursor = dict.fromkeys((*names, EMPTY_ARM), 0)
    failures: list[Failure] = []
    failed: set[str] = set()

    def timed(arm: Arm) -> tuple[int, Any]:
        buffer_set = cursor[arm.name] % len(arm.calls)
        cursor[arm.name] += 1
        return buffer_set, target.time(arm.calls[buffer_set])

    def warm_failure(name: str, calls: int, error: BaseException) -> None:
        failures.append(Failure(name, "warmup", None, calls, describe_error(error)))
        failed.add(name)

    warmups = warm_up(names, lambda name: timed(by_name[name])[1], settings.warmup_policy, warm_failure)
    empty = Arm(EMPTY_ARM, (target.empty_call(),))
    overhead: list[Sample] = []
    _overhead_block(0, empty, settings, timed, overhead, failures, warm=True)

    # Every object alive now lives for the whole run: the collection before each block skips them.
    with survivors_frozen():
        order = block_order(names, settings.blocks)
        samples: list[Sample] = []
        blocks: list[Block] = []
        arm_blocks = dict.fromkeys(names, 0)
        watch = _watch(settings, names)
        for index, name in enumerate(order):
            if watch is not None and index % len(names) == 0 and index and _stops(watch, failed):
                order = order[:index]
                break
            if name in failed:
                continue
            arm = by_name[name]
            gc.collect()
            start = dict(on_block()) if on_block else {}
            count = 0
            with collector_paused():
                for position in range(settings.repeats):
                    try:
                        buffer_set, result = timed(arm)
                    except Exception as error:
                        failures.append(Failure(name, "block", index, position, describe_error(error)))
                        failed.add(name)
                        break
                    samples.append(
                        Sample(name, index, position, buffer_set, result.duration_ns, result.valid)
                    )
                    count += 1
            end = dict(on_block()) if on_block else {}
            blocks.append(Block(index, name, arm_blocks[name], start, end, count, name in failed))
            arm_blocks[name] += 1
            if watch is not None:
                watch.block(name, index, [s.duration_ns for s in samples[len(samples) - count :]])
        if watch is not None and len(order) == len(names) * settings.blocks:
            watch.decided()  # the last round's look: decided, or the cap

    _overhead_block(1, empty, settings, timed, overhead, failures, warm=False)
    cache_target = target.rotation_bytes()
    rotation = tuple(
        Rotation(
            a.name,
            len(a.calls),
            a.set_bytes,
            cache_target,
            a.read_share,
            a.read_share_source,
            a.scratch_bytes,
            scratch_cached=not target.flushes_cache and 0 < a.scratch_bytes <= target.cache_bytes(),
        )
        for a in arms
    )
    return TimingRecord(
        target=target.name,
        timings_valid=target.timings_valid,
        flushed=target.flushes_cache,
        settings=settings,
        arms=names,
        order=order,
        samples=tuple(samples),
        blocks=tuple(blocks),
        warmup=warmups,
        rotation=rotation,
        overhead=tuple(overhead),
        failures=tuple(failures),
        stop=watch.record() if watch is not None else None,
    )


def _watch(settings: TimingSettings, names: Sequence[str]) -> Watch | None:
    """A watch on the compared arms when a sequential rule is set and both are sampled."""
    if settings.stopping is None or not set(settings.compared) <= set(names):
        return None
    return Watch(settings.stopping, *settings.compared)


def _stops(watch: Watch, failed: set[str]) -> bool:
    """Whether the rounds end before the next one: the rule stopped, or a compared arm failed
    (the other arms are measured only beside the comparison)."""
    return watch.decided() or any(arm in failed for arm in watch.arms)


def _overhead_block(
    index: int,
    empty: Arm,
    settings: TimingSettings,
    timed: Callable[[Arm], tuple[int, Any]],
    out: list[Sample],
    failures: list[Failure],
    *,
    warm: bool,
) -> None:
    """Time the empty call `repeats` times (after `warmup_calls` untimed ones if `warm`)."""
    try:
        for _ in range(settings.warmup_calls if warm else 0):
            timed(empty)
        for position in range(settings.repeats):
            buffer_set, result = timed(empty)
            out.append(Sample(EMPTY_ARM, index, position, buffer_set, result.duration_ns, result.valid))
    except Exception as error:
        failures.append(Failure(EMPTY_ARM, "overhead", index, None, describe_error(error)))


def describe_error(error: BaseException) -> str:
    """An exception as one line: its type and the first line of its message."""
    first_line = (str(error).splitlines() or [""])[0]
    return f"{type(error).__name__}: {first_line}" if first_line else type(error).__name__
