"""`perfdsl build (--pdf|--html|--md) STUDY`: compile a study and its evidence into a report.

The study must check (exit 1 with its diagnostics otherwise). The evidence is
the study's latest bundle, or the one `--results` names, or a fresh run with
`--run`; a bundle that fails its manifest is refused (exit 2): a report of
numbers that are not what was measured is worse than none. A bundle that has
not been evaluated, or was evaluated by another schema, is evaluated first
(that writes the bundle's evaluation.json, as `perfdsl evaluate` does).
Otherwise the build writes one file, the output, atomically.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from perfdsl import targets
from perfdsl.atomic import replacing
from perfdsl.bundle import versions
from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.imported import ImportedEvaluation
from perfdsl.bundle.imported import is_imported_bundle
from perfdsl.bundle.versions import BundleFormatError
from perfdsl.collector import collector_paused
from perfdsl.commands import CommandError
from perfdsl.commands.check import checked_study
from perfdsl.commands.outputs import refuse_over_inputs

if TYPE_CHECKING:
    from perfdsl.bundle.opened import Bundle
    from perfdsl.nodes import Study
    from perfdsl.report.context import FigureDrawing

_FORMATS = ("pdf", "html", "md")
STUDY_HASH_CHARS = 12
"""How much of the study's SHA-256 the footer prints: enough to match a page to its program."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kind = parser.add_mutually_exclusive_group(required=True)
    for name in _FORMATS:
        kind.add_argument(
            f"--{name}",
            dest="format",
            action="store_const",
            const=name,
            help=f"write the report as {name.upper() if name != 'md' else 'Markdown'}",
        )
    parser.add_argument("study", help="the .perf study to report on")
    parser.add_argument(
        "--results", metavar="BUNDLE", help="the bundle to report (default: the study's latest)"
    )
    parser.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="where to write the report (default: STUDY-NAME.pdf/.html/.md here)",
    )
    parser.add_argument(
        "--run",
        action="store_true",
        help="run the study first (default target, full settings) and report that bundle",
    )
    parser.add_argument("--quick", action="store_true", help="with --run: a smoke run (see `perfdsl run`)")
    parser.add_argument(
        "--target",
        choices=targets.CHOICES,
        default=targets.AUTO,
        help="with --run: the target to run on (default auto)",
    )


def run(args: argparse.Namespace) -> int:
    study_path = Path(args.study)
    study = checked_study(study_path, "build")
    if study is None:
        return 1
    if args.results and args.run:
        raise CommandError("give --results or --run, not both")
    if (args.quick or args.target != targets.AUTO) and not args.run:
        raise CommandError("--quick and --target apply to --run only")

    if args.run:
        status = _run_first(args)
        if status:
            return status
    output = Path(args.output) if args.output else Path(f"{study.name.id}.{args.format}")
    if output.is_dir():
        # Refused before the bundle is evaluated: a build that fails leaves the bundle as it was.
        raise CommandError(f"{output}: is a directory; give -o the report's file name")
    bundle = Path(args.results) if args.results else _latest(study, args.study)
    refuse_over_inputs(output, "-o", files=[study_path], bundles=[bundle])
    if is_imported_bundle(bundle):
        evaluation = _imported_evaluation(bundle, study.name.id)
        markdown, drawings = _imported_markdown(study, evaluation, bundle), {}
    else:
        opened = _open(bundle, study.name.id)
        evaluation = _evaluation(opened, study)
        markdown, drawings = _markdown(study, evaluation, opened, study_path)
    # Rendering builds a large live set (layout boxes, figures) and frees little until
    # the end: with the collector running, a fresh PDF build took 0.5 s longer (median
    # of 8, 6.0 s against 5.5 s) for the same peak memory (108 MB against 111 MB).
    with collector_paused():
        pages = _render(args.format, study, evaluation, markdown, drawings, bundle, output)
    print(f"wrote {output}" + (f" ({pages} page{'s' if pages != 1 else ''})" if pages else ""))
    return 0


def _run_first(args: argparse.Namespace) -> int:
    """`perfdsl run` with the passthrough options; its bundle is then the latest.

    The run's arguments are parsed by `run`'s own parser, so every option it has and
    this command does not pass keeps `run`'s default (a hand-built namespace lacked
    `--shape`'s, and `build --run` died with AttributeError).
    """
    from perfdsl.commands import run as run_command

    parser = argparse.ArgumentParser(prog="perfdsl run")
    run_command.add_arguments(parser)
    passed = ["--target", args.target, *(["--quick"] if args.quick else []), "--", args.study]
    return run_command.run(parser.parse_args(passed))


