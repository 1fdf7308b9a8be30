"""The matrix report from planted cell bundles: environment differences first, each cell's verdicts,
faults with their state and reason, and cross-cell ratios labelled between-machine (unpaired).

Machine `a`'s cell plants a change at 0.8 x its baseline under numba 0.68.1;
machine `b`'s plants 0.9 x under numba 0.69.0, so across machines the change
arm is 12.5 % slower, which only the unpaired comparison may say.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path

import attrs
from evaluate_fixtures import make_bundle, planted_environment
from matrix_support import open_matrix
from pdf_layout import words_past_margin

from perfdsl.matrix.drive import initial_state
from perfdsl.matrix.report import read_cells, render_report
from perfdsl.matrix.state import CellRecord
from perfdsl.report.html import ReportMeta, render_html

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

META = ReportMeta(
    study="fleet",
    title="Matrix fleet",
    bundle_id="fleet-0",
    study_hash="0" * 12,
    generated_at=datetime(2026, 1, 1, tzinfo=UTC),
)


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
    assert words_past_margin(render_html(report, META, {}, inline_figures=False)) == []


def test_a_limit_measured_by_a_cell_is_evidence_and_the_others_are_claims(tmp_path: Path) -> None:
    """The planted study declares a `limit regression` at both its shapes and a text-only `limit risk`;
    the one cell runs exactly those shapes, with the change planted 1.2 x slower."""
    from evaluate_fixtures import study_text

    text = study_text(["op.time ratio <= 0.9"])
    closing = text.rstrip().rindex("}")
    limits = (
        '  limit regression "Small rows underfill the loop" { shapes (M, N) in [(64, 4096), (256, 1024)] }\n'
        '  limit risk "A planted risk"\n'
    )
    study = tmp_path / "planted.perf"
    study.write_text(text[:closing] + limits + text[closing:], encoding="utf-8")
    matrix = open_matrix(
        tmp_path,
        f'name = "limits"\nstudy = "{study}"\ntargets = ["cpu"]\n'
        '[[shapes]]\nname = "limit"\nselect = [{M = 64, N = 4096}, {M = 256, N = 1024}]\n',
    )
    (cell,) = matrix.cells
    made = make_bundle(
        tmp_path / "made", seed=5, kernel_ratio=1.2, environment=planted_environment("0.68.1", "a")
    )
    bundle = Path(cell.directory) / "runs" / "planted" / made.name
    bundle.parent.mkdir(parents=True)
    made.rename(bundle)
    record = CellRecord(
        cell.id, 0, "COMPLETED", None, "local", 1, bundle.relative_to(matrix.directory).as_posix()
    )
    state = initial_state(matrix, "local").with_cells([record])
    report = render_report(matrix, state, read_cells(matrix, state))

    section = report[report.index("## Limitations") :]
    assert "- **regression** Small rows underfill the loop (M=64,N=4096, M=256,N=1024): measured" in section
    assert "- **risk** A planted risk: a claim; no shapes to measure" in section
    measured = re.findall(
        r"on `any` \(cell `cpu.any.current.limit`\) at (\S+): regresses, change / baseline 1\.(\d+)", section
    )
    assert [shape for shape, _ in measured] == ["M=64,N=4096", "M=256,N=1024"]
    assert all(180 < int(digits) < 220 for _, digits in measured)


def test_cells_of_different_shapes_that_measured_the_same_ones_are_said_to(tmp_path: Path) -> None:
    """A quick matrix timed each cell of its shapes axis at the same smoke shape, and the report
    read as verdicts at the shapes selected."""
    from matrix_support import MATRIX_SPEC, STUDY

    axis = MATRIX_SPEC[MATRIX_SPEC.index("[[shapes]]") :]  # two cells: N = 4096 and N = 65536
    matrix = open_matrix(tmp_path, f'name = "axis"\nstudy = "{STUDY}"\ntargets = ["cpu"]\n{axis}')
    records = []
    for cell in matrix.cells:
        made = make_bundle(tmp_path / cell.id, seed=cell.index + 1)  # the same planted shapes in both
        bundle = Path(cell.directory) / "runs" / "planted" / made.name
        bundle.parent.mkdir(parents=True)
        made.rename(bundle)
        records.append(
            CellRecord(
                cell.id, cell.index, "COMPLETED", None, f"1_{cell.index}", 1,
                bundle.relative_to(matrix.directory).as_posix(), "node-a",
            )
        )  # fmt: skip
    state = attrs.evolve(initial_state(matrix, "local"), cells=tuple(records)).with_cells(records)
    report = render_report(matrix, state, read_cells(matrix, state))
    assert (
        "Cells of different shapes measured the same ones (shape selections `mid`, `small` all measured"
        in report
    )
    one = initial_state(matrix, "local").with_cells(records[:1])  # the other cell not yet run
    assert "measured the same ones" not in render_report(matrix, one, read_cells(matrix, one))
