"""One cell on its node: `python -m perfdsl.matrix.task CELLS_JSON INDEX`.

Both executors start this, so a cell runs the same way on a laptop and on a
cluster: it records where it ran (the Slurm environment, the host, the GPUs
nvidia-smi lists), runs one ordinary `perfdsl run` as a child process with an
argument vector read from the cell file, and writes outcome.json atomically.
The bundle itself is written by `perfdsl run`, whole or not at all. A SIGTERM
(scancel, the time limit, preemption) is passed to the run, which removes its
staging directory, and the outcome says the cell was terminated.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

import attrs

from perfdsl.atomic import replacing
from perfdsl.matrix.cells import Cell, read_cell
from perfdsl.matrix.state import COMPLETED, NO_GPU, OPTIONAL_TEXT, TERMINATED, TEXT, record_problem

OUTCOME = "outcome.json"
TASK_ENVIRONMENT = "task-environment.json"
RUN_LOG = "run.log"
FAILED = "FAILED"

SLURM_VARIABLES = (
    "SLURM_JOB_ID",
    "SLURM_ARRAY_JOB_ID",
    "SLURM_ARRAY_TASK_ID",
    "SLURM_JOB_NAME",
    "SLURM_JOB_PARTITION",
    "SLURM_JOB_NODELIST",
    "SLURMD_NODENAME",
    "SLURM_CPUS_ON_NODE",
    "SLURM_JOB_GPUS",
    "SLURM_CLUSTER_NAME",
    "CUDA_VISIBLE_DEVICES",
)


@attrs.frozen
class Outcome:
    """How a cell's run ended, as the task saw it."""

    cell: str
    attempt: int
    state: str
    """COMPLETED, FAILED, NO_GPU or TERMINATED."""
    reason: str | None
    exit_status: int | None
    bundle: str | None
    """The bundle `perfdsl run` printed, when it completed."""
    node: str
    started: str
    ended: str

    def write(self, directory: Path) -> None:
        with replacing(directory / OUTCOME) as handle:
            handle.write(json.dumps(attrs.asdict(self), indent=1).encode("utf-8"))

    @classmethod
    def read(cls, directory: Path) -> Outcome | None:
        """The cell's outcome, None before it wrote one; ValueError (one line naming the file) when
        the file is not one: a full disk on the node, an edit, another version of perfdsl."""
        path = directory / OUTCOME
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise ValueError(f"{path}: not an outcome file ({error})") from None
        problem = (
            record_problem(data, _OUTCOME_FIELDS, tuple(_OUTCOME_FIELDS))
            if isinstance(data, dict)
            else "not a JSON object"
        )
        if problem is not None:
            raise ValueError(f"{path}: {problem}")
        return cls(**data)


_OUTCOME_FIELDS = {
    "cell": TEXT,
    "attempt": (int,),
    "state": TEXT,
    "reason": OPTIONAL_TEXT,
    "exit_status": (int, type(None)),
    "bundle": OPTIONAL_TEXT,
    "node": TEXT,
    "started": TEXT,
    "ended": TEXT,
}


def gpu_uuids() -> list[str] | None:
    """`nvidia-smi -L`'s lines (GPU model and UUID), or None where nvidia-smi is absent or fails."""
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        listed = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (
        [line.strip() for line in listed.stdout.splitlines() if line.strip()]
        if listed.returncode == 0
        else None
    )


def task_environment() -> dict[str, object]:
    """Where this task runs: the Slurm variables that are set, the host and the visible GPUs."""
    return {
        "node": socket.gethostname(),
        "slurm": {name: os.environ[name] for name in SLURM_VARIABLES if name in os.environ},
        "nvidia_smi": gpu_uuids(),
        "python": sys.executable,
        "recorded": _now(),
    }


def run_cell(cell: Cell) -> Outcome:
    """Run one cell to its outcome; writes the task environment, the run's log and outcome.json."""
    directory = Path(cell.directory)
    directory.mkdir(parents=True, exist_ok=True)
    started = _now()
    environment = task_environment()
    with replacing(directory / TASK_ENVIRONMENT) as handle:
        handle.write(json.dumps(environment, indent=1).encode("utf-8"))

    def ended(state: str, reason: str | None, status: int | None, bundle: str | None = None) -> Outcome:
        outcome = Outcome(
            cell.id, cell.attempt, state, reason, status, bundle, str(environment["node"]), started, _now()
        )
        outcome.write(directory)
        return outcome

    if (
        cell.needs_gpu
        and not environment["nvidia_smi"]
        and os.environ.get("CUDA_VISIBLE_DEVICES", "") in ("", "-1")
    ):
        return ended(
            NO_GPU, "target cuda, but this node shows no GPU (no nvidia-smi, no CUDA_VISIBLE_DEVICES)", None
        )
    terminated: list[int] = []
    with open(directory / RUN_LOG, "w", encoding="utf-8") as log:
        try:
            child = subprocess.Popen(cell.run_command(), stdout=subprocess.PIPE, stderr=log, text=True)
        except OSError as error:
            return ended(FAILED, f"cannot start {cell.python}: {error.strerror or error}", None)

        def forward(signum: int, frame: FrameType | None) -> None:
            terminated.append(signum)
            child.send_signal(signum)

        previous = signal.signal(signal.SIGTERM, forward)
        try:
            printed, _ = child.communicate()
        finally:
            signal.signal(signal.SIGTERM, previous)
    if terminated:
        return ended(
            TERMINATED, "stopped by SIGTERM (scancel, the time limit or preemption)", child.returncode
        )
    # `perfdsl run` prints the bundle's path and nothing else: the whole of it, since a
    # path may hold a newline.
    bundle = printed.removesuffix("\n")
    if child.returncode == 0 and bundle and Path(bundle).is_dir():
        return ended(COMPLETED, None, 0, bundle)
    return ended(
        FAILED, _last_line(directory / RUN_LOG) or f"perfdsl run exited {child.returncode}", child.returncode
    )


def _last_line(path: Path) -> str | None:
    lines = [line.strip() for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    return next((line for line in reversed(lines) if line), None)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def main(argv: Sequence[str]) -> int:
    """The task's command line: the cell file and the index; the exit status of the cell's run."""
    if len(argv) != 2 or not argv[1].isdigit():
        print("usage: python -m perfdsl.matrix.task CELLS_JSON INDEX", file=sys.stderr)
        return 2
    try:
        cell = read_cell(Path(argv[0]), int(argv[1]))
    except (OSError, ValueError, KeyError, TypeError) as error:
        print(f"perfdsl matrix task: {error}", file=sys.stderr)
        return 2
    outcome = run_cell(cell)
    return 0 if outcome.state == COMPLETED else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
