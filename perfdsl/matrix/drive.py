"""Submitting a matrix, watching it, resuming it: what to run next and what each cell's state is.

The matrix directory holds everything: the cell file, state.json, the job
scripts, Slurm's logs and one directory per cell (its bundle under runs/, its
outcome, the task's environment, its submission). A submission runs the cells
that are not COMPLETED and not still queued, each as a new attempt; a cell's
state comes from its own outcome file first (the task wrote it on the node)
and from the scheduler only where there is none, or to name the signal that
stopped it (CANCELLED, TIMEOUT, PREEMPTED).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import attrs

from perfdsl.matrix.cells import Cell, expand, matrix_id, write_cells
from perfdsl.matrix.executor import Executor, Placement
from perfdsl.matrix.slurm_output import TaskState
from perfdsl.matrix.spec import MatrixSpec
from perfdsl.matrix.state import (
    COMPLETED,
    LOST,
    NOT_SUBMITTED,
    TERMINATED,
    CellRecord,
    MatrixState,
    read_state,
    write_state,
)
from perfdsl.matrix.task import FAILED, OUTCOME, Outcome

CELLS_FILE = "cells.json"
STATE_FILE = "state.json"
CANCELLED = "CANCELLED"


@attrs.frozen
class Matrix:
    """A matrix file opened: its id, its directory and its cells."""

    spec: MatrixSpec
    id: str
    directory: Path
    cells: tuple[Cell, ...]

    @property
    def state_file(self) -> Path:
        return self.directory / STATE_FILE

    @property
    def cells_file(self) -> Path:
        return self.directory / CELLS_FILE


def open_matrix(spec: MatrixSpec, study_text: str, base: Path) -> Matrix:
    """The matrix's directory is `base/<id>`: a new id for any edit of the file or the study."""
    identity = matrix_id(spec, study_text)
    directory = (base / identity).resolve()
    return Matrix(spec, identity, directory, expand(spec, directory))


def initial_state(matrix: Matrix, executor: str) -> MatrixState:
    """Every cell not yet submitted."""
    cells = tuple(CellRecord(c.id, c.index, NOT_SUBMITTED) for c in matrix.cells)
    return MatrixState(matrix.id, str(matrix.spec.path), executor, cells)


def load_state(matrix: Matrix, executor: str) -> MatrixState:
    """The directory's state, or a fresh one; its executor becomes `executor`.

    The directory's name is a hash of the matrix file and the study, so its state
    lists exactly the matrix's cells unless the file was edited or copied between
    directories: that is refused (ValueError, one line) rather than run half-matched.
    """
    state = read_state(matrix.state_file) or initial_state(matrix, executor)
    recorded, expanded = [r.id for r in state.cells], [c.id for c in matrix.cells]
    if sorted(recorded) != sorted(expanded):
        odd = next((i for i in recorded if i not in expanded), None)
        lacking = next((i for i in expanded if i not in recorded), None)
        what = f"records the cell `{odd}`, which" if odd else f"lacks the cell `{lacking}`, which"
        raise ValueError(
            f"{matrix.state_file}: {what} this matrix {'does not have' if odd else 'has'}; "
            "move it away to start the matrix over"
        )
    return attrs.evolve(state, executor=executor)


def resolve(
    record: CellRecord, seen: TaskState | None, outcome: Outcome | None, directory: Path
) -> CellRecord:
    """A cell's record from what the task wrote (`outcome`) and what the scheduler says (`seen`)."""
    if outcome is not None and outcome.attempt == record.attempts:
        if outcome.state == COMPLETED and outcome.bundle:
            bundle = _relative(Path(outcome.bundle), directory)
            return attrs.evolve(record, state=COMPLETED, reason=None, bundle=bundle, node=outcome.node)
        if outcome.state != TERMINATED:
            return attrs.evolve(record, state=outcome.state, reason=outcome.reason, node=outcome.node)
        if seen is not None and not seen.terminal:
            return attrs.evolve(record, state=seen.state, node=outcome.node)
        if seen is not None and seen.state != COMPLETED:
            return attrs.evolve(
                record, state=seen.state, reason=seen.reason or outcome.reason, node=outcome.node
            )
        if record.state == CANCELLED:
            return attrs.evolve(record, node=outcome.node)
        return attrs.evolve(record, state=TERMINATED, reason=outcome.reason, node=outcome.node)
    if seen is None:
        if not record.live:
            return record
        return attrs.evolve(
            record,
            state=LOST,
            # Said of a local process killed outright too: no queue, no accounting, no outcome.
            reason="ended without writing its outcome (killed outright, or its node lost), and "
            "nothing recorded how it ended",
        )
    if not seen.terminal:
        return attrs.evolve(record, state=seen.state, reason=seen.reason)
    if seen.state == COMPLETED:
        return attrs.evolve(
            record, state=LOST, reason="the scheduler says COMPLETED, but the cell wrote no outcome"
        )
    reason = seen.reason or (f"exit code {seen.exit_code}" if seen.exit_code else None)
    return attrs.evolve(
        record,
        state=seen.state,
        reason=f"{reason or 'no reason given'}; the cell wrote no outcome (see logs/)",
    )


