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

import attrs

from perfdsl.atomic import replacing
from perfdsl.matrix.slurm_output import ACTIVE

STATE_FORMAT = "perfdsl-matrix-state"
STATE_VERSION = 1

NOT_SUBMITTED = "NOT_SUBMITTED"
COMPLETED = "COMPLETED"
NO_GPU = "NO_GPU"
LOST = "LOST"
"""Left the queue without an outcome file, where no accounting says how it ended."""
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
    """The state file, or None where there is none yet (ValueError when it is not one)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    if data.pop("format", None) != STATE_FORMAT or data.pop("version", None) != STATE_VERSION:
        raise ValueError(f"{path}: not a version-{STATE_VERSION} matrix state file")
    cells = tuple(CellRecord(**c) for c in data.pop("cells"))
    return MatrixState(cells=cells, **data)


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
