"""`perfdsl explain CODE`: the rule, why it exists and a corrected example."""

from __future__ import annotations

import argparse
import difflib

from perfdsl import codes
from perfdsl.commands import CommandError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("code", help="a diagnostic code such as PD203 or PQ006")


def run(args: argparse.Namespace) -> int:
    entry = codes.lookup(args.code)
    if entry is None:
        close = difflib.get_close_matches(args.code.upper(), codes.CODES, n=4, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; codes look like PD203 or PQ006"
        raise CommandError(f"no diagnostic code `{args.code}`{hint}")
    print(codes.explain(entry), end="")
    return 0
