"""A matrix's cells: the product of its axes, each one ordinary `perfdsl run`.

A cell's index is its place in the product, fixed by the matrix file alone, so
it is also its Slurm array task id in every submission: a resumed array names
only the missing indices. The matrix id joins the matrix's name with a hash of
the matrix file and the study, so an edited file or study is a new matrix in a
new directory, never a mix of old and new cells.

The cell file (cells.json) is how parameters reach a task: the job script
passes its path and the array task id as arguments, and the task reads its
cell from it. Nothing in it is ever pasted into a command line.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs

from perfdsl.atomic import replacing
from perfdsl.matrix.spec import MatrixSpec

CELLS_FORMAT = "perfdsl-matrix-cells"
CELLS_VERSION = 1


@attrs.frozen
class Cell:
    """One cell: what `perfdsl run` is given, and where its files go."""

    index: int
    id: str
    """`target.machine.environment.shapes`: unique in the matrix, a directory name."""
    target: str
    machine: str
    environment: str
    shapes_name: str
    study: str
    python: str
    quick: bool
    time_limit: float | None
    shapes: tuple[tuple[tuple[str, int], ...], ...] | None
    directory: str
    attempt: int = 0

    @property
    def needs_gpu(self) -> bool:
        """A cuda cell cannot run where no GPU is visible: that is recorded, not attempted."""
        return self.target == "cuda"

    def run_command(self) -> list[str]:
        """The `perfdsl run` argument vector (never a shell line)."""
        command = [self.python, "-m", "perfdsl", "run", self.study, "--target", self.target, "--quiet"]
        command += ["--artifacts", str(Path(self.directory) / "runs")]
        if self.quick:
            command.append("--quick")
        if self.time_limit is not None:
            command += ["--time-limit", repr(self.time_limit)]
        for shape in self.shapes or ():
            command += ["--shape", ",".join(f"{k}={v}" for k, v in shape)]
        return command


def matrix_id(spec: MatrixSpec, study_text: str) -> str:
    """`name-hash`: the same file and study give the same id (a resume), any edit a new one."""
    digest = hashlib.sha256(spec.text.encode("utf-8") + b"\0" + study_text.encode("utf-8"))
    return f"{spec.name}-{digest.hexdigest()[:10]}"


def expand(spec: MatrixSpec, directory: Path) -> tuple[Cell, ...]:
    """Every cell of the matrix, in a fixed order: targets, machines, environments, shapes."""
    cells = []
    product = itertools.product(spec.targets, spec.machines, spec.environments, spec.shapes)
    for index, (target, machine, environment, shapes) in enumerate(product):
        cell_id = f"{target}.{machine.name}.{environment.name}.{shapes.name}"
        cells.append(
            Cell(
                index=index,
                id=cell_id,
                target=target,
                machine=machine.name,
                environment=environment.name,
                shapes_name=shapes.name,
                study=str(spec.study),
                python=environment.python or sys.executable,
                quick=spec.quick,
                time_limit=spec.time_limit,
                shapes=shapes.select,
                directory=str(directory / "cells" / cell_id),
            )
        )
    return tuple(cells)


def write_cells(path: Path, matrix: str, cells: Sequence[Cell]) -> None:
    """Write the cell file atomically: a task starting meanwhile reads the old one or the new one."""
    data = {
        "format": CELLS_FORMAT,
        "version": CELLS_VERSION,
        "matrix": matrix,
        "cells": [attrs.asdict(cell) for cell in cells],
    }
    with replacing(path) as handle:
        handle.write(json.dumps(data, indent=1).encode("utf-8"))


def read_cell(path: Path, index: int) -> Cell:
    """The cell at `index` of a cell file (ValueError when there is none)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    if data.get("format") != CELLS_FORMAT or data.get("version") != CELLS_VERSION:
        raise ValueError(f"{path}: not a version-{CELLS_VERSION} matrix cell file")
    found = [c for c in data["cells"] if c["index"] == index]
    if not found:
        raise ValueError(f"{path}: no cell with index {index}")
    return _cell(found[0])


def _cell(data: dict[str, Any]) -> Cell:
    shapes = data["shapes"]
    data = dict(data, shapes=None if shapes is None else tuple(tuple(tuple(p) for p in s) for s in shapes))
    return Cell(**data)