def _latest(study: Study, shown: str) -> Path:
    from perfdsl.bundle.files import RunsUnreadable, latest_bundle
    from perfdsl.plan import PlanError, plan
    from perfdsl.runtime.imported import artifacts_of

    try:
        artifacts = artifacts_of(study) if study.imported else Path(plan(study, "cpu", quick=False).artifacts)
    except PlanError as error:
        raise CommandError(str(error)) from None
    try:
        found = latest_bundle(artifacts, study.name.id)
    except RunsUnreadable as error:
        raise CommandError(f"{error.filename}: {error.strerror}") from None
    if found is None:
        # An imported study's run copies its files and measures nothing: `--quick` is no smoke run there.
        quick = "" if study.imported else " --quick"
        raise CommandError(
            f"no results for `{study.name.id}` in {artifacts} yet; make them with "
            f"`perfdsl run {shown}{quick}` (or add --run)"
        )
    return found


def _open(bundle: Path, study_name: str) -> Bundle:
    """The bundle, verified once and read; refused when it is not one, was tampered with, or
    belongs to another study.

    Its evaluation.json is left out of the verification: that file is derived, so when it
    is out of step it is rewritten, not refused (`Bundle.evaluation_current`).
    """
    from perfdsl.bundle.files import not_a_bundle
    from perfdsl.bundle.opened import BundleRefused, open_bundle

    try:
        opened = open_bundle(bundle)
    except BundleRefused as refused:
        why = not_a_bundle(bundle)
        if why:
            raise CommandError(f"{bundle}: {why}") from None
        problems = refused.problems
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise CommandError(
            f"{bundle}: refusing to build: {problems[0]}{more}; the bundle no longer matches its "
            "manifest (`perfdsl verify` lists every problem)"
        ) from None
    except BundleFormatError as error:
        raise CommandError(str(error)) from None
    except (OSError, ValueError, KeyError) as error:
        raise CommandError(f"{bundle}: unreadable bundle file: {error}") from None
    if opened.plan.study != study_name:
        raise CommandError(f"{bundle}: the bundle is of study `{opened.plan.study}`, not `{study_name}`")
    return opened


def _evaluation(bundle: Bundle, study: Study) -> Evaluation:
    """evaluation.json, evaluated first when missing, out of step with the manifest, or of another schema.

    The statistics are imported only when an evaluation is due: a current
    evaluation.json is read as it is. The evaluation takes the study parsed
    already when the bundle's study.perf is the same text.
    """
    path = bundle.file(versions.EVALUATION_FILE)
    why, current = None, None
    if not path.is_file():
        why = "it had not been evaluated"
    elif not bundle.evaluation_current:
        why = f"its {versions.EVALUATION_FILE} did not match the manifest"
    else:
        try:
            current = _read_json(path)
        except CommandError:
            current = {}
        schema = current.get("schema")
        if schema is None or schema in versions.SUPERSEDED_EVALUATION:
            why = f"its {versions.EVALUATION_FILE} has schema {schema!r}, not {versions.EVALUATION!r}"
    if why is not None:
        from perfdsl.bundle.files import BundleError, dumps
        from perfdsl.evaluate.evaluation import evaluate, write_evaluation
        from perfdsl.evaluate.inputs import EvaluateError

        try:
            # The bundle alone, as `perfdsl evaluate` does: the study file is checked at rendering.
            evaluation = evaluate(bundle, study=study)
        except (EvaluateError, BundleError) as error:
            raise CommandError(str(error)) from None
        try:
            write_evaluation(bundle, evaluation)
        except (BundleError, OSError) as error:
            # An archived bundle may be read-only: the report is built from the evaluation as it
            # would have been written (its numbers rounded as the file rounds them), and says so.
            # It was refused, naming the temporary file the write had tried.
            said = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
            print(
                f"perfdsl build: evaluated {bundle.path} first ({why}), and could not keep its "
                f"{versions.EVALUATION_FILE} there ({said}): the report is built from the evaluation "
                "in memory",
                file=sys.stderr,
            )
            return Evaluation.from_json(json.loads(dumps(evaluation.to_json())), path)
        print(f"perfdsl build: evaluated {bundle.path} first: {why}", file=sys.stderr)
    try:
        # Read back when just written: the report shows the file's numbers, rounded as written.
        return Evaluation.read(bundle.path) if why is not None else Evaluation.from_json(current, path)
    except (OSError, ValueError, BundleFormatError) as error:
        raise CommandError(str(error)) from None


