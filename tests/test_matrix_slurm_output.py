"""Parsing sbatch --parsable, squeue and sacct output: job ids, array task sets, every terminal state."""

from __future__ import annotations

import pytest

from perfdsl.matrix.slurm_output import (
    SlurmOutputError,
    TaskState,
    base_state,
    expand_ids,
    parse_sacct,
    parse_sbatch,
    parse_squeue,
)


@pytest.mark.parametrize(
    ("output", "job"), [("123\n", 123), ("123;cluster\n", 123), ("sbatch: warning: x\n456\n", 456)]
)
def test_sbatch_parsable_gives_the_job_id(output: str, job: int) -> None:
    assert parse_sbatch(output) == job


@pytest.mark.parametrize("output", ["", "Submitted batch job 123\n", "abc;cluster"])
def test_sbatch_output_that_is_not_a_job_id_is_refused(output: str) -> None:
    with pytest.raises(SlurmOutputError):
        parse_sbatch(output)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("123", (123, (None,))),
        ("123_4", (123, (4,))),
        ("123_[2-4%2]", (123, (2, 3, 4))),
        ("123_[2-4]", (123, (2, 3, 4))),
        ("123_[1,3-5]", (123, (1, 3, 4, 5))),
        ("123_[0,7%1]", (123, (0, 7))),
        ("123_4.batch", (123, (4,))),
    ],
)
def test_array_ids_expand_to_their_tasks(text: str, expected: tuple[int, tuple[int | None, ...]]) -> None:
    assert expand_ids(text) == expected


@pytest.mark.parametrize("text", ["x123", "123_[a-b]", "123_[2-]", "123_", "_4"])
def test_malformed_array_ids_are_refused(text: str) -> None:
    with pytest.raises(SlurmOutputError):
        expand_ids(text)


def test_squeue_lines_become_one_state_per_task() -> None:
    output = (
        "1_[2-3%2]|PENDING|JobArrayTaskLimit\n1_0|RUNNING|None\n1_1|COMPLETING|None\n\n7|PENDING|Resources\n"
    )
    assert parse_squeue(output) == (
        TaskState(1, 2, "PENDING", "JobArrayTaskLimit"),
        TaskState(1, 3, "PENDING", "JobArrayTaskLimit"),
        TaskState(1, 0, "RUNNING"),
        TaskState(1, 1, "COMPLETING"),
        TaskState(7, None, "PENDING", "Resources"),
    )


SLURM_TERMINAL = (
    "BOOT_FAIL",
    "CANCELLED",
    "COMPLETED",
    "DEADLINE",
    "FAILED",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "TIMEOUT",
)
"""squeue(1)'s job states that end a job, written out here rather than read from the module under test."""


@pytest.mark.parametrize("state", SLURM_TERMINAL)
def test_every_terminal_state_reads_as_terminal(state: str) -> None:
    (squeued,) = parse_squeue(f"5_1|{state}|NonZeroExitCode\n")
    (accounted,) = parse_sacct(f"5_1|{state}|1:0|None\n")
    assert squeued.terminal and accounted.terminal
    assert squeued.state == accounted.state == state


@pytest.mark.parametrize(
    "state", ["PENDING", "RUNNING", "COMPLETING", "CONFIGURING", "SUSPENDED", "REQUEUED"]
)
def test_active_states_are_not_terminal(state: str) -> None:
    (task,) = parse_squeue(f"5_1|{state}|None\n")
    assert not task.terminal


def test_sacct_reads_cancelled_by_a_user_and_abbreviated_states() -> None:
    output = "9_0|CANCELLED by 1000|0:15|None\n9_1|OUT_OF_MEMORY|0:125|None\n9_[2-3]|PENDING|0:0|Priority\n"
    assert parse_sacct(output) == (
        TaskState(9, 0, "CANCELLED", None, "0:15"),
        TaskState(9, 1, "OUT_OF_MEMORY", None, "0:125"),
        TaskState(9, 2, "PENDING", "Priority", "0:0"),
        TaskState(9, 3, "PENDING", "Priority", "0:0"),
    )
    assert base_state("CANCELLED+") == "CANCELLED"


def test_a_line_in_another_format_is_refused() -> None:
    with pytest.raises(SlurmOutputError):
        parse_squeue("JOBID PARTITION NAME\n")
    with pytest.raises(SlurmOutputError):
        parse_sacct("5_1|COMPLETED\n")
