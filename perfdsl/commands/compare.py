"""`perfdsl compare BUNDLE_A BUNDLE_B`: two runs of one study, environment first, then every ratio B / A.

Exit 0 when the runs were compared, whatever they show; with `--fail-on-slower`,
1 when B is slower than A for any arm at any shape (a CI gate against the
last accepted run), unless either is a quick run, whose `slower` is no
regression (said on stderr). Exit 2 when they cannot be compared: not bundles, a bundle
that fails verification, or runs of two different studies (by name, or two studies given one
name: no operation and no application in common).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from perfdsl.commands import CommandError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle_a", metavar="BUNDLE_A", help="the earlier (reference) run")
    parser.add_argument("bundle_b", metavar="BUNDLE_B", help="the run to compare with it")
    parser.add_argument(
        "--fail-on-slower",
        action="store_true",
        help="exit 1 when B is slower than A for any arm at any shape (not for a quick run: its "
        "timings are not evidence)",
    )


def run(args: argparse.Namespace) -> int:
    from perfdsl.history.across import DifferentStudies, compare_runs, render_text
    from perfdsl.history.runs import RunsError, read_run

    try:
        result = compare_runs(read_run(Path(args.bundle_a)), read_run(Path(args.bundle_b)))
    except (RunsError, DifferentStudies) as error:
        raise CommandError(str(error)) from None
    print(render_text(result))
    if not (args.fail_on_slower and result.slower):
        return 0
    smoke = result.quick
    if smoke:
        # The note above says a smoke run's `slower` is no regression; failing on it said otherwise.
        print(
            f"perfdsl compare: --fail-on-slower not applied: {' and '.join(smoke)} "
            f"{'are quick runs' if len(smoke) > 1 else 'is a quick run'}, whose timings are not evidence",
            file=sys.stderr,
        )
        return 0
    return 1
