"""What a run's buffers cost, and `perfdsl run` refusing up front what the machine cannot hold."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfdsl import cli
from perfdsl.check.runnable import estimated_bytes
from perfdsl.runtime import memory

ROOT = Path(__file__).resolve().parent.parent


def _meminfo(tmp_path: Path, available_kb: int) -> Path:
    path = tmp_path / "meminfo"
    path.write_text(f"MemTotal: 32000000 kB\nMemFree: 1000 kB\nMemAvailable: {available_kb} kB\n")
    return path


def test_mem_available_is_read_in_bytes(tmp_path: Path):
    assert memory.available_bytes(_meminfo(tmp_path, 2048)) == 2048 * 1024
    assert memory.available_bytes(tmp_path / "missing") is None
    (tmp_path / "odd").write_text("MemTotal: 5 kB\n")
    assert memory.available_bytes(tmp_path / "odd") is None


def test_the_cost_is_checks_estimate_plus_the_roofs_at_the_rotation_used():
    cost = memory.BufferCost(10 * 2**30, "op 8x8", 4)
    assert "10.00 GiB at op 8x8" in memory.check_fits(cost, 20 * 2**30, "s.perf")
    with pytest.raises(memory.BuffersTooLarge, match=r"s.perf: the buffers of op 8x8 need about 10.00 GiB"):
        memory.check_fits(cost, 9 * 2**30, "s.perf")
    assert "unknown" in memory.check_fits(cost, None, "s.perf")
    # The static estimate is check's own: the run adds the roofs' six items per element and set.
    assert estimated_bytes(1000, "float32", 4) + memory.ROOF_ITEMS * 4 * 1000 * 4 > estimated_bytes(
        1000, "float32", 4
    )


def test_run_refuses_a_study_that_does_not_fit_before_anything_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    monkeypatch.setattr(memory, "PROC_MEMINFO", _meminfo(tmp_path, 1024))  # 1 MiB available
    monkeypatch.chdir(ROOT)
    artifacts = tmp_path / "artifacts"
    study = "studies/reduction_launches.perf"
    status = cli.main(["run", study, "--target", "cpu", "--quick", "--artifacts", str(artifacts)])
    err = capsys.readouterr().err
    assert status == 2
    assert "reduction_launches.perf: the buffers of" in err and "more than the 1.0 MiB" in err
    assert "Traceback" not in err
    assert not artifacts.exists() or not any(artifacts.rglob("manifest.json"))  # no bundle was written
