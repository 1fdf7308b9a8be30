"""The sampler's warm-ups and block log read back from the JSON the runtime writes."""

from __future__ import annotations

from pathlib import Path

import attrs

from perfdsl.bundle.arms import EMPTY_ARM
from perfdsl.bundle.files import BundleWriter
from perfdsl.bundle.load import PROBE_COLUMNS, read_probe_csv
from perfdsl.bundle.sampling import (
    SAMPLE_COLUMNS,
    BlockReading,
    BlockRecord,
    LoadReading,
    Sample,
    WarmupRecord,
    read_sample_csv,
)
from perfdsl.runtime.contention import read_load
from perfdsl.runtime.environment import ClockReading
from perfdsl.runtime.timing import Block, TimingRecord, TimingSettings
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


def test_the_sample_csv_header_is_the_sample_records_fields_and_reads_back_as_written(tmp_path: Path):
    assert tuple(attrs.fields_dict(Sample)) == SAMPLE_COLUMNS
    samples = (Sample("baseline", 0, 0, 1, 1200, True), Sample(EMPTY_ARM, 3, 1, 0, 80, False))
    record = TimingRecord(
        "cpu",
        True,
        False,
        TimingSettings(),
        ("baseline",),
        ("baseline",),
        samples[:1],
        (),
        (),
        (),
        samples[1:],
        (),
    )
    with BundleWriter(tmp_path, "study") as bundle:
        bundle.write_csv("samples/op/1x1.csv", *record.rows())
    written = bundle.path / "samples/op/1x1.csv"
    assert written.read_text(encoding="utf-8").splitlines() == [
        "arm,block,position,buffer_set,duration_ns,valid",
        "baseline,0,0,1,1200,1",
        "(empty),3,1,0,80,0",
    ]
    assert read_sample_csv(written) == samples


def test_a_probe_csv_reads_back_every_column_as_written(tmp_path: Path):
    rows = [(10, 11, 12, 20, 1), (30, 31, 33, 90, 0)]
    with BundleWriter(tmp_path, "study") as bundle:
        bundle.write_csv("load/baseline-000.csv", PROBE_COLUMNS, rows)
    columns = read_probe_csv(bundle.path / "load/baseline-000.csv")
    assert list(columns) == list(PROBE_COLUMNS)
    assert [tuple(int(columns[name][i]) for name in PROBE_COLUMNS) for i in range(2)] == rows
