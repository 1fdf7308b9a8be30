"""`perfdsl evaluate BUNDLE`: turn a bundle's raw samples into verdicts (evaluation.json).

Exit 0 when the bundle was evaluated, whatever the verdicts say: a refuted
prediction or a quality warning is evidence, not a failure of the command.
Exit 2 when it could not be evaluated (not a bundle, fails verification).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from perfdsl.commands import CommandError

if TYPE_CHECKING:
    from perfdsl.evaluate.compare import Combined, Comparison
    from perfdsl.evaluate.evaluation import Evaluation


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle", help="a bundle directory written by `perfdsl run`")
    parser.add_argument(
        "--study", metavar="FILE", help="also check this study's `predict` section against the registered one"
    )


def run(args: argparse.Namespace) -> int:
    from perfdsl.bundle.files import BundleError
    from perfdsl.evaluate.evaluation import evaluate, write_evaluation
    from perfdsl.evaluate.inputs import EvaluateError

    bundle = Path(args.bundle)
    try:
        evaluation = evaluate(bundle, Path(args.study) if args.study else None)
        written = write_evaluation(bundle, evaluation)
    except (EvaluateError, BundleError) as error:
        raise CommandError(str(error)) from None
    except OSError as error:
        # A read-only bundle or a full disk: the previous evaluation.json and manifest stand.
        raise CommandError(f"{error.filename or bundle}: cannot write: {error.strerror or error}") from None
    print(summary(evaluation))
    print(f"wrote {written}")
    return 0


def _interval(ratio: float, low: float, high: float) -> str:
    return f"{ratio:.4f} [{low:.4f}, {high:.4f}]"


def _verdict(c: Comparison | Combined) -> str:
    return f"{_interval(c.ratio, c.ci_low, c.ci_high)}  {c.verdict}"


def summary(evaluation: Evaluation) -> str:
    """A short plain-text table of the evaluation's conclusions."""
    e = evaluation
    lines = [f"{e.study} {e.run_id} on {e.target} ({e.level:.0%} intervals, threshold {e.threshold:.1%})"]
    if e.timings_note:
        lines.append(f"note: {e.timings_note}")
    for op in e.operations:
        lines.append(f"operation {op.name}: time ratio (change / baseline)")
        for shape in op.shapes:
            shown = _verdict(shape.comparison) if shape.comparison else f"not evidence: {shape.missing}"
            lines.append(f"  {shape.label:<14} w={shape.weight:<5.2g} {shown}")
        weighted = _verdict(op.combined) if op.combined else f"not evidence: {op.combined_missing}"
        lines.append(f"  {'weighted':<22} {weighted}")
        if op.regressions:
            lines.append(f"  regresses at {', '.join(op.regressions)}")
        failing = len(op.correctness.failing)
        lines.append(f"  correctness: {'pass' if op.correctness.passed else f'FAIL ({failing} cases)'}")
    lines += _end_to_end_lines(e)
    lines += [f"predict line {p.line}: {p.verdict:<12} {p.message}" for p in e.predictions]
    lines += [f"decision: {finding}" for finding in e.decision.findings]
    if not e.registration.matches:
        lines.append(f"registration: {e.registration.message}")
    if e.registration.current and not e.registration.current.matches:
        lines.append(f"registration: {e.registration.current.message}")
    lines += [f"{f.severity}[{f.code}]: {f.message} ({f.subject})" for f in e.quality]
    return "\n".join(lines)


def _end_to_end_lines(e: Evaluation) -> list[str]:
    end = e.end_to_end
    if end is None:
        return [f"end-to-end: {e.end_to_end_missing}"]
    shown = _verdict(end.comparison) if end.comparison else f"not evidence: {end.comparison_missing}"
    lines = [f"end-to-end {end.application}: {shown}"]
    if end.amdahl:
        a = end.amdahl
        status = a.reconciliation.status if a.reconciliation else a.reconciliation_missing
        lines.append(f"  Amdahl: f={a.f:.3f} s={a.s:.3f} ({a.s_source}) bound {a.bound:.4f}: {status}")
    else:
        lines.append(f"  Amdahl: {end.amdahl_missing}")
    if e.load is None:
        lines.append(f"  load: {e.load_missing}")
    else:
        for arm in e.load.arms:
            note = "" if arm.confirmed else " (unconfirmed)"
            lines.append(f"  goodput {arm.arm}: {arm.goodput:.1f} rps{note}")
        cap = e.load.capacity
        lines.append(
            f"  capacity change: {cap.change:.4f}" if cap else f"  capacity: {e.load.capacity_missing}"
        )
    return lines
