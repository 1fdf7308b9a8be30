"""`perfdsl verify BUNDLE`: recheck every file of a bundle against its manifest."""

from __future__ import annotations

import argparse
from pathlib import Path

from perfdsl.commands import CommandError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle", help="a bundle directory written by `perfdsl run`")


def run(args: argparse.Namespace) -> int:
    from perfdsl.bundle.files import not_a_bundle, verify_bundle

    path = Path(args.bundle)
    refused = not_a_bundle(path)
    if refused:
        raise CommandError(f"{path}: {refused}")
    problems = verify_bundle(path)
    for problem in problems:
        print(f"{path}: {problem}")
    if problems:
        print(
            f"error: {len(problems)} problem{'s' if len(problems) != 1 else ''}: "
            "the bundle is not what was written"
        )
        return 1
    print(f"ok: {path} matches its manifest")
    return 0
