"""The Slurm executor: one job array per machine, one array task per cell.

Submitted with `sbatch --parsable` (the job script from `jobscript`, its path
and arguments as an argument vector, never a shell line), watched with
`squeue --states=all` (which also lists tasks that ended within the
controller's MinJobAge) and, where accounting exists, `sacct` for the tasks
squeue has forgotten; cancelled with `scancel`. The script and the submission
(the argument vector, the job id, the array task) are copied into every cell's
directory as reproduction artifacts.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from perfdsl.atomic import replacing
from perfdsl.matrix.cells import Cell
from perfdsl.matrix.executor import ExecutorError, Placement
from perfdsl.matrix.jobscript import job_name, render
from perfdsl.matrix.slurm_output import TaskState, parse_sacct, parse_sbatch, parse_squeue
from perfdsl.matrix.state import CellRecord

SUBMISSION = "submission"
"""The directory in each cell that holds its job script and submission record."""
COMMAND_TIMEOUT_S = 60.0


class SlurmExecutor:
    """sbatch, squeue, sacct and scancel, as found on PATH."""

    name = "slurm"

    def __init__(self, poll_s: float = 10.0) -> None:
        self.poll_s = poll_s
        self._accounting: bool | None = None

    def launch(self, placement: Placement, cells: Sequence[Cell]) -> Mapping[str, str]:
        script = render(placement.matrix, placement.machine, placement.options, [c.index for c in cells])
        jobs, logs = placement.directory / "jobs", placement.directory / "logs"
        jobs.mkdir(exist_ok=True)
        logs.mkdir(exist_ok=True)
        staged = jobs / f"{placement.machine.name}.next.sh"
        staged.write_text(script, encoding="utf-8")
        argv = ["sbatch", "--parsable", str(staged), sys.executable, str(placement.cells_file)]
        job = parse_sbatch(_run(argv, cwd=logs))
        kept = jobs / f"{job}.sh"
        staged.replace(kept)
        labels = {}
        for cell in cells:
            label = f"{job}_{cell.index}"
            submission = Path(cell.directory) / SUBMISSION
            submission.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(kept, submission / "job.sh")
            record = {
                "job_id": job,
                "array_task_id": cell.index,
                "label": label,
                "argv": [*argv[:2], str(kept), *argv[3:]],
                "cwd": str(logs),
                "machine": placement.machine.name,
                "attempt": cell.attempt,
            }
            with replacing(submission / "submission.json") as handle:
                handle.write(json.dumps(record, indent=1).encode("utf-8"))
            labels[cell.id] = label
        return labels

    def observe(self, matrix: str, records: Sequence[CellRecord]) -> Mapping[str, TaskState]:
        by_label = {r.job: r.id for r in records if r.job}
        if not by_label:
            return {}
        listed = _run(
            [
                "squeue",
                "--noheader",
                "--array",
                "--states=all",
                f"--name={job_name(matrix)}",
                "--format=%i|%T|%r",
            ]
        )
        found = _by_label(parse_squeue(listed), by_label)
        forgotten = [label for label, cell_id in by_label.items() if cell_id not in found]
        if forgotten and self._has_accounting():
            jobs = sorted({label.split("_")[0] for label in forgotten})
            accounted = _run(
                [
                    "sacct",
                    "--noheader",
                    "--parsable2",
                    "--allocations",
                    f"--jobs={','.join(jobs)}",
                    "--format=JobID,State,ExitCode,Reason",
                ]
            )
            found.update(
                {k: v for k, v in _by_label(parse_sacct(accounted), by_label).items() if k not in found}
            )
        return found

    def cancel(self, records: Sequence[CellRecord]) -> None:
        labels = sorted(r.job for r in records if r.job)
        if labels:
            _run(["scancel", *labels])

    def _has_accounting(self) -> bool:
        """Whether sacct answers at all: without slurmdbd it says accounting is disabled."""
        if self._accounting is None:
            try:
                probe = subprocess.run(
                    ["sacct", "--noheader", "--parsable2", "--jobs=1", "--format=JobID"],
                    capture_output=True,
                    text=True,
                    timeout=COMMAND_TIMEOUT_S,
                )
                self._accounting = probe.returncode == 0
            except (OSError, subprocess.TimeoutExpired):
                self._accounting = False
        return self._accounting


def _by_label(states: Sequence[TaskState], by_label: Mapping[str, str]) -> dict[str, TaskState]:
    return {by_label[f"{s.job}_{s.task}"]: s for s in states if f"{s.job}_{s.task}" in by_label}


def _run(argv: Sequence[str], cwd: Path | None = None) -> str:
    """A Slurm command's standard output (ExecutorError naming it and its last line of stderr)."""
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, cwd=cwd, timeout=COMMAND_TIMEOUT_S)
    except FileNotFoundError:
        raise ExecutorError(f"`{argv[0]}` is not on PATH: run from a Slurm login node") from None
    except subprocess.TimeoutExpired:
        raise ExecutorError(f"`{argv[0]}` did not answer in {COMMAND_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        said = (done.stderr.strip().splitlines() or ["(nothing on stderr)"])[-1]
        raise ExecutorError(f"`{argv[0]}` failed (exit {done.returncode}): {said}")
    return done.stdout
