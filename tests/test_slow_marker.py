"""A test that starts `perfdsl run` is marked `slow`, or it fails: `pytest -m "not slow"` stays fast.

tests/conftest.py tells run_support, before each test, whether the test is
marked; `run_support.start` and `run` then refuse to start a run from one that
is not, naming the marker to add.
"""

from __future__ import annotations

import pytest
import run_support


def test_an_unmarked_test_may_not_start_a_run() -> None:
    assert run_support.RUNS_ALLOWED is False
    with pytest.raises(pytest.fail.Exception, match=r"mark it `@pytest.mark.slow`"):
        run_support.run("run", "studies/rmsnorm_cpu.perf", "--target", "cpu", "--quick")


def test_an_unmarked_test_may_start_other_commands() -> None:
    run_support.refuse_unmarked_run(("check", "studies/rmsnorm_cpu.perf"))
    assert run_support.run("check", "studies/rmsnorm_cpu.perf").returncode == 0


@pytest.mark.slow
def test_a_slow_test_may() -> None:
    assert run_support.RUNS_ALLOWED is True
    run_support.refuse_unmarked_run(("run", "studies/rmsnorm_cpu.perf"))
