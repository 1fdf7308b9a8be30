"""`perfdsl explain CODE`: the rule, why it exists and a corrected example.

Without a code it lists every code with its severity and title, so the
registry can be read without a diagnostic in hand.
"""

from __future__ import annotations

import argparse
import difflib

from perfdsl import codes
from perfdsl.commands import CommandError


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "code", nargs="?", help="a diagnostic code such as PD203 or PQ006; none lists every code"
    )


def listing() -> str:
    """Every registered code, one a line, in code order."""
    entries = [codes.CODES[code] for code in sorted(codes.CODES)]
    lines = [f"{c.code}  {c.severity:<7}  {c.title}" for c in entries]
    lines.append(f"{len(lines)} codes; `perfdsl explain CODE` explains one")
    return "\n".join(lines) + "\n"


def run(args: argparse.Namespace) -> int:
    if args.code is None:
        print(listing(), end="")
        return 0
    entry = codes.lookup(args.code)
    if entry is None:
        close = difflib.get_close_matches(args.code.upper(), codes.CODES, n=4, cutoff=0.6)
        hint = f"; did you mean {', '.join(close)}?" if close else "; codes look like PD203 or PQ006"
        raise CommandError(f"no diagnostic code `{args.code}`{hint}")
    print(codes.explain(entry), end="")
    return 0
