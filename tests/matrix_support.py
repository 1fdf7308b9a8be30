"""Helpers for the matrix executor tests: matrix files over a bundled study, and the stand-in Slurm.

Not a test module. The stand-ins (tests/slurm/fake/) put sbatch, squeue,
sacct and scancel on PATH; a cell's python is `fake_run.py`, which answers for
`perfdsl run` in a fraction of a second, so these tests exercise the whole
submission path (job script, array tasks, the task module, outcome files,
state) without running kernels.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from perfdsl.matrix import drive
from perfdsl.matrix.executor import Executor
from perfdsl.matrix.spec import read_spec
from perfdsl.matrix.state import MatrixState

REPO = Path(__file__).resolve().parent.parent
FAKE = Path(__file__).resolve().parent / "slurm" / "fake"
STUDY = REPO / "studies" / "reduction_launches.perf"
SHAPES = (4096, 65536, 1048576, 16777216)
"""reduction_launches' declared shapes: the four cells' shapes axis."""


def matrix_text(
    name: str, *, python: Path | str = FAKE / "fake_run.py", slurm: str = "", extra: str = ""
) -> str:
    shapes = "".join(f'[[shapes]]\nname = "n{n}"\nselect = [{{N = {n}}}]\n' for n in SHAPES)
    return (
        f'name = "{name}"\nstudy = "{STUDY}"\nquick = true\ntargets = ["cpu"]\n{extra}\n'
        f'[slurm]\n{slurm}\n[[environments]]\nname = "fake"\npython = "{python}"\n{shapes}'
    )


def open_matrix(tmp_path: Path, text: str, file_name: str = "m.matrix.toml") -> drive.Matrix:
    path = tmp_path / file_name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return drive.open_matrix(read_spec(path), STUDY.read_text(encoding="utf-8"), tmp_path / "matrices")


@pytest.fixture(name="fake_slurm")
def fake_slurm_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The stand-in Slurm on PATH with its own state directory; every cell's run logged to runs.log."""
    state = tmp_path / "fakeslurm"
    monkeypatch.setenv("PATH", f"{FAKE}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_SLURM_DIR", str(state))
    monkeypatch.setenv("FAKE_RUN_LOG", str(tmp_path / "runs.log"))
    for name in ("FAKE_SLURM_END", "FAKE_SLURM_FORGET", "FAKE_SLURM_ACCOUNTING", "FAKE_RUN_BEHAVIOUR"):
        monkeypatch.delenv(name, raising=False)
    yield state


def runs_logged(tmp_path: Path) -> list[str]:
    """The shapes `fake_run.py` was started with, in order."""
    log = tmp_path / "runs.log"
    return log.read_text().split() if log.exists() else []


def submit_and_watch(matrix: drive.Matrix, executor: Executor) -> MatrixState:
    said: list[str] = []
    state = drive.load_state(matrix, executor.name)
    state = drive.submit(matrix, executor, state, said.append)
    return drive.watch(matrix, executor, state, said.append)


def wait_until(
    matrix: drive.Matrix, executor: Executor, state: MatrixState, ready: Callable[[MatrixState], bool]
) -> MatrixState:
    """Refresh until `ready` holds (at most 60 s: these cells take a fraction of a second)."""
    deadline = time.monotonic() + 60
    while not ready(state):
        assert time.monotonic() < deadline, [(r.id, r.state) for r in state.cells]
        time.sleep(0.05)
        state = drive.refresh(matrix, executor, state, lambda line: None)
    return state


def states(state: MatrixState) -> dict[str, str]:
    return {r.id: r.state for r in state.cells}


MATRIX_SPEC = f"""name = "fuzz"
study = "{STUDY}"
quick = true
targets = ["cpu"]
time_limit = 60

[slurm]
throttle = 2

[[environments]]
name = "fake"
python = "{FAKE / "fake_run.py"}"

[[shapes]]
name = "small"
select = [{{N = 4096}}]

[[shapes]]
name = "mid"
select = [{{N = 65536}}]
"""
"""A matrix file of two cells of a bundled study, each answered by the stand-in python in a moment."""


def fake_cells(monkeypatch: pytest.MonkeyPatch, log: Path) -> None:
    """What the stand-in python needs to answer for a cell's `perfdsl run`, without Slurm."""
    monkeypatch.setenv("FAKE_RUN_LOG", str(log))
    monkeypatch.setenv("FAKE_RUN_SECONDS", "0")
    monkeypatch.delenv("FAKE_RUN_BEHAVIOUR", raising=False)


def run_fake_matrix(root: Path) -> tuple[Path, Path]:
    """MATRIX_SPEC run to the end locally under `root` through `perfdsl matrix`: the matrix file
    and the `--dir` holding its one matrix directory (state.json, cells.json, every cell COMPLETED)."""
    import command_fuzz as fuzz

    root.mkdir(parents=True, exist_ok=True)
    spec = root / "fuzz.matrix.toml"
    spec.write_text(MATRIX_SPEC, encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        fake_cells(patch, root / "runs.log")
        ran = fuzz.invoke(["matrix", str(spec), "--dir", str(root / "matrices")], root)
    assert ran.status == 0, ran.stderr
    return spec, root / "matrices"
