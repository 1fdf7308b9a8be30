"""`perfdsl history STUDY -o PAGE.html`: every run of a study over time and commit, as one static page.

The runs are the study's bundles under its `artifacts` path (or `--artifacts
DIR`), each evaluated from its raw samples. A bundle that cannot be read as a
run (it fails verification, say) is left out, named on the page and on stderr:
one corrupt archive no longer withholds the page of every other run. Exit 0
when the page was written; 2 when it could not be (no bundles, none readable,
an unwritable output). The study file only names the runs (its name, title and
`artifacts` path): each run is judged by the study text it ran with, so a study
that no longer checks still has a history; one that does not parse is exit 1.
After the page, one line per operation says where its ratio stepped (or that
it did not), at the stated false-alarm rate, and what changed there.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path

from perfdsl.atomic import replacing
from perfdsl.commands import CommandError
from perfdsl.commands.outputs import refuse_over_inputs


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("study", help="the .perf study whose runs to show")
    parser.add_argument("-o", "--output", metavar="PAGE", required=True, help="the HTML page to write")
    parser.add_argument(
        "--artifacts", metavar="DIR", help="where the study's bundles are (default: its `artifacts` path)"
    )
    parser.add_argument(
        "--false-alarm",
        metavar="RATE",
        type=_rate,
        default=0.05,
        help="chance that an operation's series with no step shows one (default 0.05)",
    )


def _rate(text: str) -> float:
    try:
        value = float(text.removesuffix("%")) / (100.0 if text.endswith("%") else 1.0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a rate such as 0.05 or 5%, found {text!r}") from None
    if not 0.0 < value <= 0.5:
        raise argparse.ArgumentTypeError(f"a false-alarm rate is above 0 and at most 0.5, found {text!r}")
    return value


def run(args: argparse.Namespace) -> int:
    from perfdsl.bundle.files import RunsUnreadable, bundles
    from perfdsl.commands.check import read_source
    from perfdsl.diagnostics import render_full
    from perfdsl.history.page import render_page
    from perfdsl.history.runs import RunsError, read_run
    from perfdsl.history.steps import describe
    from perfdsl.history.timeline import build_timeline
    from perfdsl.parse import parse

    study_path = Path(args.study)
    parsed = parse(read_source(study_path))
    study = parsed.study
    if study is None:
        for diagnostic in parsed.diagnostics:
            print(render_full(diagnostic), file=sys.stderr)
        print(f"perfdsl history: {study_path} does not parse; fix the errors above", file=sys.stderr)
        return 1
    # The same rule as the plan's: the study's `artifacts` path, from the study file's directory.
    default = study_path.parent / (study.artifacts.value if study.artifacts else "artifacts/")
    artifacts = Path(args.artifacts) if args.artifacts else default
    if artifacts.exists() and not artifacts.is_dir():
        raise CommandError(f"{artifacts}: is not a directory; --artifacts names the one the bundles are in")
    try:
        found = bundles(artifacts, study.name.id)
    except RunsUnreadable as error:
        raise CommandError(f"{error.filename}: {error.strerror}") from None
    refuse_over_inputs(args.output, "-o", files=[study_path], bundles=found)
    if not found:
        none = "" if artifacts.is_dir() else " (no such directory)"
        raise CommandError(
            f"no runs of `{study.name.id}` in {artifacts}{none}; "
            f"make one with `perfdsl run {args.study} --quick`"
        )
    runs, left_out = [], []
    first_of: dict[str, Path] = {}
    for bundle in found:
        try:
            run = read_run(bundle)
        except RunsError as error:
            left_out.append(str(error))
            continue
        # A copied bundle keeps its run id: counted again, one run was a series of three and
        # entered the step search twice.
        earlier = first_of.setdefault(run.evaluation.run_id, bundle)
        if earlier != bundle:
            left_out.append(f"{bundle}: a copy of run {run.evaluation.run_id}, at {earlier}")
            continue
        runs.append(run)
    if not runs:
        raise CommandError(f"none of the {len(found)} runs of `{study.name.id}` can be read: {left_out[0]}")
    for why in left_out:
        print(f"perfdsl history: warning: left out {why}", file=sys.stderr)
    title = study.title.value if study.title else study.name.id
    timeline = build_timeline(runs, false_alarm=args.false_alarm)
    page = render_page(timeline, title, datetime.now(UTC), left_out)
    output = Path(args.output)
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        with replacing(output) as handle:
            handle.write(page.encode("utf-8"))
    except OSError as error:
        raise CommandError(f"{output}: cannot write: {error.strerror or error}") from None
    print(f"wrote {output} ({len(runs)} runs)")
    labels = [entry.run.label for entry in timeline.entries]
    for steps in timeline.steps:
        for line in describe(steps, labels, timeline.missing_of(steps.operation)):
            print(line)
    return 0
