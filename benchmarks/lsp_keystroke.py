"""How long the language server takes to answer one keystroke on a bundled study.

Prints figures; it asserts nothing. What a keystroke costs the server is one
`didChange`: parse + check of the whole study and the conversion of its
diagnostics to LSP (`perfdsl.lsp.analysis.lsp_diagnostics`), in a warm process,
as in a running server. Each sample types one more character of a setting
name into the study (so half the samples carry a diagnostic, as while typing),
then the median and the 90th percentile of N samples are printed, with a
completion request's cost beside it.

    .venv/bin/python benchmarks/lsp_keystroke.py [--samples 200] [--study studies/rmsnorm_fusion.perf]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types

from perfdsl.lsp.analysis import completions, lsp_diagnostics

ROOT = Path(__file__).resolve().parent.parent


def _typed(text: str, samples: int) -> list[str]:
    """The study after each keystroke of `repeats` retyped letter by letter, again and again."""
    anchor = text.index("repeats")
    word = "repeats"
    versions = []
    for i in range(samples):
        typed = word[: i % (len(word) + 1)]
        versions.append(text[:anchor] + typed + text[anchor + len(word) :])
    return versions


def _milliseconds(action: Callable[[str], object], inputs: list[str]) -> list[float]:
    times = []
    for item in inputs:
        began = time.perf_counter()
        action(item)
        times.append((time.perf_counter() - began) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--study", type=Path, default=ROOT / "studies" / "rmsnorm_fusion.perf")
    args = parser.parse_args()
    text = args.study.read_text(encoding="utf-8")
    versions = _typed(text, args.samples)
    lsp_diagnostics(str(args.study), text)  # the first call builds the parser
    check_ms = _milliseconds(lambda t: lsp_diagnostics(str(args.study), t), versions)
    cursor = types.Position(line=text[: text.index("repeats")].count("\n"), character=25)
    complete_ms = _milliseconds(lambda t: completions(t, cursor), versions)
    lines = text.count("\n")
    print(f"{args.study.name}: {lines} lines, {args.samples} keystrokes")
    for name, times in (("parse+check+convert", check_ms), ("completion", complete_ms)):
        median, p90 = statistics.median(times), statistics.quantiles(times, n=10)[-1]
        print(f"  {name:20s} median {median:6.2f} ms   p90 {p90:6.2f} ms   min {min(times):6.2f} ms")


if __name__ == "__main__":
    main()