def submit(matrix: Matrix, executor: Executor, state: MatrixState, say: Callable[[str], None]) -> MatrixState:
    """Start every cell that is neither COMPLETED nor still queued, one new attempt each."""
    records = {r.id: r for r in state.cells}
    chosen = [c for c in matrix.cells if records[c.id].to_run]
    if not chosen:
        return state
    for cell in chosen:
        (Path(cell.directory) / OUTCOME).unlink(missing_ok=True)
        Path(cell.directory).mkdir(parents=True, exist_ok=True)
    attempts = {c.id: records[c.id].attempts + (1 if records[c.id].to_run else 0) for c in matrix.cells}
    cells = [attrs.evolve(c, attempt=attempts[c.id]) for c in matrix.cells]
    write_cells(matrix.cells_file, matrix.id, cells)
    chosen_ids = {c.id for c in chosen}
    for machine in matrix.spec.machines:
        group = [c for c in cells if c.id in chosen_ids and c.machine == machine.name]
        if not group:
            continue
        placement = Placement(matrix.id, machine, matrix.spec.slurm, matrix.directory, matrix.cells_file)
        labels = executor.launch(placement, group)
        state = state.with_cells(
            [
                attrs.evolve(
                    records[c.id],
                    state="PENDING",
                    reason=None,
                    job=labels[c.id],
                    attempts=c.attempt,
                    bundle=None,
                )
                for c in group
            ]
        )
        write_state(matrix.state_file, state)
        plural = "s" if len(group) != 1 else ""
        say(f"submitted {len(group)} cell{plural} on `{machine.name}` ({executor.name})")
    return state


def refresh(
    matrix: Matrix, executor: Executor, state: MatrixState, say: Callable[[str], None]
) -> MatrixState:
    """Every live cell's state from its outcome and the scheduler; state.json rewritten on a change."""
    live = [r for r in state.cells if r.live]
    if not live:
        return state
    seen = executor.observe(matrix.id, live)
    directories = {c.id: Path(c.directory) for c in matrix.cells}
    changed = []
    for record in live:
        try:
            outcome = Outcome.read(directories[record.id])
        except ValueError as error:
            # The cell's own fault, recorded as its result: the other cells go on.
            new = attrs.evolve(record, state=FAILED, reason=f"its outcome is unreadable: {error}")
        else:
            new = resolve(record, seen.get(record.id), outcome, matrix.directory)
        if new != record:
            changed.append(new)
            if new.state != record.state:
                say(f"{new.id}: {new.state}{f' ({new.reason})' if new.reason else ''}")
    if changed:
        state = state.with_cells(changed)
        write_state(matrix.state_file, state)
    return state


def watch(
    matrix: Matrix,
    executor: Executor,
    state: MatrixState,
    say: Callable[[str], None],
    sleep: Callable[[float], None] = time.sleep,
    guard: Callable[[], AbstractContextManager[None]] | None = None,
) -> MatrixState:
    """Refresh until no cell is live.

    With `guard` (the directory's lock), each look takes it and rereads
    state.json first, so what another `perfdsl matrix` recorded meanwhile
    (cells it cancelled) is kept rather than overwritten.
    """
    while True:
        with guard() if guard else nullcontext():
            if guard:
                state = read_state(matrix.state_file) or state
            state = refresh(matrix, executor, state, say)
        if not any(r.live for r in state.cells):
            return state
        sleep(executor.poll_s)


def cancel(
    matrix: Matrix, executor: Executor, state: MatrixState, reason: str, only: Sequence[str] = ()
) -> MatrixState:
    """Stop the live cells (or those of `only`) and record them CANCELLED with `reason`."""
    live = [r for r in state.cells if r.live and (not only or r.id in only)]
    if not live:
        return state
    executor.cancel(live)
    state = state.with_cells([attrs.evolve(r, state=CANCELLED, reason=reason) for r in live])
    write_state(matrix.state_file, state)
    return state


def _relative(path: Path, directory: Path) -> str:
    try:
        return path.resolve().relative_to(directory).as_posix()
    except ValueError:
        return str(path)
