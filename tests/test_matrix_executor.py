"""The executors end to end against stand-in sbatch/squeue/sacct/scancel: resume, faults, cancel, throttle.

Each test runs the real submission path (job script, `sh` running it with the
cell file and index as arguments, the task module, outcome files, state.json)
with `fake_run.py` answering for `perfdsl run`, so a cell takes a fraction of
a second and what is asserted is what the executor recorded and ran again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from matrix_support import (  # noqa: F401 - fake_slurm_fixture provides `fake_slurm`
    fake_slurm_fixture,
    matrix_text,
    open_matrix,
    runs_logged,
    states,
    submit_and_watch,
    wait_until,
)

from perfdsl.matrix import drive
from perfdsl.matrix.local import LocalExecutor
from perfdsl.matrix.slurm import SlurmExecutor
from perfdsl.matrix.state import COMPLETED, LOST, MatrixBusy, locked, read_state
from perfdsl.matrix.task import Outcome

pytestmark = pytest.mark.slow  # each test runs `perfdsl matrix` against stand-in Slurm commands (1-6 s)

CELLS = ["cpu.any.fake.n4096", "cpu.any.fake.n65536", "cpu.any.fake.n1048576", "cpu.any.fake.n16777216"]


def slurm() -> SlurmExecutor:
    return SlurmExecutor(poll_s=0.05)


def test_a_failed_cell_is_recorded_and_a_resubmission_runs_only_it(
    tmp_path: Path, fake_slurm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_RUN_BEHAVIOUR", "N=65536:fail")
    matrix = open_matrix(tmp_path, matrix_text("partial"))
    state = submit_and_watch(matrix, slurm())
    assert states(state) == dict.fromkeys(CELLS, COMPLETED) | {"cpu.any.fake.n65536": "FAILED"}
    failed = state.cell("cpu.any.fake.n65536")
    assert failed.reason == "perfdsl run: error: planted failure"
    assert failed.bundle is None and failed.job and failed.job.endswith("_1")
    assert sorted(runs_logged(tmp_path)) == sorted(f"N={n}" for n in (4096, 65536, 1048576, 16777216))

    monkeypatch.setenv("FAKE_RUN_BEHAVIOUR", "")
    again = submit_and_watch(matrix, slurm())
    assert states(again) == dict.fromkeys(CELLS, COMPLETED)
    assert runs_logged(tmp_path)[4:] == ["N=65536"], "completed cells ran again"
    assert [r.attempts for r in again.cells] == [1, 2, 1, 1]
    # a third submission has nothing to run
    assert drive.submit(matrix, slurm(), again, lambda line: None) == again
    for record in again.cells:
        assert (matrix.directory / str(record.bundle) / "manifest.json").is_file()


def test_a_cancelled_cell_is_recorded_and_resumed(
    tmp_path: Path, fake_slurm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_RUN_BEHAVIOUR", "N=4096:sleep")
    matrix = open_matrix(tmp_path, matrix_text("cancel"))
    executor = slurm()
    state = drive.submit(matrix, executor, drive.load_state(matrix, "slurm"), lambda line: None)
    # Running, and its run started: the job is RUNNING before its python has logged the start,
    # and a cancel in between (a loaded CI machine) left one start to count, not two.
    started = lambda s: s.cell(CELLS[0]).state == "RUNNING" and "N=4096" in runs_logged(tmp_path)  # noqa: E731
    state = wait_until(matrix, executor, state, started)
    state = drive.cancel(matrix, executor, state, "cancelled by the test", only=[CELLS[0]])
    state = drive.watch(matrix, executor, state, lambda line: None)
    cancelled = state.cell(CELLS[0])
    assert (cancelled.state, cancelled.reason) == ("CANCELLED", "cancelled by the test")
    assert states(state) == dict.fromkeys(CELLS, COMPLETED) | {CELLS[0]: "CANCELLED"}
    assert not list((Path(matrix.cells[0].directory) / "runs").glob("*/*")), "a cancelled run left a bundle"
    outcome = Outcome.read(Path(matrix.cells[0].directory))
    assert outcome is not None and outcome.state == "TERMINATED"

    monkeypatch.setenv("FAKE_RUN_BEHAVIOUR", "")
    resumed = submit_and_watch(matrix, executor)
    assert states(resumed) == dict.fromkeys(CELLS, COMPLETED)
    assert runs_logged(tmp_path).count("N=4096") == 2 and len(runs_logged(tmp_path)) == 5


@pytest.mark.parametrize(("slots", "throttle", "most"), [(4, 1, 1), (4, 3, 3), (2, None, 2)])
def test_the_throttle_and_the_slots_bound_how_many_cells_run_at_once(
    tmp_path: Path,
    fake_slurm: Path,
    monkeypatch: pytest.MonkeyPatch,
    slots: int,
    throttle: int | None,
    most: int,
) -> None:
    monkeypatch.setenv("FAKE_SLURM_SLOTS", str(slots))
    monkeypatch.setenv("FAKE_RUN_SECONDS", "0.6")
    option = f"throttle = {throttle}" if throttle else ""
    matrix = open_matrix(tmp_path, matrix_text("throttle", slurm=option))
    state = submit_and_watch(matrix, slurm())
    assert states(state) == dict.fromkeys(CELLS, COMPLETED)
    (job,) = json.loads((fake_slurm / "state.json").read_text())["jobs"].values()
    assert job["max_running"] == most
    script = (Path(matrix.cells[0].directory) / "submission" / "job.sh").read_text()
    assert f"#SBATCH --array=0-3{f'%{throttle}' if throttle else ''}\n" in script
    assert most == max(_overlap(matrix))


@pytest.mark.parametrize("accounting", [False, True])
def test_scheduler_endings_keep_their_state_and_reason(
    tmp_path: Path, fake_slurm: Path, monkeypatch: pytest.MonkeyPatch, accounting: bool
) -> None:
    """TIMEOUT and PREEMPTED stop a running task with SIGTERM; NODE_FAIL kills it without an outcome.

    With squeue forgetting ended tasks, only accounting can say what became of
    a task that wrote no outcome: without it the cell is LOST, and says why.
    """
    monkeypatch.setenv("FAKE_RUN_BEHAVIOUR", "N=65536:sleep,N=1048576:sleep,N=16777216:sleep")
    monkeypatch.setenv("FAKE_SLURM_END", "1=TIMEOUT,2=PREEMPTED,3=NODE_FAIL")
    monkeypatch.setenv("FAKE_SLURM_SLOTS", "4")
    if accounting:
        monkeypatch.setenv("FAKE_SLURM_FORGET", "1")
        monkeypatch.setenv("FAKE_SLURM_ACCOUNTING", "1")
    matrix = open_matrix(tmp_path, matrix_text("endings"))
    state = submit_and_watch(matrix, slurm())
    assert states(state) == {
        CELLS[0]: COMPLETED,
        CELLS[1]: "TIMEOUT",
        CELLS[2]: "PREEMPTED",
        CELLS[3]: "NODE_FAIL",
    }
    assert state.cell(CELLS[3]).reason == "planted NODE_FAIL; the cell wrote no outcome (see logs/)"
    assert "planted TIMEOUT" in str(state.cell(CELLS[1]).reason)

    monkeypatch.setenv("FAKE_RUN_BEHAVIOUR", "")
    monkeypatch.setenv("FAKE_SLURM_END", "")
    resumed = submit_and_watch(matrix, slurm())
    assert states(resumed) == dict.fromkeys(CELLS, COMPLETED)
    assert [r.attempts for r in resumed.cells] == [1, 2, 2, 2]


def test_a_task_the_queue_forgot_without_accounting_is_lost(
    tmp_path: Path, fake_slurm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_RUN_BEHAVIOUR", "N=65536:sleep")
    monkeypatch.setenv("FAKE_SLURM_END", "1=NODE_FAIL")
    monkeypatch.setenv("FAKE_SLURM_FORGET", "1")
    state = submit_and_watch(open_matrix(tmp_path, matrix_text("lost")), slurm())
    lost = state.cell(CELLS[1])
    assert lost.state == LOST and "nothing recorded how it ended" in str(lost.reason)


def test_every_cell_keeps_its_job_script_submission_and_slurm_environment(
    tmp_path: Path, fake_slurm: Path
) -> None:
    matrix = open_matrix(tmp_path, matrix_text("artifacts"))
    state = submit_and_watch(matrix, slurm())
    for cell in matrix.cells:
        directory = Path(cell.directory)
        submission = json.loads((directory / "submission" / "submission.json").read_text())
        job = submission["job_id"]
        assert (directory / "submission" / "job.sh").read_bytes() == (
            matrix.directory / "jobs" / f"{job}.sh"
        ).read_bytes()
        assert submission["array_task_id"] == cell.index and state.cell(cell.id).job == f"{job}_{cell.index}"
        slurm_environment = json.loads((directory / "task-environment.json").read_text())["slurm"]
        assert slurm_environment["SLURM_ARRAY_JOB_ID"] == str(job)
        assert slurm_environment["SLURM_ARRAY_TASK_ID"] == str(cell.index)
        assert slurm_environment["SLURM_JOB_ID"] and "CUDA_VISIBLE_DEVICES" in slurm_environment


def test_two_matrices_at_once_keep_their_own_cells(tmp_path: Path, fake_slurm: Path) -> None:
    one = open_matrix(tmp_path, matrix_text("one"), "one.matrix.toml")
    two = open_matrix(tmp_path, matrix_text("two"), "two.matrix.toml")
    assert one.directory != two.directory and one.id != two.id
    executor = slurm()
    first = drive.submit(one, executor, drive.load_state(one, "slurm"), lambda line: None)
    second = drive.submit(two, executor, drive.load_state(two, "slurm"), lambda line: None)
    first, second = drive.watch(one, executor, first, print), drive.watch(two, executor, second, print)
    assert states(first) == states(second) == dict.fromkeys(CELLS, COMPLETED)
    assert {r.job.split("_")[0] for r in first.cells}.isdisjoint({r.job.split("_")[0] for r in second.cells})  # type: ignore[union-attr]
    for matrix in (one, two):
        for record in drive.load_state(matrix, "slurm").cells:
            assert str(record.bundle).startswith("cells/")
            assert (matrix.directory / str(record.bundle)).is_dir()
    with (
        locked(one.directory),
        pytest.raises(MatrixBusy, match="in use by perfdsl matrix"),
        locked(one.directory, wait_s=0.2),
    ):
        pass


def test_local_executor_gives_each_running_cell_its_own_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_RUN_LOG", str(tmp_path / "runs.log"))
    monkeypatch.setenv("FAKE_RUN_SECONDS", "0.6")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    matrix = open_matrix(tmp_path, matrix_text("local"))
    state = submit_and_watch(matrix, LocalExecutor(["0", "1"], poll_s=0.05))
    assert states(state) == dict.fromkeys(CELLS, COMPLETED)
    devices = [
        json.loads((Path(c.directory) / "task-environment.json").read_text())["slurm"]["CUDA_VISIBLE_DEVICES"]
        for c in matrix.cells
    ]
    assert set(devices) == {"0", "1"}
    assert max(_overlap(matrix)) == 2
    one_at_a_time = open_matrix(tmp_path / "serial", matrix_text("serial"))
    submit_and_watch(one_at_a_time, LocalExecutor([], poll_s=0.05))
    assert max(_overlap(one_at_a_time)) == 1


def test_a_cuda_cell_on_a_node_without_a_gpu_is_recorded_not_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_RUN_LOG", str(tmp_path / "runs.log"))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.setenv("PATH", os.defpath)  # no nvidia-smi
    text = matrix_text("nogpu").replace('targets = ["cpu"]', 'targets = ["cuda"]')
    state = submit_and_watch(open_matrix(tmp_path, text), LocalExecutor([], poll_s=0.05))
    assert {r.state for r in state.cells} == {"NO_GPU"}
    assert runs_logged(tmp_path) == []


def matrix_command(tmp_path: Path, name: str) -> list[str]:
    """`perfdsl matrix` on a new four-cell matrix file of `name`, with the Slurm executor."""
    path = tmp_path / "m.matrix.toml"
    path.write_text(matrix_text(name), encoding="utf-8")
    return [
        sys.executable,
        "-m",
        "perfdsl",
        "matrix",
        str(path),
        "--executor",
        "slurm",
        "--dir",
        str(tmp_path / "out"),
    ]


def _overlap(matrix: drive.Matrix) -> list[int]:
    """How many cells' runs overlapped at each cell's start, from the outcomes' own times."""
    spans = []
    for cell in matrix.cells:
        outcome = Outcome.read(Path(cell.directory))
        assert outcome is not None
        spans.append((outcome.started, outcome.ended))
    return [sum(1 for s, e in spans if s <= start < e) for start, _ in spans]


