"""The matrix report: what differs between the cells' machines first, then every cell's verdicts.

Each completed cell is read as `perfdsl compare` reads a run (`history.runs.read_run`:
verified, evaluated from its raw samples), so a cell's verdicts are exactly its
own run's. Within a cell both arms were interleaved on one device; across cells
nothing was, so every cross-cell figure is labelled between-machine (unpaired)
and comes from `history.across.compare_runs`, the unpaired analysis `compare`
uses, after the environment facts that differ. Cells that did not complete are
listed with their Slurm state and reason: a fault is part of the result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import attrs

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.kernels import ShapeResult
from perfdsl.history.across import NOT_INTERLEAVED, compare_runs
from perfdsl.history.runs import Run, RunsError, read_run
from perfdsl.matrix.drive import Matrix
from perfdsl.matrix.state import COMPLETED, MatrixState

BETWEEN_MACHINE = "between-machine (unpaired)"
_SPECIAL = re.compile(r"([\\`*_\[\]<>|#])")


@attrs.frozen
class CellRun:
    """A cell's record, with its run when it completed and its bundle reads."""

    cell: str
    target: str
    machine: str
    environment: str
    shapes: str
    state: str
    reason: str | None
    node: str | None
    attempts: int
    run: Run | None


def read_cells(matrix: Matrix, state: MatrixState) -> tuple[CellRun, ...]:
    """Every cell with its record; a completed cell's bundle evaluated (unreadable: said so)."""
    out = []
    for cell in matrix.cells:
        record = state.cell(cell.id)
        run, reason = None, record.reason
        if record.state == COMPLETED and record.bundle:
            try:
                run = read_run(matrix.directory / record.bundle)
            except RunsError as error:
                reason = f"bundle unreadable: {error}"
        out.append(
            CellRun(
                cell.id,
                cell.target,
                cell.machine,
                cell.environment,
                cell.shapes_name,
                record.state if run or record.state != COMPLETED else "UNREADABLE",
                reason,
                record.node,
                record.attempts,
                run,
            )
        )
    return tuple(out)


def render_report(matrix: Matrix, state: MatrixState, cells: Sequence[CellRun]) -> str:
    """The matrix report as Markdown."""
    done = [c for c in cells if c.run is not None]
    counts: dict[str, int] = {}
    for c in cells:
        counts[c.state] = counts.get(c.state, 0) + 1
    tally = ", ".join(f"{n} {s.lower().replace('_', ' ')}" for s, n in sorted(counts.items()))
    lines = [
        f"# Matrix {_esc(matrix.spec.name)}",
        "",
        f"Study `{_code(matrix.spec.study.name)}`, matrix `{matrix.id}`, "
        f"executor {state.executor or 'none'}: {len(cells)} cells ({tally}).",
        "",
    ]
    if any(c.run and c.run.evaluation.quick for c in cells):
        lines += ["> [!WARNING]", "> Quick (smoke-run) cells: their timings are not evidence.", ""]
    lines += _collapsed_shapes(done)
    lines += _environment(done)
    lines += _verdicts(cells)
    lines += _faults(cells)
    lines += _limitations(matrix, cells)
    lines += _between(done)
    return "\n".join(lines).rstrip() + "\n"


def _collapsed_shapes(done: Sequence[CellRun]) -> list[str]:
    """Cells of different shape selections that measured the same shapes: a quick run scales
    every shape down to its smoke size, so a shapes axis under `quick = true` measures one
    shape, and its cells' verdicts would otherwise read as verdicts at the shapes selected."""
    measured: dict[tuple[str, tuple[str, ...]], set[str]] = {}
    for c in done:
        if c.run is None:
            continue
        labels = tuple(sorted({s.label for op in c.run.evaluation.operations for s in op.shapes}))
        measured.setdefault((c.target, labels), set()).add(c.shapes)
    collapsed = [(labels, sorted(axis)) for (_, labels), axis in measured.items() if len(axis) > 1]
    if not collapsed:
        return []
    said = "; ".join(
        f"shape selections {', '.join(f'`{_esc(a)}`' for a in axis)} all measured "
        f"{', '.join(_esc(label) for label in labels) or 'no shape'}"
        for labels, axis in collapsed
    )
    return [
        "> [!WARNING]",
        f"> Cells of different shapes measured the same ones ({said}): a quick run scales every "
        "shape down to its smoke size. Run the matrix with `quick = false` to compare shapes.",
        "",
    ]


