"""The matrix report from planted cell bundles: environment differences first, each cell's verdicts,
faults with their state and reason, and cross-cell ratios labelled between-machine (unpaired).

Machine `a`'s cell plants a change at 0.8 x its baseline under numba 0.68.1;
machine `b`'s plants 0.9 x under numba 0.69.0, so across machines the change
arm is 12.5 % slower, which only the unpaired comparison may say.
"""

from __future__ import annotations

import re
from pathlib import Path

import attrs
from evaluate_fixtures import make_bundle, planted_environment
from matrix_support import open_matrix

from perfdsl.matrix.drive import initial_state
from perfdsl.matrix.report import read_cells, render_report
from perfdsl.matrix.state import CellRecord

TEXT = """name = "fleet"
study = "{study}"
targets = ["cpu"]
[[machines]]
name = "a"
constraint = "a100"
[[machines]]
name = "b"
constraint = "h100"
[[environments]]
name = "current"
[[environments]]
name = "broken"
python = "/nonexistent/python"
"""


def test_the_report_puts_environment_first_and_labels_cross_cell_ratios(tmp_path: Path) -> None:
    from matrix_support import STUDY

    matrix = open_matrix(tmp_path, TEXT.format(study=STUDY))
    assert [c.id for c in matrix.cells] == [
        "cpu.a.current.all",
        "cpu.a.broken.all",
        "cpu.b.current.all",
        "cpu.b.broken.all",
    ]
    records = []
    for cell, ratio, numba, seed in (
        (matrix.cells[0], 0.8, "0.68.1", 1),
        (matrix.cells[2], 0.9, "0.69.0", 3),
    ):
        made = make_bundle(
            tmp_path / cell.id, seed=seed, kernel_ratio=ratio, environment=planted_environment(numba, "a")
        )
        bundle = Path(cell.directory) / "runs" / "planted" / made.name
        bundle.parent.mkdir(parents=True)
        made.rename(bundle)
        records.append(
            CellRecord(
                cell.id,
                cell.index,
                "COMPLETED",
                None,
                f"9_{cell.index}",
                1,
                bundle.relative_to(matrix.directory).as_posix(),
                "node-a",
            )
        )
    records += [
        CellRecord(
            "cpu.a.broken.all",
            1,
            "FAILED",
            "cannot start /nonexistent/python: No such file or directory",
            "9_1",
            1,
        ),
        CellRecord("cpu.b.broken.all", 3, "TIMEOUT", "DUE TO TIME LIMIT | planted *", "9_3", 2),
    ]
    state = attrs.evolve(initial_state(matrix, "slurm"), cells=tuple(records)).with_cells(records)
    report = render_report(matrix, state, read_cells(matrix, state))

    assert "| package numba | 0.68.1 | 0.69.0 |" in report
    assert (
        report.index("| package numba |") < report.index("## Every cell") < report.index("## Between cells")
    )
    assert re.search(
        r"\| `cpu.a.current.all` \| COMPLETED \| node-a \| op: 0\.(79|80)\d \[0\.\d+, 0\.\d+\] faster \|",
        report,
    )
    assert (
        "| `cpu.a.broken.all` | FAILED | 1 | cannot start /nonexistent/python: No such file or directory |"
        in report
    )
    assert r"| `cpu.b.broken.all` | TIMEOUT | 2 | DUE TO TIME LIMIT \| planted \* |" in report
    (row,) = [
        line
        for line in report.splitlines()
        if line.startswith("| `cpu.b.current.all` | `cpu.a.current.all` | op | change")
    ]
    ratio = float(row.split("|")[5].split()[0])
    assert 1.10 < ratio < 1.15 and row.endswith("| slower, between-machine (unpaired) |")
    assert "not interleaved" in report
