"""`perfdsl run STUDY`: execute the kernels and collect the evidence into a bundle."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from perfdsl import targets
from perfdsl.commands import CommandError
from perfdsl.commands.check import checked_study
from perfdsl.nodes import Study
from perfdsl.shape_order import declared_order, shape_words

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
        "--shape",
        metavar="SIZES",
        action="append",
        type=_shape,
        dest="shapes",
        help="run only this one of the workload's shapes, as `M=64,N=4096` (repeat for several; "
        "default: every declared shape)",
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
    parser.add_argument(
        "--no-pin",
        action="store_true",
        help="leave the measuring workers and the load generator where the OS puts them (by default "
        "the generator gets a core of its own; on a machine busy with other work a pinned worker "
        "cannot move off a busy core); environment.json records which",
    )


MAX_CALL_LIMIT_S = 1e6
"""The longest --time-limit: a call that makes no progress for 11 days is not being measured."""


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{text}` is not a number of seconds") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"`{text}`: the time limit must be above 0 seconds")
    if not value <= MAX_CALL_LIMIT_S:
        # Past this the worker's deadline overflowed the platform's time_t, and the OverflowError
        # was recorded as every correctness case of both arms failing.
        raise argparse.ArgumentTypeError(
            f"`{text}`: the time limit must be at most {MAX_CALL_LIMIT_S:g} seconds (about 11 days)"
        )
    return value


def _shape(text: str) -> dict[str, int]:
    sizes: dict[str, int] = {}
    for part in text.split(","):
        name, equals, size = part.partition("=")
        if not (equals and name.strip().isidentifier() and size.strip().isdigit()):
            raise argparse.ArgumentTypeError(f"`{text}`: give a shape as NAME=SIZE,... such as M=64,N=4096")
        sizes[name.strip()] = int(size)
    return sizes


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


def _no_gpu(study: Study) -> str:
    """No GPU here, and the targets the study allows instead: a cuda-only study was told to use
    `--target cpu`, which it refuses."""
    from perfdsl.plan import runs_on

    declared = [t.id for t in study.workload.targets] if study.workload else []
    others = [name for name in (targets.CPU.name, targets.CUDASIM.name) if runs_on(study, name)]
    allowed = f" (the study's `targets`: {', '.join(declared)})" if declared else ""
    return f"no usable CUDA GPU: use {' or '.join(f'`--target {n}`' for n in others)}{allowed}"


def run(args: argparse.Namespace) -> int:
    study = checked_study(Path(args.study), "run")
    if study is None:
        return 1
    if study.imported:
        return _run_imported(study, args)
    from perfdsl.plan import PlanError, plan, quick_replacements, refuse_undeclared_target

    if args.target != targets.AUTO:
        # Before anything is imported or started: the cuda adapter alone needs a GPU.
        try:
            refuse_undeclared_target(study, args.target)
        except PlanError as error:
            raise CommandError(str(error)) from None
    if args.target == targets.CUDASIM.name:
        # Numba reads this once, when numba.cuda is first imported: set it before anything does.
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"
    _one_thread_pool()

    from perfdsl.runtime.execute import execute
    from perfdsl.runtime.isolation import Limits, WorkerError
    from perfdsl.runtime.progress import RunProgress
    from perfdsl.runtime.resolve import RunError
    from perfdsl.runtime.targets import NoGpu, TargetError, make_target

    try:
        target = make_target(args.target)
        if args.target == targets.AUTO:
            _refuse_automatic_choice(study, target.name)
        run_plan = plan(study, target.name, args.quick, args.shapes)
    except NoGpu:
        raise CommandError(_no_gpu(study)) from None
    except (TargetError, PlanError) as error:
        raise CommandError(str(error)) from None
    artifacts = Path(args.artifacts) if args.artifacts else Path(run_plan.artifacts)
    if artifacts.exists() and not artifacts.is_dir():
        # Said before the calibration and every measurement, not when the bundle is written.
        raise CommandError(f"{artifacts}: is not a directory; bundles go into a directory (--artifacts DIR)")
    quiet = args.quiet
    if not quiet:
        simulated = target.name == targets.CUDASIM.name
        size = " (quick)" if args.quick else " (the simulator's tiny sizes)" if run_plan.quick else ""
        print(f"perfdsl run: {study.name.id} on {target.name}{size}", file=sys.stderr)
        if run_plan.quick:
            # Said before anything runs, so no quick number is read as the study's own settings; the
            # simulator shrinks every run, and against its own plan a new user saw the declared
            # adversarial 255, 256, 257, 4097 become 63, 64, 33 with nothing said.
            full = plan(study, targets.CUDA.name if simulated else target.name, False, args.shapes)
            for replaced in quick_replacements(full, run_plan):
                print(f"  {'quick' if args.quick else 'simulator'}: {replaced}", file=sys.stderr)
    try:
        bundle = execute(
            run_plan,
            target,
            artifacts,
            RunProgress(sys.stderr, quiet=quiet),
            Limits(args.time_limit),
            pin=not args.no_pin,
        )
    except (RunError, WorkerError) as error:
        raise CommandError(str(error)) from None
    except OSError as error:
        # A directory that cannot be written, or a full disk: the writer has removed
        # its temporary directory, so nothing of the bundle is left.
        where = error.filename or artifacts
        raise CommandError(f"{where}: cannot write the bundle: {error.strerror or error}") from None
    for line in correctness_failures(bundle, declared_order(study)):
        print(f"perfdsl run: {line}", file=sys.stderr)
    print(bundle)
    return 0


def correctness_failures(bundle: Path, order: Sequence[str] = ()) -> list[str]:
    """One line per failing correctness case of the run, for the console.

    A change that fails its correctness check is not a result: its timings say
    how fast a wrong answer is. The run still succeeds (the failure is
    evidence, recorded in the bundle), but the person who ran it must see it
    before they read any number. `order` is the study's order of its shape symbols
    (`shape_order.declared_order`); results.json keeps them sorted.
    """
    from perfdsl.bundle.results import Results

    results = Results.read(bundle)
    lines = []
    failed_arms: set[str] = set()
    for op in results.operations:
        # One line per arm and message: a reference that fails fails every case alike, and
        # seventeen copies of its error hid the other lines.
        alike: dict[tuple[str, str, str], list[str]] = {}
        for case in op.correctness.cases:
            if case.passed:
                continue
            shape = shape_words(case.shape, order, " x ", "=") or "its shape"
            seed = "" if case.seed is None else f", seed {case.seed}"
            key = (case.arm, case.variant, case.message or "outside the tolerance")
            alike.setdefault(key, []).append(f"{shape}{seed}")
            failed_arms.add(case.arm)
        for (arm, variant, message), where in alike.items():
            more = f" and {len(where) - 1} more case{'s' if len(where) > 2 else ''}" if len(where) > 1 else ""
            lines.append(
                f"correctness FAILED: `{op.name}` {arm} (`{variant}`) at {where[0]}{more}: {message}"
            )
    app = results.application
    if app is not None and app.model_level is not None and not app.model_level.passed:
        # An application that raised says so per arm; one that ran is judged on its error.
        failing = [name for name, arm in app.model_level.arms.items() if not arm.passed]
        raised = [f"{name}: {app.model_level.arms[name].message}" for name in failing]
        why = "; ".join(raised) or f"the change's error exceeds the baseline's ({app.model_level.rule})"
        lines.append(f"correctness FAILED: application `{app.name}`'s output against its float64 run: {why}")
        failed_arms.update(failing or ["change"])
    if lines:
        which = "a failing change" if failed_arms <= {"change"} else "an arm that fails its check"
        lines.append(f"no timing of {which} supports a decision: fix it before reading the numbers")
    return lines


def _refuse_automatic_choice(study: Study, chosen: str) -> None:
    """The refusal of an undeclared target, saying that `auto` chose it and why."""
    from perfdsl.plan import PlanError, refuse_undeclared_target

    try:
        refuse_undeclared_target(study, chosen)
    except PlanError as error:
        why = "" if chosen == targets.CUDA.name else ": no usable GPU here"
        raise PlanError(f"{error} (`--target auto` chose `{chosen}`{why})") from None


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
