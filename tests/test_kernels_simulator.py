"""The bundled CUDA kernels and applications under Numba's CUDA simulator.

The simulator must be enabled before `numba.cuda` is imported, so the checks
run in subprocesses (`kernels_simulator_check.py`), the two groups at once
because the simulator keeps one core busy.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from kernels_apps_cases import APP_CASES
from kernels_cases import CASES

pytestmark = pytest.mark.slow

TESTS = Path(__file__).parent
SCRIPT = TESTS / "kernels_simulator_check.py"
TIMEOUT_S = 300


@pytest.fixture(scope="module")
def simulator_runs() -> dict[str, subprocess.CompletedProcess[str]]:
    env = {
        **os.environ,
        "NUMBA_ENABLE_CUDASIM": "1",
        "PYTHONPATH": os.pathsep.join([str(TESTS.parent), str(TESTS)]),
    }
    processes = {
        group: subprocess.Popen(
            [sys.executable, str(SCRIPT), group],
            cwd=TESTS.parent,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for group in ("kernels", "apps")
    }
    runs = {}
    for group, process in processes.items():
        stdout, stderr = process.communicate(timeout=TIMEOUT_S)
        runs[group] = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    return runs


def _ok_lines(run: subprocess.CompletedProcess[str]) -> list[str]:
    return [line for line in run.stdout.splitlines() if line.startswith("ok ")]


def test_every_cuda_variant_matches_reference_in_simulator(simulator_runs):
    run = simulator_runs["kernels"]
    assert run.returncode == 0, run.stderr[-4000:]
    expected = sum(
        len({id(v.cuda_kernels) for v in case.variants}) * len(case.simulator_shapes)
        for case in CASES.values()
    )
    assert len(_ok_lines(run)) == expected


def test_every_application_runs_in_simulator_like_on_cpu(simulator_runs):
    run = simulator_runs["apps"]
    assert run.returncode == 0, run.stderr[-4000:]
    assert [line.split()[1] for line in _ok_lines(run)] == list(APP_CASES)
