"""`perfdsl run --quick` on every bundled study, on the CPU and under the CUDA simulator.

All eight runs start once per session (two at a time: CI has two cores), in
the session's `quick_runs` that tests/test_build.py and others read too, and
every test reads their bundles. Nothing here asserts a timing: the runs are
smoke-scale and the machine is shared; what is checked is what the bundle
must hold whatever the numbers are.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from run_support import (
    CUDA_STUDIES,
    KERNEL_STUDIES,
    QuickRuns,
    bundle_dirs,
    read_csv,
    read_json,
    run,
    study_name,
)

from perfdsl import targets
from perfdsl.bundle import versions
from perfdsl.bundle.files import dumps
from perfdsl.bundle.results import Results

TARGETS = ("cpu", "cudasim")
TIMED_ARMS = ("baseline", "change", "copy")
SAMPLE_HEADER = ["arm", "block", "position", "buffer_set", "duration_ns", "valid"]
CUDA_BLOCK = 32
"""Every bundled kernel's blocks are a multiple of a warp: a size that is not one leaves a partial block."""

# An imported study runs no kernel: tests/test_imported_study.py runs it instead.
CASES = [
    (study, target) for target in TARGETS for study in (KERNEL_STUDIES if target == "cpu" else CUDA_STUDIES)
]
IDS = [f"{study.stem}-{target}" for study, target in CASES]


pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def runs(quick_runs: QuickRuns) -> dict[tuple[Path, str], tuple[Path, Any]]:
    """(study, target) -> (artifacts directory, finished process), every run done once."""
    quick_runs.prefetch(CASES)
    return {case: (quick_runs(*case).artifacts, quick_runs(*case).process) for case in CASES}


