"""`perfdsl evaluate BUNDLE`: turn a bundle's raw samples into verdicts (evaluation.json).

Exit 0 when the bundle was evaluated, whatever the verdicts say: a refuted
prediction or a quality warning is evidence, not a failure of the command.
Exit 2 when it could not be evaluated (not a bundle, fails verification).
For CI, `--fail-on refuted,invalid,contradicted` (default `none`) states which
conclusions fail the job instead (exit 1); `--junit` writes one test case per
prediction and `--summary` appends a Markdown summary (`$GITHUB_STEP_SUMMARY`).
For a dashboard, `--jsonl` writes every verdict, prediction and finding as JSON
lines (`perfdsl.formats.export`, docs/export.md).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from perfdsl.atomic import replacing
from perfdsl.bundle.imported import is_imported_bundle
from perfdsl.commands import CommandError
from perfdsl.commands.outputs import refuse_over_inputs
from perfdsl.numbers import intervals_at

if TYPE_CHECKING:
    from perfdsl.bundle.evaluation.imported import ImportedEvaluation
    from perfdsl.evaluate.combination import Combined
    from perfdsl.evaluate.compare import Comparison
    from perfdsl.evaluate.evaluation import Evaluation
    from perfdsl.nodes import Study


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle", help="a bundle directory written by `perfdsl run`")
    parser.add_argument(
        "--study", metavar="FILE", help="also check this study's `predict` section against the registered one"
    )
    parser.add_argument(
        "--junit", metavar="PATH", help="write JUnit XML: one test case per prediction, one for the decision"
    )
    parser.add_argument(
        "--summary",
        metavar="PATH",
        help="append a Markdown summary of the verdicts to PATH (e.g. $GITHUB_STEP_SUMMARY)",
    )
    parser.add_argument(
        "--jsonl",
        metavar="PATH",
        help="write every verdict, prediction and finding as JSON lines, one record a line "
        "(docs/export.md), for a dashboard to ingest",
    )
    parser.add_argument(
        "--fail-on",
        metavar="LIST",
        default="none",
        help="exit 1 when the evaluation finds any of: refuted (a prediction), invalid (timings not "
        "evidence, a correctness failure, predictions changed since registration), contradicted "
        "(the declared decision); comma-separated, default none",
    )


def run(args: argparse.Namespace) -> int:
    import attrs

    from perfdsl.bundle.files import BundleError
    from perfdsl.evaluate.evaluation import evaluate, write_evaluation
    from perfdsl.evaluate.inputs import EvaluateError, open_evaluated
    from perfdsl.evaluate.registration import with_current
    from perfdsl.formats import predictions

    try:
        policy = predictions.parse_fail_on(args.fail_on)
    except predictions.PolicyError as error:
        raise CommandError(str(error)) from None
    bundle = Path(args.bundle)
    for option, output in (("--junit", args.junit), ("--summary", args.summary), ("--jsonl", args.jsonl)):
        if output:
            refuse_over_inputs(output, option, files=[args.study] if args.study else [], bundles=[bundle])
    if is_imported_bundle(bundle):
        _refuse_for_imported(args, bundle)
        return _run_imported(bundle, args.jsonl)
    try:
        opened = open_evaluated(bundle)
        path = Path(args.study) if args.study else None
        current = _current_study(path, opened.plan.study) if path else None
        evaluation = evaluate(opened)
    except (EvaluateError, BundleError) as error:
        raise CommandError(str(error)) from None
    # evaluation.json is the bundle's alone; what `--study` adds is judged beside it, for the CI
    # files and the summary (it made the file's bytes depend on who evaluated last, and how).
    judged = evaluation
    if path is not None:
        judged = attrs.evolve(evaluation, registration=with_current(evaluation.registration, path, current))
    # The CI files first: one that cannot be written fails the command before the bundle is touched.
    if args.junit:
        _write(Path(args.junit), predictions.render_junit(judged, policy), append=False)
    if args.summary:
        _write(Path(args.summary), predictions.render_summary(judged, policy), append=True)
    _export(judged, args.jsonl)
    try:
        written = write_evaluation(opened, evaluation)
    except BundleError as error:
        raise CommandError(str(error)) from None
    except OSError as error:
        # A read-only bundle or a full disk: the previous evaluation.json and manifest stand.
        raise CommandError(f"{error.filename or bundle}: cannot write: {error.strerror or error}") from None
    print(summary(judged))
    print(f"wrote {written}")
    for written_too in (args.junit, args.jsonl):
        if written_too:
            print(f"wrote {written_too}")
    failing = predictions.failures(judged, policy)
    for line in failing:
        print(f"perfdsl evaluate: fails the policy: {line}", file=sys.stderr)
    return 1 if failing else 0


def _current_study(path: Path, bundle_study: str) -> Study:
    """`--study`'s file parsed, refused in one line unless it is a study of the bundle's name.

    Its `predict` section is compared with the registered one; a file that cannot be read,
    does not check or is another study's has none to compare, and evaluating on with a note
    let `--fail-on invalid` pass a job that named the wrong file.
    """
    from perfdsl.commands.check import parse_and_check
    from perfdsl.diagnostics import count_errors
    from perfdsl.source import Source

    try:
        study, diagnostics = parse_and_check(Source.read(path))
    except OSError as error:
        raise CommandError(f"{path}: cannot read the study: {error.strerror or error}") from None
    except UnicodeDecodeError as error:
        raise CommandError(f"{path}: not UTF-8 text (byte {error.start}); save it as UTF-8") from None
    errors = count_errors(diagnostics)
    if study is None or errors:
        raise CommandError(
            f"{path}: the study does not check ({errors} error{'s' if errors != 1 else ''}); "
            f"`perfdsl check {path}` says where"
        )
    if study.name.id != bundle_study:
        raise CommandError(f"{path}: is study `{study.name.id}`, and the bundle is of study `{bundle_study}`")
    return study


def _write(path: Path, text: str, *, append: bool) -> None:
    """Write (or, for a job summary that other steps also add to, append) a CI file."""
    try:
        if append:
            with path.open("a", encoding="utf-8") as handle:
                handle.write(text)
        else:
            with replacing(path) as handle:
                handle.write(text.encode("utf-8"))
    except OSError as error:
        raise CommandError(f"{path}: cannot write: {error.strerror or error}") from None


def _export(evaluation: Evaluation | ImportedEvaluation, path: str | None) -> None:
    """The evaluation as JSON lines at `path`, when asked for."""
    if not path:
        return
    from perfdsl.formats.export import render_jsonl

    _write(Path(path), render_jsonl(evaluation), append=False)


def _refuse_for_imported(args: argparse.Namespace, bundle: Path) -> None:
    """An imported study's bundle has its own evaluation, which the CI files and the registration
    check are not written from: asked for, they are refused before anything is written, never
    silently left out (a job gated on a JUnit file that never appears passes for the wrong reason)."""
    asked = [
        option
        for option, given in (
            ("--junit", args.junit),
            ("--summary", args.summary),
            ("--study", args.study),
            ("--fail-on", args.fail_on != "none"),
        )
        if given
    ]
    if asked:
        raise CommandError(
            f"{bundle}: an imported study's bundle: {', '.join(asked)} "
            f"{'is' if len(asked) == 1 else 'are'} for bundles `perfdsl run` measures; "
            "its predictions' verdicts are in evaluation.json and `--jsonl`"
        )


def _run_imported(bundle: Path, jsonl: str | None) -> int:
    """A wholly imported study's bundle: its own evaluation (`perfdsl.evaluate.imported`)."""
    from perfdsl.bundle.files import BundleError
    from perfdsl.evaluate.imported import evaluate_imported_bundle, summary, write_imported_evaluation
    from perfdsl.evaluate.inputs import EvaluateError

    try:
        evaluation = evaluate_imported_bundle(bundle)
        written = write_imported_evaluation(bundle, evaluation)
    except (EvaluateError, BundleError) as error:
        raise CommandError(str(error)) from None
    print(summary(evaluation))
    print(f"wrote {written}")
    _export(evaluation, jsonl)
    if jsonl:
        print(f"wrote {jsonl}")
    return 0