def _markdown(
    study: Study, evaluation: Evaluation, bundle: Bundle, study_path: Path
) -> tuple[str, dict[str, FigureDrawing]]:
    """The report's Markdown and its figures' drawings, from an evaluated bundle."""
    from perfdsl.evaluate.registration import check_current
    from perfdsl.report.markdown import render_markdown

    registered = evaluation.registration.registered_hash
    try:
        return render_markdown(
            study,
            evaluation,
            bundle,
            bundle_label=_label(bundle.path),
            current=check_current(registered, study_path, study),
        )
    except BundleFormatError as error:
        # Reached when evaluation.json is current but results.json is of a version this code
        # cannot read (one written by a newer perfdsl, say): refuse it rather than guess.
        raise CommandError(str(error)) from None
    except versions.RECORD_ERRORS as error:
        if not versions.raised_reading_a_record(error):
            raise
        from perfdsl.bundle.results import RESULTS

        raise CommandError(str(versions.unreadable_record(bundle.path / RESULTS, error))) from None


def _imported_evaluation(bundle: Path, study_name: str) -> ImportedEvaluation:
    """A wholly imported study's bundle, verified, evaluated afresh (it takes milliseconds), as written."""
    from perfdsl.bundle.files import BundleError
    from perfdsl.bundle.imported import IMPORTED
    from perfdsl.evaluate.imported import evaluate_imported_bundle, write_imported_evaluation
    from perfdsl.evaluate.inputs import EvaluateError

    ran = _read_json(bundle / IMPORTED).get("study")
    if ran != study_name:
        raise CommandError(f"{bundle}: the bundle is of study `{ran}`, not `{study_name}`")
    try:
        evaluation = evaluate_imported_bundle(bundle)
        write_imported_evaluation(bundle, evaluation)
        # Read back: the report shows the file's numbers (rounded as written), not the unrounded ones.
        return ImportedEvaluation.read(bundle)
    except (EvaluateError, BundleError, BundleFormatError) as error:
        raise CommandError(str(error)) from None


def _imported_markdown(study: Study, evaluation: ImportedEvaluation, bundle: Path) -> str:
    from perfdsl.report.imported import render_imported_markdown

    return render_imported_markdown(study, evaluation, _label(bundle))


def _render(
    kind: str,
    study: Study,
    evaluation: Evaluation | ImportedEvaluation,
    markdown: str,
    drawings: dict[str, FigureDrawing],
    bundle: Path,
    output: Path,
) -> int | None:
    """The Markdown as itself, or as HTML, or as PDF; the number of pages for a PDF."""
    try:
        # The output's own directory is part of the path the user named; nothing else is made.
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise CommandError(f"{output.parent}: cannot create: {error.strerror or error}") from None
    if kind == "md":
        _write_atomically(output, markdown)
        return None
    from perfdsl.report.context import smoke_run
    from perfdsl.report.html import ReportMeta, render_html

    meta = ReportMeta(
        study=study.name.id,
        title=study.title.value if study.title else study.name.id,
        bundle_id=evaluation.run_id,
        study_hash=hashlib.sha256(study.source.text.encode("utf-8")).hexdigest()[:STUDY_HASH_CHARS],
        generated_at=datetime.now(UTC).replace(microsecond=0),
        # An imported study's evidence was measured elsewhere: never a smoke run of this tool's.
        smoke=isinstance(evaluation, Evaluation) and smoke_run(evaluation),
    )
    if kind == "html":
        from perfdsl.report.context import draw_figures

        _write_atomically(output, render_html(markdown, meta, draw_figures(drawings)))
        return None
    from perfdsl.report.background import drawn_beside
    from perfdsl.report.pdf import write_pdf

    with drawn_beside(drawings) as figures:
        html = render_html(markdown, meta, figures, inline_figures=False)
        try:
            return write_pdf(html, output, figures)
        except OSError as error:
            raise CommandError(f"{output}: cannot write: {error.strerror or error}") from None


def _label(bundle: Path) -> str:
    """The bundle's path as the report prints it: relative to here when it is below here."""
    resolved = bundle.resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return resolved.as_posix()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise CommandError(f"{path}: unreadable: {error}") from None
    if not isinstance(value, dict):
        raise CommandError(f"{path}: not a JSON object")
    return value


def _write_atomically(path: Path, text: str) -> None:
    """Write `path` whole or not at all (`atomic.replacing`), as a one-line error if it cannot."""
    try:
        with replacing(path) as handle:
            handle.write(text.encode("utf-8"))
    except OSError as error:
        raise CommandError(f"{path}: cannot write: {error.strerror or error}") from None