def test_a_refused_submission_is_one_line_and_leaves_the_cells_to_submit(
    tmp_path: Path, fake_slurm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_SLURM_REFUSE", "1")
    done = subprocess.run(matrix_command(tmp_path, "refused"), capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "perfdsl matrix: error: `sbatch` failed (exit 1): "
        "sbatch: error: Batch job submission failed: Invalid partition name specified"
    )
    (directory,) = (tmp_path / "out").iterdir()
    state = read_state(directory / "state.json")
    assert state is None or all(r.state == "NOT_SUBMITTED" and r.attempts == 0 for r in state.cells)


def test_cancel_from_a_second_command_while_the_first_watches(
    tmp_path: Path, fake_slurm: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher takes the lock for each look only: `--cancel` acts meanwhile, and the watcher keeps it."""
    monkeypatch.setenv(
        "FAKE_RUN_BEHAVIOUR", ",".join(f"N={n}:sleep" for n in (4096, 65536, 1048576, 16777216))
    )
    command = matrix_command(tmp_path, "watched")
    watcher = subprocess.Popen(
        [*command, "--poll", "0.1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        deadline = time.monotonic() + 60
        while not list((tmp_path / "out").glob("*/cells/*/task-environment.json")):
            assert time.monotonic() < deadline and watcher.poll() is None
            time.sleep(0.1)
        cancelled = subprocess.run([*command, "--cancel"], capture_output=True, text=True, timeout=120)
        assert cancelled.returncode == 1, cancelled.stderr
        _, err = watcher.communicate(timeout=120)
    finally:
        watcher.kill()
    assert watcher.returncode == 1, err
    (directory,) = (tmp_path / "out").iterdir()
    state = read_state(directory / "state.json")
    assert state is not None
    assert {r.state for r in state.cells} == {"CANCELLED"}
    assert {r.reason for r in state.cells} == {"cancelled with perfdsl matrix --cancel"}
    jobs = json.loads((fake_slurm / "state.json").read_text())["jobs"].values()
    assert {t["state"] for job in jobs for t in job["tasks"].values()} == {"CANCELLED"}
    assert (
        "| CANCELLED | 1 | cancelled with perfdsl matrix --cancel |" in (directory / "report.md").read_text()
    )