def _interval(ratio: float, low: float, high: float) -> str:
    return f"{ratio:.4f} [{low:.4f}, {high:.4f}]"


def _verdict(c: Comparison | Combined) -> str:
    if c.ci_low is None or c.ci_high is None:
        return f"{c.ratio:.4f} (no interval)  {c.verdict}"
    return f"{_interval(c.ratio, c.ci_low, c.ci_high)}  {c.verdict}"


def summary(evaluation: Evaluation) -> str:
    """A short plain-text table of the evaluation's conclusions, headed by the level its intervals hold."""
    e = evaluation
    lines = [
        f"{e.study} {e.run_id} on {e.target} ({intervals_at(e.interval_level, e.level)}, "
        f"threshold {e.threshold:.1%})"
    ]
    if e.timings_note:
        lines.append(f"note: {e.timings_note}")
    for op in e.operations:
        lines.append(f"operation {op.name}: time ratio (change / baseline)")
        for shape in op.shapes:
            shown = _verdict(shape.comparison) if shape.comparison else f"not evidence: {shape.missing}"
            if shape.invalid:
                shown += f"  INVALID, excluded: {shape.invalid}"
            lines.append(f"  {shape.label:<14} w={shape.weight:<5.2g} {shown}")
        weighted = _verdict(op.combined) if op.combined else f"not evidence: {op.combined_missing}"
        lines.append(f"  {'weighted':<22} {weighted}")
        for shape in op.limits:
            why = shape.invalid or shape.missing
            shown = _verdict(shape.usable) if shape.usable else f"not evidence: {why}"
            lines.append(f"  {shape.label:<14} {'limit':<7} {shown}")
        if op.regressions:
            lines.append(f"  regresses at {', '.join(op.regressions)}")
        failing = len(op.correctness.failing)
        lines.append(f"  correctness: {'pass' if op.correctness.passed else f'FAIL ({failing} cases)'}")
    lines += _end_to_end_lines(e)
    if e.expectations_missing:
        lines.append(f"predictions: {e.expectations_missing}")
    lines += [f"predict line {p.line}: {p.verdict:<12} {p.message}" for p in e.predictions]
    lines += [f"decision: {finding}" for finding in e.decision.findings]
    if not e.registration.matches:
        lines.append(f"registration: {e.registration.message}")
    if e.registration.current and not e.registration.current.matches:
        lines.append(f"registration: {e.registration.current.message}")
    lines += [f"{f.severity}[{f.code}]: {f.message} ({f.subject})" for f in e.quality]
    # A limit shape's findings are its own (they judge nothing of the workload's, so they are not
    # in `quality`), but one that makes it invalid must be readable where the shape says so.
    limits = [f for op in e.operations for s in op.limits for f in s.findings]
    lines += [f"{f.severity}[{f.code}]: {f.message} ({f.subject}, limit shape)" for f in limits]
    return "\n".join(lines)


