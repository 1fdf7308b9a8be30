"""The interleaved block sampler on the CPU target, with tiny callables that log their calls.

Nothing here asserts how fast anything is: only order, counts and bookkeeping.
"""

from __future__ import annotations

import gc

import attrs
import numpy as np
import pytest
import runtime_fixtures as fx

from perfdsl.bundle.sampling import BlockReading, TimingSettings
from perfdsl.runtime.targets import Target
from perfdsl.runtime.timing import (
    EMPTY_ARM,
    MAX_BUFFER_SETS,
    Arm,
    block_order,
    prepare_arms,
    rotation_sets,
    sample,
    seeded_rng,
)

pytestmark = pytest.mark.slow

SMALL = TimingSettings(warmup_calls=3, warmup_ms=1.0, repeats=4, blocks=3)


def logging_arm(name: str, log: list[tuple[str, int]], sets: int = 1, fail_at: int | None = None):
    """An arm whose call i on buffer set s appends (name, s); raises on call number fail_at."""
    counter = [0]

    def make(s: int):
        def call() -> None:
            counter[0] += 1
            if fail_at is not None and counter[0] >= fail_at:
                raise RuntimeError(f"{name} failed")
            log.append((name, s))

        return call

    return Arm(name, tuple(make(s) for s in range(sets)))


def test_abba_order_and_block_counts():
    log: list[tuple[str, int]] = []
    record = sample(Target(), [logging_arm("A", log), logging_arm("B", log)], SMALL)
    assert record.timing.order == ("A", "B", "B", "A", "A", "B")
    assert [b.arm for b in record.timing.blocks] == list(record.timing.order)
    assert [b.index for b in record.timing.blocks] == list(range(6))
    assert [b.arm_block for b in record.timing.blocks] == [0, 0, 1, 1, 2, 2]
    assert all(b.samples == SMALL.repeats and not b.failed for b in record.timing.blocks)
    # The timed calls happen in exactly that order, block by block, after the warm-up.
    warm = sum(w.calls for w in record.timing.warmup)
    timed = [name for name, _ in log[warm:]]
    assert timed == [arm for arm in record.timing.order for _ in range(SMALL.repeats)]
    assert not record.timing.full and record.timing.timings_valid and record.timing.target == "cpu"
    assert not record.timing.flushed


def test_every_sample_kept_and_warmup_excluded():
    log: list[tuple[str, int]] = []
    record = sample(Target(), [logging_arm("A", log, sets=3), logging_arm("B", log)], SMALL)
    for arm in "AB":
        mine = [s for s in record.samples if s.arm == arm]
        assert len(mine) == SMALL.blocks * SMALL.repeats
        warmup = next(w for w in record.timing.warmup if w.arm == arm)
        assert warmup.calls >= SMALL.warmup_calls
        assert sum(1 for name, _ in log if name == arm) == warmup.calls + len(mine)
        for block in {s.block for s in mine}:
            assert sorted(s.position for s in mine if s.block == block) == [0, 1, 2, 3]
        assert all(s.valid and s.duration_ns >= 0 for s in mine)
    # Rotation continues from where the warm-up stopped and covers every set in turn.
    a_samples = [s for s in record.samples if s.arm == "A"]
    a_warm = next(w for w in record.timing.warmup if w.arm == "A").calls
    assert [s.buffer_set for s in a_samples] == [(a_warm + i) % 3 for i in range(12)]
    header, rows = record.rows()
    assert header[0] == "arm" and len(rows) == len(record.samples) + len(record.overhead)


def test_warmup_lasts_at_least_its_time_bound():
    log: list[tuple[str, int]] = []
    settings = TimingSettings(warmup_calls=1, warmup_ms=30.0, repeats=1, blocks=1)
    record = sample(Target(), [logging_arm("A", log)], settings)
    assert record.timing.warmup[0].elapsed_ns >= 30_000_000
    assert record.timing.warmup[0].calls >= 1


def test_overhead_measured_with_empty_call():
    record = sample(Target(), [logging_arm("A", [])], SMALL)
    assert len(record.overhead) == 2 * SMALL.repeats
    assert {s.arm for s in record.overhead} == {EMPTY_ARM}
    assert {s.block for s in record.overhead} == {0, 1}
    assert all(s.duration_ns >= 0 for s in record.overhead)


def test_block_hook_called_at_start_and_end():
    calls = []

    def hook():
        calls.append(len(calls))
        return BlockReading(monotonic_s=float(len(calls)))

    record = sample(Target(), [logging_arm("A", []), logging_arm("B", [])], SMALL, hook)
    assert len(calls) == 2 * len(record.timing.blocks)
    assert [(b.start.monotonic_s, b.end.monotonic_s) for b in record.timing.blocks] == [
        (2 * i + 1, 2 * i + 2) for i in range(6)
    ]


