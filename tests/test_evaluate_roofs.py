"""The roof a kernel is held to: its read/write mix, its cache regime, the roof's own spread (PQ006)."""

from __future__ import annotations

import pytest

from perfdsl.bundle.evaluation.mechanism import MechanismQuantity, Roof
from perfdsl.bundle.results import ShapeRecord
from perfdsl.bundle.sampling import CACHE, DRAM, MIXED, Rotation, TimingRecord, regime
from perfdsl.evaluate.mechanism import bandwidths
from perfdsl.evaluate.quality import check_bandwidth
from perfdsl.evaluate.roofs import measure_roofs, mix_roof

GB = 1e9
ROOFS = {
    "read": Roof("read", 20 * GB, 0.01, DRAM, 19 * GB),
    "write": Roof("write", 10 * GB, 0.02, DRAM, 9 * GB),
    "copy": Roof("copy", 12 * GB, 0.03, DRAM, 11 * GB),
}


def test_a_one_to_one_mix_is_held_to_the_measured_copy_roof_itself():
    roof = mix_roof(0.5, ROOFS)
    assert roof is not None and roof.bytes_per_s == 12 * GB and "copy roof" in roof.basis


def test_pure_reads_and_pure_writes_are_held_to_the_read_and_write_roofs():
    assert mix_roof(1.0, ROOFS).bytes_per_s == pytest.approx(20 * GB)  # type: ignore[union-attr]
    assert mix_roof(0.0, ROOFS).bytes_per_s == pytest.approx(10 * GB)  # type: ignore[union-attr]


def test_three_reads_for_two_writes_combine_the_copy_and_read_roofs_by_bytes():
    # 0.6 reads: 80 % of the bytes are 1:1 (copy), 20 % pure reads; times add.
    roof = mix_roof(0.6, ROOFS)
    assert roof is not None
    assert roof.bytes_per_s == pytest.approx(1 / (0.8 / (12 * GB) + 0.2 / (20 * GB)))
    assert 12 * GB < roof.bytes_per_s < 20 * GB  # faster than a copy: reads are cheaper than writes here
    assert roof.spread == 0.03 and roof.regime == DRAM and "80% at the copy roof" in roof.basis


def test_without_a_read_roof_the_copy_roof_stands_in_and_says_so():
    roof = mix_roof(0.6, {"copy": ROOFS["copy"]})
    assert roof is not None and roof.bytes_per_s == 12 * GB and "no read roof" in roof.basis
    assert mix_roof(0.6, {}) is None
    with pytest.raises(ValueError, match="between 0 and 1"):
        mix_roof(1.5, ROOFS)


def test_a_roof_is_its_fastest_block_and_its_spread_the_next_fastest():
    # A contended block (400 ns) slows the median, never the roof.
    roofs = measure_roofs({"copy": [100.0, 400.0, 90.0, 110.0]}, {"copy": 900.0}, {"copy": DRAM})
    assert roofs["copy"].bytes_per_s == pytest.approx(10 * GB)
    assert roofs["copy"].median_bytes_per_s == pytest.approx(900 / 105 * GB)
    assert roofs["copy"].spread == pytest.approx(100 / 90 - 1)
    assert measure_roofs({"copy": [90.0]}, {"copy": 900.0}, {}).get("copy").spread == 0.0  # type: ignore[union-attr]


def test_the_regime_classifier():
    assert regime(65 * 2**20, 64 * 2**20) == DRAM
    assert regime(64 * 2**20, 64 * 2**20) == CACHE  # fits: not one byte more than the cache
    rotated = Rotation("baseline", 40, 2 * 2**20, 64 * 2**20)
    assert rotated.regime == DRAM and rotated.buffer_bytes == 80 * 2**20
    assert Rotation("copy", 8, 2**20, 64 * 2**20).regime == CACHE
    reused = Rotation("baseline", 40, 2 * 2**20, 64 * 2**20, scratch_bytes=2**20, scratch_cached=True)
    assert reused.regime == MIXED


def _shape(regimes: dict[str, str], shares: dict[str, float]) -> ShapeRecord:
    arms = ("baseline", "change", "read", "write", "copy")
    return ShapeRecord(
        label="8x8",
        sizes={"M": 8, "N": 8},
        weight=1.0,
        models={},
        timing=TimingRecord.from_json(
            {
                "set_bytes": {"read": 400, "write": 400, "copy": 800, "baseline": 0, "change": 0},
                "regime": {a: regimes.get(a, DRAM) for a in arms},
                "read_share": shares,
                "read_share_source": {a: "test" for a in shares},
            }
        ),
    )


def test_each_arm_is_compared_with_its_mix_and_only_within_its_regime():
    moved = (MechanismQuantity("bytes", 1000.0, 800.0, 0.8, "modelled"),)
    medians = {"baseline": [100.0], "change": [100.0], "read": [20.0], "write": [40.0], "copy": [100.0]}
    # Roofs: read 20 GB/s, write 10 GB/s, copy 8 GB/s.
    shape = _shape({}, {"baseline": 0.6, "change": 0.5})
    copy, missing, (base, change), roofs = bandwidths(moved, medians, shape)
    assert copy == pytest.approx(8 * GB) and missing is None and len(roofs) == 3
    expected = 1 / (0.8 / (8 * GB) + 0.2 / (20 * GB))
    assert base.roof is not None and base.roof.bytes_per_s == pytest.approx(expected)
    assert base.roof_fraction == pytest.approx(10 * GB / expected)  # 1.0 of copy, below its own roof
    assert change.roof_fraction == pytest.approx(1.0)
    cached = _shape({"baseline": CACHE, "change": MIXED}, {"baseline": 0.6, "change": 0.5})
    _, _, (base, change), _ = bandwidths(moved, medians, cached)
    assert base.roof_fraction is None and "cache-resident" in (base.roof_missing or "")
    assert change.roof_fraction is None and "scratch" in (change.roof_missing or "")


def test_above_the_roof_is_an_error_only_beyond_the_roofs_own_spread():
    assert check_bandwidth(11.5 * GB, 10 * GB, "op b", margin=0.2) == ()
    (finding,) = check_bandwidth(12.5 * GB, 10 * GB, "op b", margin=0.2)
    assert finding.code == "PQ006" and finding.severity == "error" and "margin 20.0%" in finding.message