def _environment(done: Sequence[CellRun]) -> list[str]:
    lines = ["## Environment differences", ""]
    environments = [(c.cell, c.run.environment) for c in done if c.run and c.run.environment]
    if len(environments) < 2:
        return [*lines, "Fewer than two completed cells with an environment: nothing to compare.", ""]
    names = list(dict.fromkeys(name for _, env in environments for name, _ in env.facts))
    values = {cell: dict(env.facts) for cell, env in environments}
    varying = [n for n in names if len({values[c].get(n, "absent") for c, _ in environments}) > 1]
    if not varying:
        return [*lines, "Every completed cell ran with the same recorded machine, software and settings.", ""]
    lines += [
        "| fact | " + " | ".join(f"`{c}`" for c, _ in environments) + " |",
        "|---|" + "---|" * len(environments),
    ]
    lines += [
        f"| {_esc(n)} | " + " | ".join(_esc(values[c].get(n, "absent")) for c, _ in environments) + " |"
        for n in varying
    ]
    return [*lines, "", "Table: facts that differ between the cells, the only ones shown", ""]


def _verdicts(cells: Sequence[CellRun]) -> list[str]:
    lines = [
        "## Every cell",
        "",
        "| cell | state | node | kernel: change / baseline | end to end | predictions | correctness |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        if c.run is None:
            lines.append(f"| `{c.cell}` | {c.state} | {_esc(c.node or '-')} | - | - | - | - |")
            continue
        e = c.run.evaluation
        lines.append(
            f"| `{c.cell}` | {c.state} | {_esc(c.node or '-')} | {_kernels(e)} | {_end_to_end(e)} | "
            f"{_predictions(e)} | {_correctness(e)} |"
        )
    lines += ["", "Table: each cell's own verdicts (both arms interleaved on one machine)", ""]
    regress = [
        f"- `{c.cell}`: `{op.name}` regresses at {', '.join(_esc(s) for s in op.regressions)}"
        for c in cells
        if c.run
        for op in c.run.evaluation.operations
        if op.regressions
    ]
    refuted = [
        f"- `{c.cell}`: refuted: {_esc(p.text)} ({_esc(p.message)})"
        for c in cells
        if c.run
        for p in c.run.evaluation.predictions
        if p.verdict == "refuted"
    ]
    if regress or refuted:
        lines += ["Where the change regresses or a prediction is refuted:", "", *regress, *refuted, ""]
    return lines


def _faults(cells: Sequence[CellRun]) -> list[str]:
    failed = [c for c in cells if c.run is None]
    if not failed:
        return []
    lines = ["## Cells without a result", "", "| cell | state | attempts | reason |", "|---|---|---|---|"]
    lines += [f"| `{c.cell}` | {c.state} | {c.attempts} | {_esc(c.reason or '-')} |" for c in failed]
    return [*lines, "", "Table: the Slurm (or local) state and reason of each cell that has no bundle", ""]


def _limitations(matrix: Matrix, cells: Sequence[CellRun]) -> list[str]:
    """Each declared limit: measured where a completed cell ran exactly its shapes, else a claim."""
    from perfdsl.parse import parse
    from perfdsl.plan import shape_argument, shape_dicts
    from perfdsl.source import Source

    study = parse(Source(str(matrix.spec.study), matrix.spec.study.read_text(encoding="utf-8"))).study
    if study is None or not study.limits:
        return []
    selections = {c.id: [dict(s) for s in c.shapes] if c.shapes else None for c in matrix.cells}
    items = []
    for limit in study.limits:
        head = f"- **{_esc(limit.kind.id)}** {_esc(limit.text.value) if limit.text else '(no text)'}"
        declared = shape_dicts(limit.shapes) if limit.kind.id == "regression" else []
        if not declared:
            items.append(f"{head}: a claim; no shapes to measure")
            continue
        found = [
            f"  - {_measured(c, sizes, shape)}"
            for c in cells
            if c.run is not None
            and (selection := selections[c.cell])
            and all(s in declared for s in selection)
            for op in c.run.evaluation.operations
            if len(op.shapes) == len(selection)
            for sizes, shape in zip(selection, op.shapes, strict=True)
        ]
        where = ", ".join(_esc(shape_argument(s)) for s in declared)
        items.append(
            f"{head} ({where}): " + ("measured" if found else "a claim; no completed cell ran these shapes")
        )
        items += found
    return ["## Limitations", "", *items, ""]


def _measured(cell: CellRun, sizes: dict[str, int], shape: ShapeResult) -> str:
    """One limit shape as a cell measured it: regresses or not, with the ratio and its interval."""
    from perfdsl.plan import shape_argument

    where = f"on `{cell.machine}` (cell `{cell.cell}`) at {_esc(shape_argument(sizes))}"
    if shape.sizes != sizes:
        where += f", run as {_esc(shape.label)} (quick)"
    comparison = shape.usable
    if comparison is None:
        return f"{where}: not evidence ({_esc(shape.invalid or shape.missing or 'no comparison')})"
    verb = {"slower": "regresses", "faster": "does not regress (faster)"}.get(
        comparison.verdict, f"{comparison.verdict}"
    )
    interval = comparison.interval
    if interval:
        shown = f"{comparison.ratio:.3f} [{interval[0]:.3f}, {interval[1]:.3f}]"
    else:
        shown = (
            f"{comparison.ratio:.3f} (no interval: {_esc(comparison.interval_missing or 'too few blocks')})"
        )
    return f"{where}: {verb}, change / baseline {shown}"


def _between(done: Sequence[CellRun]) -> list[str]:
    """Each cell against the first completed cell of the same target and shapes: only the machine
    or the environment differs between them, and nothing of them was interleaved."""
    groups: dict[tuple[str, str], list[CellRun]] = {}
    for c in done:
        groups.setdefault((c.target, c.shapes), []).append(c)
    pairs = [(group[0], other) for group in groups.values() for other in group[1:]]
    lines = [f"## Between cells: {BETWEEN_MACHINE}", ""]
    if not pairs:
        return [
            *lines,
            "No two completed cells share a target and shapes: nothing to compare across machines.",
            "",
        ]
    lines += [
        f"Each cell against the first completed cell with its target and shapes; {_esc(NOT_INTERLEAVED)}.",
        "",
        "| cell | against | operation | arm | cell / against [interval] | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for reference, c in pairs:
        assert reference.run is not None and c.run is not None
        result = compare_runs(reference.run, c.run)
        rows = [(op.name, arm, x) for op in result.operations for arm, x in op.combined]
        if not rows:
            lines.append(f"| `{c.cell}` | `{reference.cell}` | - | - | no shape of both with evidence | - |")
        for name, arm, x in rows:
            lines.append(
                f"| `{c.cell}` | `{reference.cell}` | {_esc(name)} | {arm} | "
                f"{x.ratio:.4f} [{x.ci_low:.4f}, {x.ci_high:.4f}] | {x.verdict}, {BETWEEN_MACHINE} |"
            )
    return [*lines, "", f"Table: weighted time ratios across cells, {BETWEEN_MACHINE}", ""]


def _kernels(e: Evaluation) -> str:
    if not e.timings_valid:
        return f"not evidence ({_esc(e.timings_note or 'timings invalid')})"
    parts = []
    for op in e.operations:
        if op.combined is None:
            parts.append(f"{_esc(op.name)}: {_esc(op.combined_missing or 'not combined')}")
        else:
            x = op.combined
            parts.append(f"{_esc(op.name)}: {x.ratio:.3f} [{x.ci_low:.3f}, {x.ci_high:.3f}] {x.verdict}")
    return "; ".join(parts) or "-"


def _end_to_end(e: Evaluation) -> str:
    if e.end_to_end is None:
        return _esc(e.end_to_end_missing or "-")
    comparison = e.end_to_end.comparison
    if comparison is None:
        return _esc(e.end_to_end.comparison_missing or "-")
    return f"{comparison.ratio:.3f} {comparison.verdict}"


def _predictions(e: Evaluation) -> str:
    if not e.predictions:
        return _esc(e.expectations_missing or "none")
    counts: dict[str, int] = {}
    for p in e.predictions:
        counts[p.verdict] = counts.get(p.verdict, 0) + 1
    return ", ".join(f"{n} {v}" for v, n in counts.items())


def _correctness(e: Evaluation) -> str:
    failed = [op.name for op in e.operations if not op.correctness.passed]
    return f"failed: {', '.join(_esc(n) for n in failed)}" if failed else "passed"


def _esc(text: str) -> str:
    """Text from a study or a log, inert in Markdown: punctuation escaped, one line."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _code(text: str) -> str:
    return str(text).replace("`", "'")
