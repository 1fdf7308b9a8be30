"""What a run's buffers cost, and `perfdsl run` refusing up front what the machine cannot hold."""

from __future__ import annotations

import os
from pathlib import Path

import attrs
import pytest
import runtime_fixtures
from evaluate_fixtures import study_text

from perfdsl import cli
from perfdsl.parse import parse
from perfdsl.plan import plan
from perfdsl.runtime import memory, worker
from perfdsl.source import Source

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


def test_the_cost_is_said_and_refused_past_what_is_available():
    cost = memory.BufferCost(10 * 2**30, "op 8x8", 4)
    assert "10.00 GiB at op 8x8" in memory.check_fits(cost, 20 * 2**30, "s.perf")
    with pytest.raises(memory.BuffersTooLarge, match=r"s.perf: the buffers of op 8x8 need about 10.00 GiB"):
        memory.check_fits(cost, 9 * 2**30, "s.perf")
    assert "unknown" in memory.check_fits(cost, None, "s.perf")


@pytest.fixture(scope="module")
def planned():
    """The planted study's plan: one operation `op` over (M, N) shapes, float32, rotate 4."""
    study = parse(Source("study.perf", study_text(["op.time ratio <= 0.9"]))).study
    return plan(study, "cpu", quick=False)


COPY = {"copy": (runtime_fixtures.reference, runtime_fixtures.good)}
ROOFS = {**COPY, "read": COPY["copy"], "write": COPY["copy"]}
CACHE = 32 * 2**20
"""The bytes the rotated sets must exceed (a target's `rotation_bytes`)."""


@pytest.mark.parametrize("roof", [{}, ROOFS])
def test_the_refusal_and_the_workers_limit_take_one_estimate(planned, roof) -> None:
    """The worker's RLIMIT_AS is its address space, twice the estimate the refusal compares with
    the memory available, and its margins: the same number for the same plan."""
    (operation,) = planned.operations
    refused = memory.buffer_cost(planned, {"op": runtime_fixtures.reference}, roof, CACHE)
    limit = worker.memory_limit(
        1000, memory.operation_cost(planned, operation, runtime_fixtures.reference, roof, CACHE)
    )
    assert refused is not None
    margins = worker.MARGIN_BYTES + worker.ARENA_BYTES * (os.cpu_count() or 1)
    assert limit == 1000 + 2 * refused.peak_bytes + margins


def test_a_shape_the_study_cannot_build_is_left_out_of_the_estimate(planned) -> None:
    """A generator that raises at one shape ended `run` with a traceback from the estimate; the
    shape's own case reports the error instead."""
    (operation,) = planned.operations
    refused = {"M": 64, "N": 4096}

    def inputs(shape, rng, dtype):
        if dict(shape) == refused:
            raise ValueError("this generator needs M >= N")
        return runtime_fixtures.reference.inputs(shape, rng, dtype)

    picky = attrs.evolve(runtime_fixtures.reference, inputs=inputs)
    counted = memory.operation_cost(planned, operation, picky, {}, CACHE)
    every = memory.operation_cost(planned, operation, runtime_fixtures.reference, {}, CACHE)
    assert counted is not None and every is not None
    assert every.shape == "op 64x4096" and counted.shape == "op 256x1024"
    assert counted.peak_bytes < every.peak_bytes


def test_a_plan_with_more_arms_costs_more(planned) -> None:
    """Baseline and change alone, then with the copy roof, then with the read and write roofs too:
    each timed arm adds its own copies of every buffer set."""
    peaks = [
        memory.buffer_cost(planned, {"op": runtime_fixtures.reference}, roof, CACHE).peak_bytes
        for roof in ({}, COPY, ROOFS)
    ]
    assert peaks[0] < peaks[1] < peaks[2]
    # At 256 x 1024 float32: x is 1 MiB and w 4 KiB, the output 1 MiB; 32 MiB of cache asks for
    # 16 sets. Baseline and change share the host inputs; each roof has its own; correctness
    # allows four sets in float64.
    x, w, out, sets = 256 * 1024 * 4, 1024 * 4, 256 * 1024 * 4, 16
    set_bytes, inputs = x + w + out, x + w
    arms = sets * (inputs + 2 * set_bytes) + 4 * set_bytes * 2
    cost, counted_sets = memory.shape_cost(
        planned, runtime_fixtures.reference, COPY, {"M": 256, "N": 1024}, CACHE
    )
    assert counted_sets == sets and cost == arms + sets * (inputs + set_bytes)


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
