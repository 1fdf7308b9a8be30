"""`perfdsl matrix MATRIX_FILE`: run a study's matrix of cells, locally or as Slurm job arrays, and report it.

Run again with the same file to resume: completed cells are kept, cells still
queued are watched, and only missing or failed ones are submitted again.
Exit 0 when every cell completed, 1 when any has no result (each recorded with
its state and reason in the report), 2 when the matrix could not be run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from perfdsl.commands import CommandError

if TYPE_CHECKING:
    from collections.abc import Callable
    from contextlib import AbstractContextManager

    from perfdsl.matrix.drive import Matrix
    from perfdsl.matrix.executor import Executor
    from perfdsl.matrix.state import MatrixState

EXECUTORS = ("local", "slurm")
_DAY_S = 86400


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("matrix", help="the matrix file (TOML) naming the study and its axes")
    parser.add_argument(
        "--executor", choices=EXECUTORS, default="local", help="where cells run (default local)"
    )
    parser.add_argument(
        "--dir",
        metavar="DIR",
        help="where matrices go (default: matrices/ beside the matrix file); each matrix in DIR/<id>",
    )
    parser.add_argument(
        "--no-wait", action="store_true", help="submit and return (slurm); watch later with --status"
    )
    parser.add_argument("--status", action="store_true", help="only refresh and report the cells' states")
    parser.add_argument("--cancel", action="store_true", help="cancel the matrix's queued and running cells")
    parser.add_argument(
        "--gpus",
        metavar="IDS",
        help="local: the GPUs to give cells, one each, as CUDA_VISIBLE_DEVICES (e.g. 0,1); default none, "
        "cells one after another",
    )
    parser.add_argument("--poll", metavar="SECONDS", type=_seconds, help="seconds between looks at the queue")
    parser.add_argument("--pdf", action="store_true", help="also build the matrix report as PDF")


def _seconds(text: str) -> float:
    """A --poll value: seconds from 0 to a day (`nan`, `inf`, `-1` and `1e300` cannot be slept)."""
    try:
        seconds: float | None = float(text)
    except ValueError:
        seconds = None
    if seconds is None or not 0 <= seconds <= _DAY_S:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from 0 to {_DAY_S} (e.g. 10)")
    return seconds


def run(args: argparse.Namespace) -> int:
    from perfdsl.commands.check import checked_study
    from perfdsl.matrix import drive
    from perfdsl.matrix.executor import ExecutorError
    from perfdsl.matrix.slurm_output import SlurmOutputError
    from perfdsl.matrix.spec import MatrixError, read_spec
    from perfdsl.matrix.state import MatrixBusy, locked, read_state

    path = Path(args.matrix)
    try:
        spec = read_spec(path)
    except MatrixError as error:
        raise CommandError(str(error)) from None
    if not spec.study.is_file():
        raise CommandError(f"{path}: study: {spec.study} is not a file")
    study = checked_study(spec.study, "matrix")
    if study is None:
        return 2  # the matrix could not be run (docs/matrix.md); 1 says a cell has no result
    base = Path(args.dir) if args.dir else path.parent / "matrices"
    matrix = drive.open_matrix(spec, study.source.text, base)
    executor = _executor(args)

    def say(line: str) -> None:
        print(f"perfdsl matrix: {line}", file=sys.stderr, flush=True)

    try:
        matrix.directory.mkdir(parents=True, exist_ok=True)
        with locked(matrix.directory):
            previous = read_state(matrix.state_file)
            if previous and previous.executor != executor.name and any(r.live for r in previous.cells):
                raise CommandError(
                    f"{matrix.directory}: cells are still queued under `{previous.executor}`: "
                    f"use --executor {previous.executor}"
                )
            state = drive.load_state(matrix, executor.name)
            say(f"{matrix.id} in {matrix.directory}")
            state = drive.refresh(matrix, executor, state, say)
            if args.cancel:
                state = drive.cancel(matrix, executor, state, "cancelled with perfdsl matrix --cancel")
            elif not args.status:
                state = drive.submit(matrix, executor, state, say)
                if executor.name == "local":
                    # The local cells die with this process: nobody else can act on them meanwhile.
                    state = _watch(matrix, executor, state, say, None)
        if executor.name != "local" and not (args.cancel or args.status or args.no_wait):
            # The lock is taken for each look only, so `--status` or `--cancel` can act meanwhile.
            state = _watch(matrix, executor, state, say, lambda: locked(matrix.directory, wait_s=None))
        with locked(matrix.directory, wait_s=None):
            report = _write_report(matrix, state, args.pdf)
    except MatrixBusy as error:
        raise CommandError(str(error)) from None
    except (ExecutorError, SlurmOutputError) as error:
        raise CommandError(str(error)) from None
    except ValueError as error:
        raise CommandError(str(error)) from None
    except OSError as error:
        raise CommandError(f"{error.filename or matrix.directory}: {error.strerror or error}") from None
    print(report)
    return 0 if all(r.state == "COMPLETED" for r in state.cells) else 1


def _executor(args: argparse.Namespace) -> Executor:
    if args.executor == "slurm":
        from perfdsl.matrix.slurm import SlurmExecutor

        return SlurmExecutor(poll_s=args.poll if args.poll is not None else 10.0)
    from perfdsl.matrix.local import LocalExecutor

    gpus = [g.strip() for g in args.gpus.split(",") if g.strip()] if args.gpus else []
    return LocalExecutor(gpus, poll_s=args.poll if args.poll is not None else 0.5)


def _watch(
    matrix: Matrix,
    executor: Executor,
    state: MatrixState,
    say: Callable[[str], None],
    guard: Callable[[], AbstractContextManager[None]] | None,
) -> MatrixState:
    from perfdsl.matrix import drive

    try:
        return drive.watch(matrix, executor, state, say, guard=guard)
    except KeyboardInterrupt:
        if executor.name == "local":
            drive.cancel(matrix, executor, drive.load_state(matrix, executor.name), "interrupted (Ctrl-C)")
        else:
            say("stopped watching; the array tasks go on: `perfdsl matrix --status` or `--cancel` later")
        raise


def _write_report(matrix: Matrix, state: MatrixState, pdf: bool) -> Path:
    from perfdsl.atomic import replacing
    from perfdsl.matrix.report import read_cells, render_report

    markdown = render_report(matrix, state, read_cells(matrix, state))
    path = matrix.directory / "report.md"
    with replacing(path) as handle:
        handle.write(markdown.encode("utf-8"))
    if not pdf:
        return path
    import hashlib
    from datetime import UTC, datetime

    from perfdsl.report.html import ReportMeta, render_html
    from perfdsl.report.pdf import write_pdf

    meta = ReportMeta(
        study=matrix.spec.name,
        title=f"Matrix {matrix.spec.name}",
        bundle_id=matrix.id,
        study_hash=hashlib.sha256(matrix.spec.study.read_bytes()).hexdigest()[:12],
        generated_at=datetime.now(UTC).replace(microsecond=0),
    )
    pdf_path = path.with_suffix(".pdf")
    write_pdf(render_html(markdown, meta, {}, inline_figures=False), pdf_path)
    return pdf_path
