"""A test that starts `perfdsl run` is marked `slow`, or it fails: `pytest -m "not slow"` stays fast.

tests/conftest.py tells run_support, before each test, whether the test is
marked; `run_support.start`, `run` and `perfdsl_command` then refuse to start a
run from one that is not, naming the marker to add.
"""

from __future__ import annotations

import pytest
import run_support


def test_an_unmarked_test_may_not_start_a_run() -> None:
    assert run_support.RUNS_ALLOWED is False
    with pytest.raises(pytest.fail.Exception, match=r"mark it `@pytest.mark.slow`"):
        run_support.run("run", "studies/rmsnorm_cpu.perf", "--target", "cpu", "--quick")


def test_an_unmarked_test_may_not_build_a_run_s_command_line_either() -> None:
    # Six tests spawned `perfdsl run` through the bare command line and stayed in the fast loop.
    with pytest.raises(pytest.fail.Exception, match=r"mark it `@pytest.mark.slow`"):
        run_support.perfdsl_command("run", "studies/rmsnorm_cpu.perf")


def test_an_unmarked_test_may_start_other_commands() -> None:
    run_support.refuse_unmarked_run(("check", "studies/rmsnorm_cpu.perf"))
    assert run_support.run("check", "studies/rmsnorm_cpu.perf").returncode == 0


@pytest.mark.slow
def test_a_slow_test_may() -> None:
    assert run_support.RUNS_ALLOWED is True
    run_support.refuse_unmarked_run(("run", "studies/rmsnorm_cpu.perf"))
