"""Helpers for the `perfdsl run` tests: run the command in child processes, find its bundles.

Not a test module. `perfdsl run` is always a child process here: the CUDA
simulator must be chosen before numba.cuda is first imported, a run sets
process-wide environment variables, and a traceback or an exit status is only
honest when it comes from the real command line.

A test that starts `perfdsl run` is marked `slow` (`pytest -m "not slow"` is the
fast loop); `start` and `run` refuse to start one from a test that is not, and
`QuickRuns` makes each quick run of a study once per session, for every test
file that reads its bundle (the `quick_runs` fixture, tests/conftest.py).
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs
import bundled_studies
import pytest

from perfdsl.parse import parse
from perfdsl.source import Source

REPO = Path(__file__).resolve().parent.parent
STUDIES = bundled_studies.PATHS
FIXTURES = Path(__file__).resolve().parent / "run_fixtures"
RUN_TIMEOUT_S = 900
"""A quick run takes under a minute alone; several share CI's two cores."""
RUNS_ALLOWED = True
"""Whether the test now running may start `perfdsl run`: tests/conftest.py clears it unless it is `slow`."""


def environment() -> dict[str, str]:
    """The child's environment: the repository importable (for `kernels`), no simulator by accident."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    return env


def perfdsl_command(*args: str) -> list[str]:
    """The command line of `perfdsl ARGS` in this interpreter; refused for `run` in an unmarked test."""
    refuse_unmarked_run(args)
    return [sys.executable, "-m", "perfdsl", *args]


def refuse_unmarked_run(args: Sequence[str]) -> None:
    """Fail a test that is not marked `slow` as soon as it would start `perfdsl run`."""
    if args and args[0] == "run" and not RUNS_ALLOWED:
        pytest.fail("this test starts `perfdsl run`: mark it `@pytest.mark.slow`", pytrace=False)


def interruptible() -> None:
    """A child's SIGINT as a terminal gives it: a suite started in the background (`make test &`)
    hands its children SIGINT ignored, and Python then never raises KeyboardInterrupt."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def start(*args: str, new_session: bool = False) -> subprocess.Popen[str]:
    """`perfdsl ARGS` in a child process, output captured, interruptible (`interruptible`); in a
    process group of its own with `new_session`, as a shell starts a job, so that a signal to the
    group reaches it and its workers only."""
    refuse_unmarked_run(args)
    return subprocess.Popen(
        perfdsl_command(*args),
        cwd=REPO,
        env=environment(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
        start_new_session=new_session,
    )


def run(*args: str, timeout: float = RUN_TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """`perfdsl ARGS` to completion."""
    refuse_unmarked_run(args)
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


@attrs.frozen
class QuickRun:
    """One finished `perfdsl run STUDY --target TARGET --quick`, into an artifacts directory of its own."""

    artifacts: Path
    process: subprocess.CompletedProcess[str]

    @property
    def bundle(self) -> Path:
        """The bundle the run wrote (the last line it printed), after checking that it succeeded.

        Shared by every test of the session: read it, or `copy` it before changing it.
        """
        assert self.process.returncode == 0, self.process.stderr[-3000:]
        return Path(self.process.stdout.strip().splitlines()[-1])

    def copy(self, to: Path) -> Path:
        """A private copy of the bundle, at `to/<study>/<run id>` as a run lays bundles out."""
        bundle = self.bundle
        return Path(shutil.copytree(bundle, to / bundle.parent.name / bundle.name))


class QuickRuns:
    """Quick runs made once each, by (study, target): what several test files read."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._done: dict[tuple[str, str], QuickRun] = {}

    def prefetch(self, cases: Iterable[tuple[Path | str, str]]) -> None:
        """Make every run not made yet, two at a time (CI has two cores)."""
        missing = {}
        for study, target in cases:
            key = _case(study, target)
            if key not in self._done and key not in missing:
                missing[key] = self._root / f"{Path(key[0]).stem}-{target}"
        done = run_all(
            {
                f"{study} {target}": (
                    "run",
                    study,
                    "--target",
                    target,
                    "--quick",
                    "--artifacts",
                    str(artifacts),
                )
                for (study, target), artifacts in missing.items()
            }
        )
        for (study, target), artifacts in missing.items():
            self._done[(study, target)] = QuickRun(artifacts, done[f"{study} {target}"])

    def __call__(self, study: Path | str, target: str = "cpu") -> QuickRun:
        self.prefetch([(study, target)])
        return self._done[_case(study, target)]


def _case(study: Path | str, target: str) -> tuple[str, str]:
    """A run's key: the study relative to the repository (where `run` starts it), and the target."""
    return (REPO / study).resolve().relative_to(REPO).as_posix(), target


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
