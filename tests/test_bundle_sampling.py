"""The sampler's records: what the runtime builds is what results.json and the sample CSVs hold."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import attrs
import pytest

from perfdsl.bundle.arms import EMPTY_ARM
from perfdsl.bundle.files import BundleWriter, dumps
from perfdsl.bundle.load import PROBE_COLUMNS, read_probe_csv
from perfdsl.bundle.sampling import (
    NO_READING,
    SAMPLE_COLUMNS,
    ApplicationTiming,
    Block,
    BlockReading,
    LoadReading,
    Rotation,
    Sample,
    SamplerFailure,
    TimingRecord,
    TimingSettings,
    Warmup,
    read_sample_columns,
)
from perfdsl.bundle.stopping import StoppingRule
from perfdsl.runtime.contention import read_load
from perfdsl.runtime.timing import Sampled
from perfdsl.runtime.worker import _block_hook

_LOAD = {"wall_s": 10.0, "busy_s": 4.0, "steal_s": 0.0, "total_s": 16.0, "self_s": 2.0, "load1": 1.5}
_CLOCKS = BlockReading(1.0, 1980, 2619, 310.5, 0x4, 61, None, LoadReading(**_LOAD))
TIMING_KEYS = {
    "arms", "blocks", "buffer_bytes", "exceeds_cache", "failures", "flushed", "full", "order",
    "read_share", "read_share_source", "regime", "rotation", "set_bytes", "settings", "stop",
    "target", "timings_valid", "warmup",
}  # fmt: skip
"""A shape's `timing` keys in results/8, as the runtime wrote them before the records were the bundle's."""


def _timing() -> TimingRecord:
    rotation = (
        Rotation("baseline", 32, 2_113_536, 64 * 2**20, 0.6, "declared", 1_048_832, True),
        Rotation("change", 4, 1024, 64 * 2**20),
    )
    block = Block(0, "baseline", 0, _CLOCKS, attrs.evolve(_CLOCKS, sm_clock_mhz=1755), 5, False)
    return TimingRecord(
        target="cuda",
        timings_valid=True,
        flushed=False,
        settings=TimingSettings(stopping=StoppingRule(0.95, 0.05, 2, 4, 1.0)),
        arms=("baseline", "change"),
        order=("baseline",),
        blocks=(block, Block(1, "change", 0, NO_READING, NO_READING, 0, True)),
        warmup=(Warmup("baseline", 12, 3_000_000, (900, 400, 300), settled=False),),
        rotation=rotation,
        failures=(SamplerFailure("change", "block", 1, 0, "ValueError: no"),),
    )


def test_every_record_reads_back_what_it_writes():
    # The writer and every reader share one record, so a field cannot be written under one
    # key and read under another: what to_json writes, from_json returns whole.
    timing = _timing()
    # A shape's block log leaves out each block's sample count, as results/1-8 did: the CSV has it.
    counted = attrs.evolve(timing, blocks=tuple(attrs.evolve(b, samples=None) for b in timing.blocks))
    assert TimingRecord.from_json(json.loads(dumps(timing.to_json()))) == counted
    application = ApplicationTiming(timing.blocks, timing.failures)
    assert ApplicationTiming.from_json(json.loads(dumps(application.to_json()))) == application


def test_a_shapes_timing_keeps_the_keys_of_results_8():
    written = _timing().to_json()
    assert set(written) == TIMING_KEYS
    assert set(written["blocks"][0]) == {"index", "arm", "arm_block", "start", "end", "failed"}
    assert written["regime"] == {"baseline": "mixed", "change": "cache"}
    assert written["buffer_bytes"] == {"baseline": 32 * 2_113_536, "change": 4096}
    assert written["full"] is True and written["settings"]["compared"] == ["baseline", "change"]
    # Planned looks' schedule and boundaries are written only under `looks K`, a prediction's
    # bounds only where the comparison has some.
    assert set(written["settings"]["stopping"]) == set(attrs.fields_dict(StoppingRule)) - {
        "looks",
        "boundaries",
        "edges",
    }


def test_a_block_edge_writes_the_clocks_where_read_and_the_load_where_read():
    assert NO_READING.to_json() == {}
    assert BlockReading(load=LoadReading(**_LOAD)).to_json() == _LOAD
    cuda = _CLOCKS.to_json()
    assert set(cuda) == set(_LOAD) | {
        "monotonic_s", "sm_clock_mhz", "mem_clock_mhz", "power_w", "clock_event_reasons",
        "temperature_c", "missing",
    }  # fmt: skip
    assert set(read_load().to_json() if read_load() else _LOAD) == set(_LOAD)


def test_the_workers_block_hook_reads_the_clocks_on_cuda_only():
    # NVML or not, a cuda block's edge has every clock key (None where unread), as results/8 has.
    clock_keys = set(_CLOCKS.to_json()) - set(_LOAD)
    cuda = set(_block_hook(SimpleNamespace(name="cuda"))().to_json())
    cpu = set(_block_hook(SimpleNamespace(name="cpu"))().to_json())
    assert cuda - set(_LOAD) == clock_keys and not cpu & clock_keys


def test_a_cuda_block_reads_its_clocks_and_load_at_both_ends():
    start = _CLOCKS.to_json()
    end = {**start, "sm_clock_mhz": 1755, "clock_event_reasons": 0x1, "wall_s": 11.0}
    written = {"index": 7, "arm": "change", "arm_block": 3, "start": start, "end": end, "samples": 50}
    block = Block.from_json({**written, "failed": True})
    assert (block.index, block.arm, block.arm_block) == (7, "change", 3)
    assert block.samples == 50 and block.failed
    assert (block.start.sm_clock_mhz, block.end.sm_clock_mhz) == (1980, 1755)
    assert (block.start.clock_event_reasons, block.end.clock_event_reasons) == (0x4, 0x1)
    assert block.start.power_w == 310.5 and block.start.temperature_c == 61
    assert block.start.load is not None and block.end.load is not None
    assert attrs.asdict(block.start.load) == _LOAD
    assert block.end.load.wall_s == 11.0


def test_a_reading_without_every_load_field_has_no_load_and_unread_clocks_are_none():
    no_nvml = BlockReading(1.0, missing="nvidia-ml-py not installed").to_json()
    partial = {**no_nvml, **_LOAD, "load1": None}
    block = Block.from_json({"index": 0, "arm": "baseline", "start": partial})
    assert block.start.load is None and block.end.load is None
    assert block.start.sm_clock_mhz is None and block.start.missing == "nvidia-ml-py not installed"
    assert block.end == NO_READING
    with pytest.raises(ValueError, match=r"Block\.end: 'garbled' is not a mapping"):
        Block.from_json({"index": 0, "arm": "baseline", "start": partial, "end": "garbled"})


def test_a_warm_up_keeps_its_curve_and_an_old_one_is_not_judged():
    written = Warmup("baseline", 12, 3_000_000, (900, 400, 300), settled=False).to_json()
    assert Warmup.from_json(written) == Warmup("baseline", 12, 3_000_000, (900, 400, 300), False)
    old = Warmup.from_json({"arm": "change", "calls": 10, "elapsed_ns": 5})
    assert old.settled is None and old.durations_ns == ()


def test_an_old_timing_without_the_regime_maps_judges_no_regime():
    # Before results/4 the rotation was written without `regime`: a reader takes the file's maps.
    old = TimingRecord.from_json(
        {"rotation": [attrs.asdict(Rotation("copy", 2, 10, 100))], "set_bytes": {"copy": 10}}
    )
    assert old.regime == {} and old.set_bytes == {"copy": 10}


def test_the_sample_csv_header_is_the_sample_records_fields_and_reads_back_as_written(tmp_path: Path):
    assert tuple(attrs.fields_dict(Sample)) == SAMPLE_COLUMNS
    samples = (Sample("baseline", 0, 0, 1, 1200, True), Sample(EMPTY_ARM, 3, 1, 0, 80, False))
    record = Sampled(attrs.evolve(_timing(), blocks=(), failures=()), samples[:1], samples[1:])
    with BundleWriter(tmp_path, "study") as bundle:
        bundle.write_csv("samples/op/1x1.csv", *record.rows())
    written = bundle.path / "samples/op/1x1.csv"
    assert written.read_text(encoding="utf-8").splitlines() == [
        "arm,block,position,buffer_set,duration_ns,valid",
        "baseline,0,0,1,1200,1",
        "(empty),3,1,0,80,0",
    ]
    columns = read_sample_columns(written)
    assert tuple(Sample(*row) for row in zip(*columns.values(), strict=True)) == samples


def test_a_probe_csv_reads_back_every_column_as_written(tmp_path: Path):
    rows = [(10, 11, 12, 20, 1), (30, 31, 33, 90, 0)]
    with BundleWriter(tmp_path, "study") as bundle:
        bundle.write_csv("load/baseline-000.csv", PROBE_COLUMNS, rows)
    columns = read_probe_csv(bundle.path / "load/baseline-000.csv")
    assert list(columns) == list(PROBE_COLUMNS)
    assert [tuple(int(columns[name][i]) for name in PROBE_COLUMNS) for i in range(2)] == rows