def _end_to_end_lines(e: Evaluation) -> list[str]:
    from perfdsl.stats.amdahl import untested_premise

    end = e.end_to_end
    if end is None:
        return [f"end-to-end: {e.end_to_end_missing}"]
    shown = _verdict(end.comparison) if end.comparison else f"not evidence: {end.comparison_missing}"
    lines = [f"end-to-end {end.application}: {shown}"]
    if end.amdahl:
        a = end.amdahl
        # The status is a record's identifier (`cross_effect`); the terminal shows it in words.
        status = a.reconciliation.status.replace("_", " ") if a.reconciliation else a.reconciliation_missing
        untested = untested_premise(a.reconciliation) if a.reconciliation else None
        if a.reconciliation and a.reconciliation.status == "consistent" and untested:
            # As page 1 says it: inside the band is not yet consistent while the premise is open.
            status = f"not contradicted, but not yet shown consistent: {untested}"
        lines.append(
            f"  Amdahl: f={a.f.value:.3f} s={a.s:.3f} ({a.s_source}) time-ratio bound "
            f"{a.bound_time_ratio:.4f}: {status}"
        )
        if a.s_fallback:
            lines.append(f"  Amdahl: {a.s_fallback}")
        if a.share_check and not a.share_check.compatible:
            lines.append(f"  Amdahl: {a.share_check.message}")
    else:
        lines.append(f"  Amdahl: {end.amdahl_missing}")
    from perfdsl.bundle.evaluation.load import P99_UNDECIDED

    if e.load is None:
        lines.append(f"  load: {e.load_missing}")
    else:
        for arm in e.load.arms:
            note = ""
            if arm.lower_bound:
                why = "none failed above it"
                if "generator lag" in arm.limited_by:
                    why = "the load generator fell behind above it"
                elif P99_UNDECIDED in arm.limited_by:
                    why = "none failed above it; the probes above it stayed undecided at their cap"
                note = f" or more ({why})"
            note += "" if arm.confirmed else " (unconfirmed)"
            lines.append(f"  goodput {arm.arm}: {arm.goodput:.1f} rps{note}")
        cap = e.load.capacity_range
        lines.append(f"  {cap.message}" if cap else f"  capacity: {e.load.capacity_missing}")
    return lines
