"""The interleaved block sampler: every raw timing sample of baseline and change.

The procedure (research/measurement.md §5.1):

* **Warm-up** until the timing has settled (`perfdsl.runtime.warmup`): arms
  take turns, one call each, for at least `warmup_calls` calls and `warmup_ms`,
  then until each arm's latest two windows of calls agree, up to a cap, so JIT
  compilation, first-touch allocation, the thread pool's start and clock ramp-up
  stay out of the samples. The warm-up curve is kept; it is not samples.
* **Blocks**, the statistical unit: `repeats` timed calls of one arm in a row,
  rotating over its buffer sets so consecutive calls touch different memory.
* **Allocations**: the arms prepared together each allocate their buffer sets
  once and take turns on each other's, block by block (`Arm.allocation_of`), so
  that where one allocation landed in memory is no arm's bias.
* **Interleaving** in rounds that alternate forward and reversed arm order:
  A B | B A | A B | ..., i.e. ABBA, so a linear drift falls equally on both arms.
* **Overhead**: an empty call timed the same way, in one block before and one
  after the sampled blocks, so the evaluator can tell when a kernel is launch-bound.
* **Nothing is dropped**: every sample is kept with its validity flag; a call
  that raises becomes a SamplerFailure for its arm, which then stops while the others go on.
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

from perfdsl.bundle.arms import EMPTY_ARM
from perfdsl.bundle.sampling import (
    NO_READING,
    SAMPLE_COLUMNS,
    Block,
    BlockReading,
    Rotation,
    Sample,
    SamplerFailure,
    TimingRecord,
    TimingSettings,
)
from perfdsl.collector import collector_paused, survivors_frozen
from perfdsl.kernel import Reference, Shape, Variant
from perfdsl.runtime.errors import describe_error
from perfdsl.runtime.sequential import Watch
from perfdsl.runtime.targets import Target
from perfdsl.runtime.warmup import WarmupPolicy, warm_up
from perfdsl.stats.sequential.rule import Look

MAX_BUFFER_SETS = 1024
"""Rotation stops growing here; a tiny shape then fits in cache and says so. At four times
a 32 MiB cache, sets of 128 KiB and more still exceed it."""

BlockHook = Callable[[], BlockReading | None]
"""Called at each block's start and end; what it returns is that edge's reading (None: nothing read)."""
LookHook = Callable[[Look, int], None]
"""Called after each look of a sequential rule that left the comparison open: the look, and the
pairs it would stop at if its ratio and spread held (`Watch.outlook`)."""


def warmup_policy(settings: TimingSettings) -> WarmupPolicy:
    """The settle rule with these settings' floor and cap."""
    return WarmupPolicy(
        min_calls=settings.warmup_calls,
        min_ms=settings.warmup_ms,
        cap_calls=max(settings.warmup_cap_calls, settings.warmup_calls),
        cap_ms=max(settings.warmup_cap_ms, settings.warmup_ms),
    )


@attrs.frozen
class Arm:
    """One implementation ready to time: a no-argument call per buffer set."""

    name: str
    calls: tuple[Callable[[], None], ...]
    """The variant on each of its own buffer sets (`allocations[own]`, where there are several)."""
    set_bytes: int = 0
    """Bytes one buffer set occupies (inputs and outputs), for the cache check."""
    read_share: float | None = None
    """The share of the bytes this arm moves that are reads (see `Variant.read_share`)."""
    read_share_source: str = ""
    """Where `read_share` comes from, in words, for the report."""
    scratch_bytes: int = 0
    """Scratch the variant reuses on every call (`Variant.scratch_bytes`), not rotated."""
    compulsory_bytes: int | None = None
    """The buffer set's bytes less its sparse inputs' (`Variant.sparse_inputs`); None: none declared."""
    renew: Callable[[], None] | None = None
    """Called before each of this arm's blocks, outside the timed calls: an application's
    request prepared afresh, so that where its arrays land is not the arm's for the whole
    run (`runtime.preparation`)."""
    allocations: tuple[tuple[Callable[[], None], ...], ...] = ()
    """The variant bound to the buffer sets of every arm prepared with it, in their order: the
    arms take turns on them (`allocation_of`). Empty: the arm has only its own, `calls`."""
    own: int = 0
    """Which of `allocations` the arm's own buffer sets are."""

    def allocation_of(self, block: int) -> int:
        """The allocation the arm's `block`-th block runs on.

        Each arm's arrays land somewhere in memory once, for the whole run, and where
        they land can move a DRAM-bound kernel's time by several percent, the same in
        every block (benchmarks/allocation_aa.py: A/A ratios of 1.04-1.08 with intervals
        that excluded 1). So the arms prepared together take turns on each other's
        allocations, block by block: in each round every arm is on a different one, and
        consecutive blocks never share one (so no block starts in the cache lines the
        block before it left); over the rounds each arm spends as many blocks on each,
        and where one allocation landed falls on every arm alike, as spread between
        pairs, instead of on its owner's ratio.
        """
        return (self.own + block) % len(self.allocations) if self.allocations else self.own


