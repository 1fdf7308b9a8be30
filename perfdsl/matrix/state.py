"""state.json: every cell's last known state, written atomically; and the matrix directory's lock.

A fault is a record here, not a loss: a cell that failed, timed out, was
preempted or cancelled, or landed on a node without a GPU keeps its Slurm
state and the reason, and a resubmission reads this file to run only the cells
that are not COMPLETED and not still queued. Only one `perfdsl matrix` acts on
a directory at a time (an exclusive lock on `lock`), so two invocations never
submit the same cell twice or overwrite each other's state.
"""

from __future__ import annotations

import fcntl
import json
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from perfdsl.atomic import replacing
from perfdsl.matrix.slurm_output import ACTIVE

STATE_FORMAT = "perfdsl-matrix-state"
STATE_VERSION = 1

NOT_SUBMITTED = "NOT_SUBMITTED"
COMPLETED = "COMPLETED"
NO_GPU = "NO_GPU"
LOST = "LOST"
"""Ended without writing its outcome file, and nothing (a scheduler's accounting) says how."""
TERMINATED = "TERMINATED"
"""Stopped by a signal (scancel, the time limit, preemption) where nothing says which."""


class MatrixBusy(Exception):
    """Another `perfdsl matrix` holds the directory's lock (one line)."""


@attrs.frozen
class CellRecord:
    """One cell's last known state."""

    id: str
    index: int
    state: str
    reason: str | None = None
    job: str | None = None
    """`123_4` for an array task, `local` for the local executor."""
    attempts: int = 0
    bundle: str | None = None
    """The cell's bundle, relative to the matrix directory, once COMPLETED."""
    node: str | None = None

    @property
    def live(self) -> bool:
        """Still queued or running: neither to resubmit nor to report as final."""
        return self.state in ACTIVE

    @property
    def to_run(self) -> bool:
        """What a (re)submission runs: everything not completed and not still queued."""
        return self.state != COMPLETED and not self.live


@attrs.frozen
class MatrixState:
    """The state file: the matrix, its executor and every cell."""

    matrix: str
    spec: str
    executor: str | None
    cells: tuple[CellRecord, ...]

    def cell(self, cell_id: str) -> CellRecord:
        return next(c for c in self.cells if c.id == cell_id)

    def with_cells(self, records: Sequence[CellRecord]) -> MatrixState:
        """The state with these cells' records replaced."""
        new = {r.id: r for r in records}
        return attrs.evolve(self, cells=tuple(new.get(c.id, c) for c in self.cells))


def write_state(path: Path, state: MatrixState) -> None:
    """Replace state.json atomically: a reader sees the previous state or this one."""
    data = {"format": STATE_FORMAT, "version": STATE_VERSION, **attrs.asdict(state)}
    with replacing(path) as handle:
        handle.write(json.dumps(data, indent=1).encode("utf-8"))


def read_state(path: Path) -> MatrixState | None:
    """The state file, or None where there is none yet (ValueError, one line naming the file, when it
    is not one: the file is edited by hand, truncated by a full disk, or left by another version)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path}: not a matrix state file ({error}); {_START_OVER}") from None
    if (
        not isinstance(data, dict)
        or data.get("format") != STATE_FORMAT
        or data.get("version") != STATE_VERSION
    ):
        raise ValueError(f"{path}: not a version-{STATE_VERSION} matrix state file; {_START_OVER}")
    _checked(path, "the file", data, _STATE_FIELDS, tuple(_STATE_FIELDS))
    if not all(isinstance(c, dict) for c in data["cells"]):
        raise ValueError(f"{path}: cells: expected a list of cell records; {_START_OVER}")
    cells = tuple(_cell(path, f"cells[{i}]", c) for i, c in enumerate(data["cells"]))
    ids = [c.id for c in cells]
    duplicate = next((i for i in ids if ids.count(i) > 1), None)
    if duplicate is not None:
        raise ValueError(f"{path}: the cell `{duplicate}` is recorded twice; {_START_OVER}")
    return MatrixState(data["matrix"], data["spec"], data["executor"], cells)


_START_OVER = "move it away to start the matrix over (its cells' directories are kept)"
TEXT = (str,)
OPTIONAL_TEXT = (str, type(None))
_STATE_FIELDS = {
    "format": TEXT,
    "version": (int,),
    "matrix": TEXT,
    "spec": TEXT,
    "executor": OPTIONAL_TEXT,
    "cells": (list,),
}
_CELL_FIELDS = {
    "id": TEXT,
    "index": (int,),
    "state": TEXT,
    "reason": OPTIONAL_TEXT,
    "job": OPTIONAL_TEXT,
    "attempts": (int,),
    "bundle": OPTIONAL_TEXT,
    "node": OPTIONAL_TEXT,
}


def record_problem(
    data: dict[str, Any], kinds: dict[str, tuple[type, ...]], required: Sequence[str]
) -> str | None:
    """What is wrong with a JSON record: an unknown key, a missing one, or a value not of its kind
    (a bool is no number here); None when nothing is. The matrix's files are read with it."""
    unknown = next((key for key in data if key not in kinds), None)
    if unknown is not None:
        return f"unknown key {unknown!r}"
    missing = next((key for key in required if key not in data), None)
    if missing is not None:
        return f"{missing} is missing"
    for key, value in data.items():
        if isinstance(value, bool) or not isinstance(value, kinds[key]):
            return f"{key} is {json.dumps(value)}, not a valid value"
    return None


def _checked(
    path: Path, where: str, data: dict[str, Any], kinds: dict[str, tuple[type, ...]], required: Sequence[str]
) -> None:
    problem = record_problem(data, kinds, required)
    if problem is not None:
        raise ValueError(f"{path}: {where}: {problem}; {_START_OVER}")


def _cell(path: Path, where: str, data: dict[str, Any]) -> CellRecord:
    _checked(path, where, data, _CELL_FIELDS, ("id", "index", "state"))
    if data.get("attempts", 0) < 0:
        raise ValueError(f"{path}: {where}: attempts is {data['attempts']}, below 0; {_START_OVER}")
    return CellRecord(**data)


@contextmanager
def locked(directory: Path, wait_s: float | None = 10.0) -> Iterator[None]:
    """Hold the matrix directory's exclusive lock, waiting up to `wait_s` seconds (None: as long as
    it takes), then MatrixBusy: a watcher holds it only for each look, a local run throughout."""
    path = directory / "lock"
    deadline = None if wait_s is None else time.monotonic() + wait_s
    with open(path, "a+") as handle:
        while True:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if deadline is not None and time.monotonic() >= deadline:
                    handle.seek(0)
                    holder = handle.read().strip() or "another process"
                    raise MatrixBusy(
                        f"{directory}: in use by perfdsl matrix (pid {holder}); wait for it"
                    ) from None
                time.sleep(0.1)
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        try:
            yield
        finally:
            handle.truncate(0)
            fcntl.flock(handle, fcntl.LOCK_UN)
