"""`perfdsl run STUDY`: execute the kernels and collect the evidence into a bundle."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from perfdsl import targets
from perfdsl.commands import CommandError
from perfdsl.commands.check import checked_study
from perfdsl.nodes import Study

DEFAULT_CALL_LIMIT_S = 120.0
"""The default of --time-limit; perfdsl/runtime/isolation.py's, kept here so that building
the argument parser imports nothing of the runtime."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study", help="the .perf study to run")
    parser.add_argument(
        "--target",
        choices=targets.CHOICES,
        default=targets.AUTO,
        help="cuda (a GPU), cpu (Numba CPU kernels), cudasim (correctness only), "
        "auto (cuda when a GPU is usable, else cpu; the default)",
    )
    parser.add_argument(
        "--quick", action="store_true", help="small shapes and few repeats: a smoke run, not evidence-grade"
    )
    parser.add_argument(
        "--artifacts", metavar="DIR", help="where bundles go (default: the study's `artifacts` path)"
    )
    parser.add_argument(
        "--quiet",
        action="store_true",
        help="no progress on stderr (by default: the estimated length, then a live view of the blocks)",
    )
    parser.add_argument(
        "--time-limit",
        metavar="SECONDS",
        type=_positive_seconds,
        default=DEFAULT_CALL_LIMIT_S,
        help="how long measured code may run without progress (one correctness case, one "
        "timed call) before its worker is stopped and the arm recorded as failed "
        f"(default {DEFAULT_CALL_LIMIT_S:g}; a first call includes compilation)",
    )


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"`{text}`: the time limit must be above 0 seconds")
    return value


def _one_thread_pool() -> None:
    """Keep OpenBLAS single-threaded so that Numba's parallel kernels own the cores.

    An application that mixes NumPy matrix products with Numba `parallel=True`
    kernels runs two thread pools whose idle threads spin on the same cores: on
    a 2-core machine that made one request 100x slower and turned the
    end-to-end comparison into a measurement of the contention. OpenBLAS reads
    the variable when NumPy is first imported, so it is set before that; a value
    the user set is kept, and environment.json records whichever applied.

    For the same reason OpenMP (Numba's default threading layer here) waits
    passively: with its default spin-then-yield wait, a parallel call on a
    2-core machine with one other busy process took 8 ms whatever its size
    (the caller spins while the worker it waits for has no core), and a
    4 ms SLO could never be met. Sleeping costs a wake-up of some microseconds
    per call, noise beside a full-size kernel.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def run(args: argparse.Namespace) -> int:
    study = checked_study(Path(args.study), "run")
    if study is None:
        return 1
    if study.imported:
        return _run_imported(study, args)
    if args.target == targets.CUDASIM.name:
        # Numba reads this once, when numba.cuda is first imported: set it before anything does.
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    _one_thread_pool()

    from perfdsl.plan import PlanError, plan
    from perfdsl.runtime.execute import execute
    from perfdsl.runtime.isolation import Limits, WorkerError
    from perfdsl.runtime.progress import RunProgress
    from perfdsl.runtime.resolve import RunError
    from perfdsl.runtime.targets import TargetError, make_target

    try:
        target = make_target(args.target)
        run_plan = plan(study, target.name, args.quick)
    except (TargetError, PlanError) as error:
        raise CommandError(str(error)) from None
    artifacts = Path(args.artifacts) if args.artifacts else Path(run_plan.artifacts)
    quiet = args.quiet
    if not quiet:
        print(
            f"perfdsl run: {study.name.id} on {target.name}{' (quick)' if args.quick else ''}",
            file=sys.stderr,
        )
    try:
        bundle = execute(
            run_plan, target, artifacts, RunProgress(sys.stderr, quiet=quiet), Limits(args.time_limit)
        )
    except (RunError, WorkerError) as error:
        raise CommandError(str(error)) from None
    except OSError as error:
        # A directory that cannot be written, or a full disk: the writer has removed
        # its temporary directory, so nothing of the bundle is left.
        where = error.filename or artifacts
        raise CommandError(f"{where}: cannot write the bundle: {error.strerror or error}") from None
    print(bundle)
    return 0


def _run_imported(study: Study, args: argparse.Namespace) -> int:
    """A wholly imported study: copy its files into a bundle; no target, no code, no GPU."""
    from perfdsl.bundle.files import BundleError
    from perfdsl.imports.evidence import ImportFormatError
    from perfdsl.runtime.imported import artifacts_of, run_imported

    artifacts = Path(args.artifacts) if args.artifacts else artifacts_of(study)
    print(f"perfdsl run: {study.name.id} from imported files (no code is run)", file=sys.stderr)
    try:
        bundle = run_imported(study, artifacts)
    except (ImportFormatError, BundleError) as error:
        raise CommandError(str(error)) from None
    except OSError as error:
        raise CommandError(f"{artifacts}: cannot write the bundle: {error.strerror or error}") from None
    print(bundle)
    return 0
