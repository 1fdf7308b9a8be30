"""The interface every executor offers `drive`: start cells, say where they are, stop them.

An executor knows nothing of studies: it is given cells (already expanded and
written to the cell file) and hands back scheduler states, which `drive`
resolves against each cell's own outcome file. `observe` must work from the
records alone, so a later `perfdsl matrix` can watch cells an earlier one
submitted (Slurm's case; the local executor's cells die with its process).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

import attrs

from perfdsl.matrix.cells import Cell
from perfdsl.matrix.slurm_output import TaskState
from perfdsl.matrix.spec import Machine, SlurmOptions
from perfdsl.matrix.state import CellRecord


class ExecutorError(Exception):
    """A scheduler command that failed or could not run (one line)."""


@attrs.frozen
class Placement:
    """Where a group of cells is to run: one machine of the matrix and the scheduler options."""

    matrix: str
    machine: Machine
    options: SlurmOptions
    directory: Path
    """The matrix directory."""
    cells_file: Path


class Executor(Protocol):
    """Start, observe and cancel cells."""

    name: str
    poll_s: float
    """How long `drive` waits between observations."""

    def launch(self, placement: Placement, cells: Sequence[Cell]) -> Mapping[str, str]:
        """Start `cells`; each cell id's job label (`123_4`, `local`)."""
        ...

    def observe(self, matrix: str, records: Sequence[CellRecord]) -> Mapping[str, TaskState]:
        """The scheduler's state of each record it still knows, by cell id."""
        ...

    def cancel(self, records: Sequence[CellRecord]) -> None:
        """Stop these cells (queued or running)."""
        ...
