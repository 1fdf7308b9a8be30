"""Reading what sbatch, squeue and sacct print: job ids, array task ids and job states.

squeue prints a pending array as one line whose id is a set, `123_[2-4%2]`
(tasks 2, 3 and 4, at most two at once), and each started task as `123_0`;
sacct prints the same forms. Both are expanded here to one record per array
task. States are Slurm's base names: sacct's `CANCELLED by 1000` is CANCELLED,
and a trailing `+` (a state sacct abbreviates) is dropped.
"""

from __future__ import annotations

import re
from typing import Any

import attrs

TERMINAL = frozenset(
    {
        "BOOT_FAIL",
        "CANCELLED",
        "COMPLETED",
        "DEADLINE",
        "FAILED",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PREEMPTED",
        "REVOKED",
        "SPECIAL_EXIT",
        "TIMEOUT",
    }
)
"""The states a job never leaves (squeue(1), JOB STATE CODES)."""

ACTIVE = frozenset(
    {
        "PENDING",
        "CONFIGURING",
        "RUNNING",
        "COMPLETING",
        "REQUEUED",
        "REQUEUE_FED",
        "REQUEUE_HOLD",
        "RESIZING",
        "RESV_DEL_HOLD",
        "SIGNALING",
        "STAGE_OUT",
        "STOPPED",
        "SUSPENDED",
    }
)
"""The states of a job that is still in the queue or on a node."""

_ARRAY = re.compile(r"(?P<job>\d+)(_(?:(?P<task>\d+)|\[(?P<set>[0-9,\-]+)(%\d+)?\]))?(\.\S+)?")


class SlurmOutputError(ValueError):
    """Output of a Slurm command that is not in the form asked for (one line quoting it)."""


@attrs.frozen
class TaskState:
    """One array task (or a plain job, task None) as a Slurm command reported it."""

    job: int
    task: int | None
    state: str
    reason: str | None = None
    exit_code: str | None = None

    @property
    def terminal(self) -> bool:
        return self.state in TERMINAL


def parse_sbatch(output: str) -> int:
    """The job id from `sbatch --parsable` output: `123` or `123;cluster`."""
    line = output.strip().splitlines()[-1] if output.strip() else ""
    job = line.split(";", 1)[0]
    if not job.isdigit():
        raise SlurmOutputError(f"sbatch --parsable printed {output.strip()!r}, not a job id")
    return int(job)


def expand_ids(text: str) -> tuple[int, tuple[int | None, ...]]:
    """A job id as squeue and sacct print it: the job, and its array tasks (None for a plain job).

    `123` -> (123, (None,)); `123_4` -> (123, (4,)); `123_[2-4%2]` -> (123, (2, 3, 4));
    `123_[1,3-5]` -> (123, (1, 3, 4, 5)); a step such as `123_4.batch` reads as its task.
    """
    match = _ARRAY.fullmatch(text.strip())
    if not match:
        raise SlurmOutputError(f"{text!r} is not a Slurm job id")
    job = int(match["job"])
    if match["task"] is not None:
        return job, (int(match["task"]),)
    if match["set"] is None:
        return job, (None,)
    tasks: list[int | None] = []
    for part in match["set"].split(","):
        low, dash, high = part.partition("-")
        if not low.isdigit() or (dash and not high.isdigit()):
            raise SlurmOutputError(f"{text!r}: array range {part!r} is not N or N-M")
        tasks += range(int(low), int(high) + 1) if dash else [int(low)]
    return job, tuple(tasks)


def base_state(text: str) -> str:
    """`CANCELLED by 1000` -> CANCELLED; `CANCELLED+` -> CANCELLED."""
    words = text.strip().split()
    return words[0].rstrip("+") if words else ""


def parse_squeue(output: str) -> tuple[TaskState, ...]:
    """`squeue --noheader --format=%i|%T|%r` lines, one record per array task."""
    return tuple(
        TaskState(job, task, base_state(state), _reason(reason))
        for (job, tasks), state, reason in _rows(output, "squeue", "id|state|reason")
        for task in tasks
    )


def parse_sacct(output: str) -> tuple[TaskState, ...]:
    """`sacct --noheader --parsable2 --allocations --format=JobID,State,ExitCode,Reason` lines.

    The reason is sacct's (why a job pended or ended), None when it gave none.
    """
    return tuple(
        TaskState(job, task, base_state(state), _reason(reason), code.strip() or None)
        for (job, tasks), state, code, reason in _rows(output, "sacct", "JobID|State|ExitCode|Reason")
        for task in tasks
    )


def _rows(output: str, command: str, form: str) -> list[tuple[Any, ...]]:
    """Each non-empty line split on `|`, its id expanded (SlurmOutputError for a line not in `form`)."""
    rows = []
    for line in output.splitlines():
        if not line.strip():
            continue
        fields = line.split("|")
        if len(fields) != form.count("|") + 1:
            raise SlurmOutputError(f"{command} printed {line!r}, not `{form}`")
        rows.append((expand_ids(fields[0]), *fields[1:]))
    return rows


def _reason(text: str) -> str | None:
    text = text.strip()
    return None if text in ("", "None") else text
