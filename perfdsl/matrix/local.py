"""The local executor: cells one after another, or one per GPU at once, on the machine at hand.

With GPUs (`--gpus 0,1` or every GPU nvidia-smi lists), each running cell gets
exactly one through CUDA_VISIBLE_DEVICES and at most one cell runs per GPU, so
both arms of a cell still share one device and no two cells share one. Cells
that run at once also get disjoint shares of the CPUs (`core_share`), as Slurm's
cpusets give its tasks: each run pins its load generator apart from its measuring
workers within what it may use, and two runs must not pick the same core. With
no GPU, cells run one at a time: two timed runs on one CPU would measure each
other. Each cell is the same task the Slurm executor runs.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping, Sequence

import attrs

from perfdsl.matrix.cells import Cell
from perfdsl.matrix.executor import Placement
from perfdsl.matrix.slurm_output import TaskState
from perfdsl.matrix.state import CellRecord

JOB = "local"


@attrs.define
class _Slot:
    cell: Cell
    placement: Placement
    process: subprocess.Popen[bytes] | None = None
    gpu: str | None = None


def core_share(usable: Sequence[int], slots: int, index: int) -> tuple[int, ...]:
    """The cores the cell in slot `index` of `slots` running at once may use: a contiguous
    share of `usable`, or all of it where a share would be under two cores (too few for a
    run to pin its load generator apart)."""
    cores = sorted(usable)
    if slots < 2 or len(cores) < 2 * slots:
        return tuple(cores)
    size = len(cores) // slots
    return tuple(cores[index * size : (index + 1) * size])


class LocalExecutor:
    """Runs the task module as child processes, at most one per GPU slot."""

    name = "local"

    def __init__(self, gpus: Sequence[str] = (), poll_s: float = 0.5) -> None:
        self.gpus = tuple(gpus)
        self.poll_s = poll_s
        self._queued: list[_Slot] = []
        self._running: dict[str, _Slot] = {}
        self._ended: dict[str, TaskState] = {}

    def launch(self, placement: Placement, cells: Sequence[Cell]) -> Mapping[str, str]:
        self._queued += [_Slot(cell, placement) for cell in cells]
        self._start_what_fits()
        return {cell.id: JOB for cell in cells}

    def observe(self, matrix: str, records: Sequence[CellRecord]) -> Mapping[str, TaskState]:
        for cell_id, slot in list(self._running.items()):
            assert slot.process is not None
            status = slot.process.poll()
            if status is not None:
                del self._running[cell_id]
                state = "COMPLETED" if status == 0 else "FAILED"
                self._ended[cell_id] = TaskState(0, slot.cell.index, state, None, f"{status}:0")
        self._start_what_fits()
        states = dict(self._ended)
        states.update({s.cell.id: TaskState(0, s.cell.index, "RUNNING") for s in self._running.values()})
        states.update(
            {s.cell.id: TaskState(0, s.cell.index, "PENDING", "waiting for a slot") for s in self._queued}
        )
        wanted = {r.id for r in records}
        return {cell_id: state for cell_id, state in states.items() if cell_id in wanted}

    def cancel(self, records: Sequence[CellRecord]) -> None:
        ids = {r.id for r in records}
        for slot in [s for s in self._queued if s.cell.id in ids]:
            self._queued.remove(slot)
            self._ended[slot.cell.id] = TaskState(
                0, slot.cell.index, "CANCELLED", "cancelled before it started"
            )
        for cell_id in ids & set(self._running):
            slot = self._running.pop(cell_id)
            assert slot.process is not None
            slot.process.terminate()
            slot.process.wait()
            self._ended[cell_id] = TaskState(0, slot.cell.index, "CANCELLED", "cancelled while running")

    def _share_cores(self, slot: _Slot, capacity: int) -> None:
        """Give a cell running beside others its share of the CPUs. Set on the task once it has
        started: it starts no thread or process before its interpreter is up, so all inherit it."""
        if capacity < 2 or slot.gpu is None or slot.process is None:
            return
        try:
            usable = sorted(os.sched_getaffinity(0))
            os.sched_setaffinity(slot.process.pid, core_share(usable, capacity, self.gpus.index(slot.gpu)))
        except (AttributeError, OSError):  # no affinity on this OS, or the task has already ended
            return

    def _start_what_fits(self) -> None:
        capacity = len(self.gpus) or 1
        while self._queued and len(self._running) < capacity:
            slot = self._queued.pop(0)
            busy = {s.gpu for s in self._running.values()}
            slot.gpu = next((g for g in self.gpus if g not in busy), None)
            environment = dict(os.environ)
            if slot.gpu is not None:
                environment["CUDA_VISIBLE_DEVICES"] = slot.gpu
            command = [
                sys.executable,
                "-m",
                "perfdsl.matrix.task",
                str(slot.placement.cells_file),
                str(slot.cell.index),
            ]
            logs = slot.placement.directory / "logs"
            logs.mkdir(exist_ok=True)
            with open(logs / f"local-{slot.cell.index}.out", "wb") as log:
                slot.process = subprocess.Popen(
                    command, env=environment, stdout=log, stderr=subprocess.STDOUT
                )
            self._share_cores(slot, capacity)
            self._running[slot.cell.id] = slot
