"""How a worker's end is told apart: a signal, an exit, the out-of-memory killer; and its record."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from perfdsl.bundle.results import OperationRecord, WorkerFailure
from perfdsl.runtime.isolation import classify_exit, oom_kills


@pytest.mark.parametrize(
    ("exitcode", "cause", "detail"),
    [
        (-signal.SIGSEGV, "signal", "SIGSEGV: Segmentation fault"),
        (-signal.SIGABRT, "signal", "SIGABRT: Aborted"),
        (-signal.SIGBUS, "signal", "SIGBUS"),
        (3, "exit", "exit status 3 before answering"),
        (0, "exit", "exit status 0 before answering"),
    ],
)
def test_an_exit_code_names_its_cause(exitcode: int, cause: str, detail: str) -> None:
    found = classify_exit(exitcode, oom_killed=False)
    assert found[0] == cause and found[1].startswith(detail)


def test_a_sigkill_is_the_oom_killers_only_when_the_cgroup_counted_one() -> None:
    assert classify_exit(-signal.SIGKILL, oom_killed=True) == (
        "out of memory",
        "SIGKILL from the kernel's out-of-memory killer",
    )
    cause, detail = classify_exit(-signal.SIGKILL, oom_killed=False)
    assert cause == "signal" and "not sent by perfdsl" in detail


def _cgroup(tmp_path: Path, events: str) -> tuple[Path, Path]:
    group = tmp_path / "fs" / "user.slice" / "job"
    group.mkdir(parents=True)
    (group / "memory.events").write_text(events)
    membership = tmp_path / "cgroup"
    membership.write_text("0::/user.slice/job\n")
    return tmp_path / "fs", membership


def test_oom_kills_are_read_from_this_process_cgroup(tmp_path: Path) -> None:
    root, membership = _cgroup(tmp_path, "low 0\nhigh 0\nmax 4\noom 5\noom_kill 2\n")
    assert oom_kills(root, membership) == 2


def test_no_cgroup_v2_counts_no_oom_kills(tmp_path: Path) -> None:
    membership = tmp_path / "cgroup"
    membership.write_text("12:memory:/job\n")
    assert oom_kills(tmp_path, membership) == 0
    assert oom_kills(tmp_path, tmp_path / "absent") == 0


def test_a_failure_round_trips_and_names_arm_phase_and_cause() -> None:
    failure = WorkerFailure("change", "timing 64x4096", "signal", "SIGSEGV: Segmentation fault")
    assert WorkerFailure.from_json(failure.to_json()) == failure
    assert failure.message == (
        "`change` ended its worker during timing 64x4096: signal (SIGSEGV: Segmentation fault)"
    )
    assert "the measured code ended" in WorkerFailure(None, "application", "exit", "3").message


def test_an_operation_of_an_earlier_version_reads_with_no_failures() -> None:
    record = OperationRecord.from_json({"name": "op", "shapes": [], "correctness": {}})
    assert record.failures == ()