@attrs.frozen
class Sampled:
    """One sampler call's answer: the shape's `timing` record and the rows of its sample CSV."""

    timing: TimingRecord
    samples: tuple[Sample, ...]
    overhead: tuple[Sample, ...]
    """The empty call's samples, in the blocks before and after the sampled ones."""

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

    Every variant sees the same input data; each allocates its own device copies and
    outputs, and is bound to every variant's allocation (`Arm.allocation_of`).
    """
    dtype = np.dtype(dtype)
    out_shapes = reference.outputs(shape)
    first = reference.inputs(shape, seeded_rng(seed, shape, 0), dtype)
    read_bytes = sum(np.asarray(a).nbytes for a in first.values())
    set_bytes = read_bytes + sum(math.prod(s) * dtype.itemsize for s in out_shapes.values())
    sets = rotation_sets(set_bytes, target.rotation_bytes(), requested_sets)
    host_sets = [first] + [reference.inputs(shape, seeded_rng(seed, shape, i), dtype) for i in range(1, sets)]
    allocations = [
        [{**target.to_device(host), **target.alloc(out_shapes, dtype)} for host in host_sets]
        for _ in variants
    ]
    arms = []
    for own, variant in enumerate(variants):
        bound = tuple(tuple(target.bind(variant, arrays) for arrays in sets) for sets in allocations)
        share, source = _read_share(variant, read_bytes, set_bytes)
        scratch = int(variant.scratch_bytes(shape)) if variant.scratch_bytes else 0
        compulsory = _compulsory_bytes(variant, first, set_bytes)
        arms.append(
            Arm(
                variant.name,
                bound[own],
                set_bytes,
                share,
                source,
                scratch,
                compulsory,
                allocations=bound if len(bound) > 1 else (),
                own=own,
            )
        )
    return tuple(arms)


def _compulsory_bytes(variant: Variant, inputs: Mapping[str, Any], set_bytes: int) -> int | None:
    """The set's bytes less those of the inputs the variant reads only in part; None where it
    declares none. ValueError for a declared name the reference's `inputs` does not return."""
    if not variant.sparse_inputs:
        return None
    unknown = [name for name in variant.sparse_inputs if name not in inputs]
    if unknown:
        raise ValueError(
            f"`{variant.name}` declares sparse_inputs {', '.join(f'`{n}`' for n in unknown)}, which "
            f"the reference's inputs() does not return (it returns {', '.join(f'`{n}`' for n in inputs)})"
        )
    return set_bytes - sum(np.asarray(inputs[name]).nbytes for name in set(variant.sparse_inputs))


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
    on_look: LookHook | None = None,
) -> Sampled:
    """Warm up, then time interleaved blocks of every arm, keeping every sample.

    `on_block` is called at the start and at the end of every block (outside the
    timed calls); the reading it returns is stored with the block. An exception it
    raises is the harness's own bug and propagates. `on_look` hears each look of a
    sequential rule that leaves the comparison open (the progress display's time left).
    """
    names = tuple(a.name for a in arms)
    if len(set(names)) != len(names) or EMPTY_ARM in names:
        raise ValueError(f"arm names must be distinct and not {EMPTY_ARM!r}: {names}")
    by_name = {a.name: a for a in arms}
    cursor = dict.fromkeys((*names, EMPTY_ARM), 0)
    failures: list[SamplerFailure] = []
    failed: set[str] = set()

    def timed(arm: Arm, allocation: int | None = None) -> tuple[int, Any]:
        """The buffer set's number among all the arms' sets (allocation by allocation), and the timing."""
        allocation = arm.own if allocation is None else allocation
        calls = arm.allocations[allocation] if arm.allocations else arm.calls
        position = cursor[arm.name] % len(calls)
        cursor[arm.name] += 1
        return allocation * len(calls) + position, target.time(calls[position])

    def warm_failure(name: str, calls: int, error: BaseException) -> None:
        failures.append(SamplerFailure(name, "warmup", None, calls, describe_error(error)))
        failed.add(name)

    warmups = warm_up(names, lambda name: timed(by_name[name])[1], warmup_policy(settings), warm_failure)
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
            if watch is not None and index % len(names) == 0 and index:
                if _stops(watch, failed):
                    order = order[:index]
                    break
                outlook = watch.outlook()
                if on_look is not None and outlook is not None:
                    on_look(*outlook)
            if name in failed:
                continue
            arm = by_name[name]
            if arm.renew is not None:
                try:
                    arm.renew()
                except Exception as error:
                    failures.append(SamplerFailure(name, "block", index, None, describe_error(error)))
                    failed.add(name)
                    continue
            gc.collect()
            start = (on_block() if on_block else None) or NO_READING
            count = 0
            with collector_paused():
                for position in range(settings.repeats):
                    try:
                        buffer_set, result = timed(arm, arm.allocation_of(arm_blocks[name]))
                    except Exception as error:
                        failures.append(SamplerFailure(name, "block", index, position, describe_error(error)))
                        failed.add(name)
                        break
                    samples.append(
                        Sample(name, index, position, buffer_set, result.duration_ns, result.valid)
                    )
                    count += 1
            end = (on_block() if on_block else None) or NO_READING
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
            compulsory_bytes=a.compulsory_bytes,
            allocations=len(a.allocations) or 1,
        )
        for a in arms
    )
    timing = TimingRecord(
        target=target.name,
        timings_valid=target.timings_valid,
        flushed=target.flushes_cache,
        settings=settings,
        arms=names,
        order=order,
        blocks=tuple(blocks),
        warmup=warmups,
        rotation=rotation,
        failures=tuple(failures),
        stop=watch.record() if watch is not None else None,
    )
    return Sampled(timing, tuple(samples), tuple(overhead))


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
    failures: list[SamplerFailure],
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
        failures.append(SamplerFailure(EMPTY_ARM, "overhead", index, None, describe_error(error)))
