"""The sampler's warm-ups and block log read back from the JSON the runtime writes."""

from __future__ import annotations

import attrs

from perfdsl.bundle.sampling import BlockReading, BlockRecord, LoadReading, WarmupRecord
from perfdsl.runtime.contention import read_load
from perfdsl.runtime.environment import ClockReading
from perfdsl.runtime.timing import Block
from perfdsl.runtime.warmup import Warmup

_LOAD = {"wall_s": 10.0, "busy_s": 4.0, "steal_s": 0.0, "total_s": 16.0, "self_s": 2.0, "load1": 1.5}


def test_every_field_the_runtime_writes_has_a_field_in_the_record():
    # A writer's new or renamed field must not silently read as "not recorded".
    assert set(attrs.fields_dict(Block)) == set(attrs.fields_dict(BlockRecord))
    assert set(attrs.fields_dict(Warmup)) == set(attrs.fields_dict(WarmupRecord))
    clock = set(attrs.fields_dict(ClockReading))
    assert clock | {"load"} == set(attrs.fields_dict(BlockReading))
    assert set(read_load() or _LOAD) == set(attrs.fields_dict(LoadReading))


def test_a_cuda_block_reads_its_clocks_and_load_at_both_ends():
    start = {**attrs.asdict(ClockReading(1.0, 1980, 2619, 310.5, 0x4, 61, None)), **_LOAD}
    end = {**start, "sm_clock_mhz": 1755, "clock_event_reasons": 0x1, "wall_s": 11.0}
    block = BlockRecord.from_json(attrs.asdict(Block(7, "change", 3, start, end, 50, True)))
    assert (block.index, block.arm, block.arm_block) == (7, "change", 3)
    assert block.samples == 50 and block.failed
    assert (block.start.sm_clock_mhz, block.end.sm_clock_mhz) == (1980, 1755)
    assert (block.start.clock_event_reasons, block.end.clock_event_reasons) == (0x4, 0x1)
    assert block.start.power_w == 310.5 and block.start.temperature_c == 61
    assert block.start.load is not None and block.end.load is not None
    assert attrs.asdict(block.start.load) == _LOAD
    assert block.end.load.wall_s == 11.0


def test_a_reading_without_every_load_field_has_no_load_and_unread_clocks_are_none():
    no_nvml = attrs.asdict(ClockReading(1.0, None, None, None, None, None, "nvidia-ml-py not installed"))
    partial = {**no_nvml, **_LOAD, "load1": None}
    block = BlockRecord.from_json({"index": 0, "arm": "baseline", "start": partial, "end": "garbled"})
    assert block.start.load is None and block.end.load is None
    assert block.start.sm_clock_mhz is None and block.start.missing == "nvidia-ml-py not installed"
    assert block.end == BlockReading(None, None, None, None, None, None, None, None)


def test_a_warm_up_keeps_its_curve_and_an_old_one_is_not_judged():
    written = attrs.asdict(Warmup("baseline", 12, 3_000_000, (900, 400, 300), settled=False))
    warm = WarmupRecord.from_json(written)
    assert warm == WarmupRecord("baseline", 12, 3_000_000, (900, 400, 300), False)
    old = WarmupRecord.from_json({"arm": "change", "calls": 10, "elapsed_ns": 5})
    assert old.settled is None and old.durations_ns == ()
