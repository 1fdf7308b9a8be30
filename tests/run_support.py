"""Helpers for the `perfdsl run` tests: run the command in child processes, find its bundles.

Not a test module. `perfdsl run` is always a child process here: the CUDA
simulator must be chosen before numba.cuda is first imported, a run sets
process-wide environment variables, and a traceback or an exit status is only
honest when it comes from the real command line.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import bundled_studies

from perfdsl.parse import parse
from perfdsl.source import Source

REPO = Path(__file__).resolve().parent.parent
STUDIES = bundled_studies.PATHS
FIXTURES = Path(__file__).resolve().parent / "run_fixtures"
RUN_TIMEOUT_S = 900
"""A quick run takes under a minute alone; several share CI's two cores."""


def environment() -> dict[str, str]:
    """The child's environment: the repository importable (for `kernels`), no simulator by accident."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def perfdsl_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "perfdsl", *args]


def start(*args: str) -> subprocess.Popen[str]:
    """`perfdsl ARGS` in a child process, output captured."""
    return subprocess.Popen(
        perfdsl_command(*args),
        cwd=REPO,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run(*args: str, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """`perfdsl ARGS` to completion."""
    return subprocess.run(
        perfdsl_command(*args),
        cwd=REPO,
        env=environment(),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_all(
    jobs: dict[str, Sequence[str]], parallel: int = 2, timeout: float = RUN_TIMEOUT_S
) -> dict[str, subprocess.CompletedProcess[str]]:
    """Run each job's `perfdsl` arguments, `parallel` at a time; results by job name."""
    pending = list(jobs.items())
    running: dict[str, tuple[subprocess.Popen[str], float]] = {}
    done: dict[str, subprocess.CompletedProcess[str]] = {}
    while pending or running:
        while pending and len(running) < parallel:
            name, args = pending.pop(0)
            running[name] = (start(*args), time.monotonic())
        for name, (process, began) in list(running.items()):
            if process.poll() is None and time.monotonic() - began < timeout:
                continue
            if process.poll() is None:
                process.kill()
            stdout, stderr = process.communicate()
            done[name] = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
            del running[name]
        time.sleep(0.2)
    return done


def bundle_dirs(artifacts: Path, study: str) -> list[Path]:
    """Every directory under `<artifacts>/<study>/`, temporary ones included."""
    study_dir = artifacts / study
    return sorted(p for p in study_dir.iterdir() if p.is_dir()) if study_dir.is_dir() else []


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def read_csv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        return list(reader.fieldnames or []), list(reader)


def study_name(path: Path) -> str:
    """The study's name, from its first line (`study NAME {`)."""
    return path.read_text(encoding="utf-8").split()[1]


def declared_targets(study: Path) -> frozenset[str]:
    """The targets a study's workload names: a CPU-only study has no CUDA kernel to simulate."""
    parsed = parse(Source.read(study))
    assert parsed.study is not None and parsed.study.workload is not None, study
    return frozenset(name.id for name in parsed.study.workload.targets)


def imported(study: Path) -> bool:
    """A wholly imported study: its run copies result files and runs no kernel."""
    parsed = parse(Source.read(study))
    assert parsed.study is not None, study
    return parsed.study.imported


KERNEL_STUDIES = tuple(study for study in STUDIES if not imported(study))
"""The studies whose runs execute kernels: the ones with samples, correctness cases and compiled code."""
IMPORTED_STUDIES = tuple(study for study in STUDIES if imported(study))
CUDA_STUDIES = tuple(study for study in KERNEL_STUDIES if "cuda" in declared_targets(study))
"""The studies with CUDA kernels: the ones the simulator runs and whose PTX and SASS are archived."""