def test_blocks_collect_garbage_with_the_objects_alive_before_them_frozen_out():
    """A collection before each block rescans only what was made since the blocks began, and
    the objects frozen for the blocks are handed back to the collector after them."""
    frozen: list[int] = []

    def hook() -> dict:
        frozen.append(gc.get_freeze_count())
        return {}

    log: list[tuple[str, int]] = []
    sample(Target(), [logging_arm("A", log), logging_arm("B", log)], SMALL, on_block=hook)
    assert len(frozen) == 2 * 6 and min(frozen) > 1000
    assert gc.get_freeze_count() == 0


def test_raising_call_is_recorded_and_other_arm_continues():
    log: list[tuple[str, int]] = []
    arms = [logging_arm("A", log), logging_arm("B", log, fail_at=6)]
    # Warm-up: exactly 3 calls, its floor and its cap, so the failure falls in the blocks.
    record = sample(Target(), arms, attrs.evolve(SMALL, warmup_ms=0.0, warmup_cap_calls=3))
    (failure,) = record.timing.failures
    assert failure.arm == "B" and failure.phase == "block"
    assert failure.message.startswith("RuntimeError: B failed (at ") and failure.message.endswith(" in call)")
    b_samples = [s for s in record.samples if s.arm == "B"]
    warm_b = next(w for w in record.timing.warmup if w.arm == "B").calls
    assert len(b_samples) == 6 - 1 - warm_b  # the calls before the failing one are kept
    failed_block = next(b for b in record.timing.blocks if b.failed)
    assert failed_block.arm == "B" and failed_block.index == failure.block
    assert failure.position == failed_block.samples
    assert len([s for s in record.samples if s.arm == "A"]) == SMALL.blocks * SMALL.repeats


def test_arm_failing_in_warmup_gets_no_samples():
    arms = [logging_arm("A", []), logging_arm("B", [], fail_at=1)]
    record = sample(Target(), arms, SMALL)
    assert [(f.arm, f.phase) for f in record.timing.failures] == [("B", "warmup")]
    assert not [s for s in record.samples if s.arm == "B"]
    assert [b.arm for b in record.timing.blocks] == ["A"] * SMALL.blocks


def test_distinct_arm_names_required():
    with pytest.raises(ValueError):
        sample(Target(), [logging_arm("A", []), logging_arm("A", [])], SMALL)


def test_block_order_generalises_to_three_arms():
    assert block_order(["A", "B", "C"], 2) == ("A", "B", "C", "C", "B", "A")
    assert block_order(["A", "B"], 4) == tuple("ABBAABBA")


def test_rotation_sets_exceed_cache_up_to_a_cap():
    assert rotation_sets(set_bytes=10, cache_target_bytes=35, requested=2) == 4
    assert rotation_sets(set_bytes=100, cache_target_bytes=35, requested=4) == 4
    assert rotation_sets(set_bytes=1, cache_target_bytes=10**9, requested=4) == MAX_BUFFER_SETS
    assert rotation_sets(set_bytes=1, cache_target_bytes=0, requested=0) == 1


class SmallCacheTarget(Target):
    def rotation_bytes(self) -> int:
        return 1000


def test_prepare_arms_binds_variants_to_shared_input_sets():
    shape = {"M": 2, "N": 8}
    arms = prepare_arms(
        SmallCacheTarget(), fx.reference, [fx.good, fx.off_by_one], shape, np.float32, requested_sets=2
    )
    set_bytes = 4 * (2 * 8 + 8 + 2 * 8)
    assert [a.name for a in arms] == ["good", "off_by_one"]
    assert all(len(a.calls) == 1000 // set_bytes + 1 and a.set_bytes == set_bytes for a in arms)
    record = sample(SmallCacheTarget(), arms, SMALL)
    assert all(r.exceeds_cache for r in record.timing.rotation)
    assert not record.timing.failures


def test_seeded_rng_depends_on_seed_and_shape():
    draw = lambda seed, shape: seeded_rng(seed, shape).standard_normal(4)  # noqa: E731
    assert np.array_equal(draw(1, {"M": 2, "N": 3}), draw(1, {"N": 3, "M": 2}))
    assert not np.array_equal(draw(1, {"M": 2, "N": 3}), draw(2, {"M": 2, "N": 3}))
    assert not np.array_equal(draw(1, {"M": 2, "N": 3}), draw(1, {"M": 3, "N": 2}))