@pytest.fixture(params=CASES, ids=IDS)
def bundle(request: pytest.FixtureRequest, runs: dict) -> tuple[str, Path]:
    """(target, bundle path) of one run, after checking that it succeeded."""
    study, target = request.param
    _, process = runs[(study, target)]
    assert process.returncode == 0, process.stderr[-3000:]
    return target, Path(process.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_run_writes_exactly_one_bundle_that_verifies(case: tuple[Path, str], runs: dict) -> None:
    study, _ = case
    artifacts, process = runs[case]
    assert process.returncode == 0, process.stderr[-3000:]
    assert "Traceback" not in process.stderr
    dirs = bundle_dirs(artifacts, study_name(study))
    assert [d.name for d in dirs] == [Path(process.stdout.strip().splitlines()[-1]).name]
    assert not dirs[0].name.startswith(".tmp-")
    verified = run("verify", str(dirs[0]), timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr


def test_results_read_back_to_the_bytes_the_run_wrote(bundle: tuple[str, Path]) -> None:
    # The runtime writes the bundle's own records: reading them and writing them again is the file.
    _, path = bundle
    assert dumps(Results.read(path).to_json()) == (path / "results.json").read_text(encoding="utf-8")


def test_results_follow_the_schema_and_pass_correctness(bundle: tuple[str, Path]) -> None:
    target, path = bundle
    results = read_json(path / "results.json")
    assert results["schema"] == versions.RESULTS
    assert results["target"] == target and results["quick"] is True
    assert results["timer_resolution_ns"] == targets.BY_NAME[target].resolution_ns
    assert results["timings_valid"] is (target == "cpu")
    assert results["run_id"] == path.name
    assert results["operations"]
    for operation in results["operations"]:
        correctness = operation["correctness"]
        failed = [case for case in correctness["cases"] if not case["passed"]]
        assert correctness["passed"] and not failed, failed[:3]
        assert {case["arm"] for case in correctness["cases"]} == {"baseline", "change"}
        assert any(case["adversarial"] for case in correctness["cases"])
    registration = read_json(path / "registration.json")
    assert len(registration["predict_hash"]) == 64


def test_samples_keep_every_raw_sample(bundle: tuple[str, Path]) -> None:
    target, path = bundle
    results = read_json(path / "results.json")
    for operation in results["operations"]:
        for shape in operation["shapes"]:
            settings = shape["timing"]["settings"]
            header, rows = read_csv(path / shape["samples"])
            assert header == SAMPLE_HEADER
            per_arm = Counter(row["arm"] for row in rows)
            # Every block that ran: the fixed count, or a sequential rule's rounds up to its stop.
            stop = shape["timing"].get("stop")
            ran = stop["pairs"] if stop else settings["blocks"]
            # The copy roof where the study measures one (`roof` in `evidence mechanism`).
            timed = [arm for arm in TIMED_ARMS if arm in shape["timing"]["arms"]]
            assert timed[:2] == ["baseline", "change"]
            for arm in timed:
                assert per_arm[arm] == ran * settings["repeats"], (shape["label"], arm)
            # The overhead: one block of the empty call before the sampled blocks, one after.
            assert per_arm["(empty)"] == 2 * settings["repeats"]
            blocks = Counter((row["arm"], row["block"]) for row in rows if row["arm"] != "(empty)")
            assert set(blocks.values()) == {settings["repeats"]}
            assert all(int(row["duration_ns"]) >= 0 for row in rows)
            assert {row["valid"] for row in rows} == ({"1"} if target == "cpu" else {"0"})


def test_environment_is_recorded(bundle: tuple[str, Path]) -> None:
    _, path = bundle
    environment = read_json(path / "environment.json")
    for field in ("command_line", "cpu", "os", "python", "packages", "time_utc"):
        assert environment.get(field) is not None, field
    assert "git" in environment  # None outside a git work tree (a tarball of the project)
    assert "gpu" in environment
    assert environment["gpu"] is not None or environment.get("gpu_missing")
    assert "run" in environment["command_line"]
    assert {"numba", "numpy"} <= set(environment["packages"])


def test_simulator_checks_every_cuda_kernel_on_partial_blocks(runs: dict) -> None:
    """Under cudasim every study's CUDA kernels ran and passed, on sizes that leave a partial block."""
    for study in CUDA_STUDIES:
        _, process = runs[(study, "cudasim")]
        assert process.returncode == 0, process.stderr[-3000:]
        results = read_json(Path(process.stdout.strip().splitlines()[-1]) / "results.json")
        assert results["target"] == "cudasim" and results["timings_valid"] is False
        for operation in results["operations"]:
            cases = operation["correctness"]["cases"]
            assert cases and all(case["passed"] for case in cases)
            assert any(any(size % CUDA_BLOCK for size in case["shape"].values()) for case in cases), (
                f"{study.stem}: no size that leaves a partial block"
            )
        application = results["application"]
        assert set(application["model_level"]["arms"]) == {"baseline", "change"}
        # Never timed on the simulator (a study whose application fails its model-level
        # check says that instead).
        assert application["samples"] is None and application["samples_missing"]


def _cuda_static(path: Path) -> dict[str, Any]:
    return read_json(path / "results.json")["static"]


@pytest.mark.parametrize("study", CUDA_STUDIES, ids=[s.stem for s in CUDA_STUDIES])
def test_cpu_run_archives_ptx_and_sass_of_every_cuda_kernel(study: Path, runs: dict) -> None:
    _, process = runs[(study, "cpu")]
    assert process.returncode == 0, process.stderr[-3000:]
    path = Path(process.stdout.strip().splitlines()[-1])
    static = _cuda_static(path)
    kernels = {name for variant in static["variants"].values() for name in variant["cuda"]}
    assert kernels
    for name in kernels:
        for suffix in ("ptx", "sass"):
            assert (path / "code" / f"{name}.{suffix}").stat().st_size > 0, (name, suffix)
        summary = static["cuda"][name]
        assert summary["evidence"] == "static"
        assert summary["sass"]["global_loads"]["count"] + summary["sass"]["global_stores"]["count"] > 0
        assert summary["registers"] is not None


def _run_path(runs: dict, stem: str) -> Path:
    (study,) = [s for s in KERNEL_STUDIES if s.stem == stem]
    _, process = runs[(study, "cpu")]
    assert process.returncode == 0, process.stderr[-3000:]
    return Path(process.stdout.strip().splitlines()[-1])


def test_padded_transpose_allocates_more_shared_memory_than_tiled(runs: dict) -> None:
    static = _cuda_static(_run_path(runs, "transpose_bank_conflicts"))
    (tiled,) = static["variants"]["tiled"]["cuda"]
    (padded,) = static["variants"]["padded"]["cuda"]
    declared = [static["cuda"][name]["shared_bytes_declared"] for name in (tiled, padded)]
    assert declared == [32 * 32 * 4, 32 * 33 * 4]
    assert static["cuda"][padded]["shared_bytes"] > static["cuda"][tiled]["shared_bytes"]


def test_fused_normalization_issues_fewer_global_stores(runs: dict) -> None:
    static = _cuda_static(_run_path(runs, "rmsnorm_fusion"))

    def stores(variant: str) -> int:
        names = static["variants"][variant]["cuda"]
        return sum(static["cuda"][name]["sass"]["global_stores"]["count"] for name in names)

    assert len(static["variants"]["unfused"]["cuda"]) == 3
    assert 0 < stores("fused") < stores("unfused")


def test_run_stderr_shows_progress(runs: dict) -> None:
    for (study, target), (_, process) in runs.items():
        assert isinstance(process, subprocess.CompletedProcess)
        first = process.stderr.splitlines()[0]
        assert first.startswith(f"perfdsl run: {study_name(study)} on {target}")


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_workers_blocks_reach_the_live_view(case: tuple[Path, str], runs: dict) -> None:
    """The sampler runs in a worker; its block events are relayed to the parent's display.

    stderr is not a terminal, so the display prints each timed step's first and last block.
    """
    _, process = runs[case]
    assert process.returncode == 0, process.stderr[-3000:]
    assert "estimated measuring time: " in process.stderr
    results = read_json(Path(process.stdout.strip().splitlines()[-1]) / "results.json")
    timed = [(op["name"], s) for op in results["operations"] for s in op["shapes"] if s["samples"]]
    assert timed
    for operation, shape in timed:
        blocks = len(shape["timing"]["order"])
        stop = shape["timing"]["stop"]
        step = f"  {operation} {shape['label']}: block"
        if stop is None:
            assert f"{step} 1/{blocks} " in process.stderr
            assert f"{step} {blocks}/{blocks} " in process.stderr and f", {blocks} done, " in process.stderr
        else:
            # A sequential rule may stop before the planned blocks: the display names the stop.
            assert re.search(rf"{re.escape(step)} 1/\d+ ", process.stderr), process.stderr[-2000:]
            said = f"  {operation} {shape['label']}: " + (
                f"decided {stop['verdict']} after {stop['pairs']} pairs, interval ["
                if stop["reason"] == "decided"
                else f"{stop['verdict']} at the cap of {stop['pairs']} pairs, interval ["
            )
            assert said in process.stderr, process.stderr[-2000:]


def test_numpy_baseline_runs_as_a_plain_callable(runs: dict) -> None:
    """A Variant whose cpu callable is plain NumPy is timed and checked like a Numba one.

    It has no compiled code to archive, so only the Numba change's assembly is in the bundle.
    """
    path = _run_path(runs, "batchnorm_numpy")
    results = read_json(path / "results.json")
    (operation,) = results["operations"]
    arms = {case["variant"] for case in operation["correctness"]["cases"] if case["passed"]}
    assert arms == {"numpy_passes", "fused"}
    assert all(case["passed"] for case in operation["correctness"]["cases"])
    variants = results["static"]["variants"]
    assert variants["numpy_passes"] == {"cuda": [], "cpu": []}
    assert variants["fused"] == {"cuda": [], "cpu": ["batchnorm_fused_cpu"]}
    for shape in operation["shapes"]:
        _, rows = read_csv(path / shape["samples"])
        timed = Counter(row["arm"] for row in rows if row["valid"] == "1")
        assert timed["baseline"] > 0 and timed["change"] > 0


def test_no_bundled_byte_model_is_below_the_traffic_its_buffers_force(bundle: tuple[str, Path]) -> None:
    """PQ010 is the study's defect, whatever the machine: deferred_cleanup's kernels read a table of
    V gains through K keys, and without `sparse_inputs` every one of its shapes was left out."""
    from perfdsl.evaluate.evaluation import evaluate
    from perfdsl.evaluate.inputs import open_evaluated

    _, path = bundle
    evaluation = evaluate(open_evaluated(path))
    found = [
        f"{s.label}: {f.message}"
        for op in evaluation.operations
        for s in op.shapes
        for f in s.findings
        if f.code == "PQ010"
    ]
    assert found == []
