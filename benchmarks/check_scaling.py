"""Does `perfdsl check` take linear time in the size of a study, whatever the study is made of?

Prints lines/s for generated studies of 1,000 and 20,000 lines, each grown by
one kind of statement (operations, limits or predictions), and the time per
line at 20,000 lines over that at 1,000: near 1 is linear growth, 20 would be
quadratic. Asserts nothing: timings belong in a report, not a test.

    .venv/bin/python benchmarks/check_scaling.py [--sizes 1000 20000]

Each figure is the best of a few runs of parse, lowering and every check
(`perfdsl.commands.check.diagnose`), the work `perfdsl check` does per file.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from perfdsl.commands.check import diagnose
from perfdsl.diagnostics import count_errors
from perfdsl.source import Source

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "studies" / "rmsnorm_fusion.perf"


def _operations(index: int) -> list[str]:
    return [
        f"  operation extra_{index} {{",
        "    baseline  kernels.rmsnorm:unfused",
        "    change    kernels.rmsnorm:fused",
        "    reference kernels.rmsnorm:reference",
        "    bytes     baseline 4*(5*M*N + M), change 4*(2*M*N + N)",
        "  }",
    ]


def _limits(index: int) -> list[str]:
    return [f'  limit sensitivity "Measured on configuration {index} only"']


def _predictions(index: int) -> list[str]:
    """One one-line operation and three predictions on it, in a `predict` section of their own."""
    return [
        f"  operation p_{index} {{ baseline kernels.rmsnorm:unfused; change kernels.rmsnorm:fused; "
        f"reference kernels.rmsnorm:reference; bytes baseline 4*M*N, change 2*M*N }}",
        f"  predict {{ p_{index}.time ratio <= 0.6 }}",
    ]


GROWERS: dict[str, Callable[[int], list[str]]] = {
    "operations": _operations,
    "limits": _limits,
    "predictions": _predictions,
}


def generated_study(kind: str, lines: int) -> str:
    """The bundled study grown to about `lines` lines by one kind of statement."""
    text = STUDY.read_text(encoding="utf-8")
    head, _, tail = text.rpartition("\n}")
    extra: list[str] = []
    index = 0
    base = len(text.splitlines())
    while base + len(extra) < lines:
        extra += GROWERS[kind](index)
        index += 1
    if kind == "predictions":
        return _merge_predictions(head, extra, tail)
    return head + "\n" + "\n".join(extra) + "\n}" + tail


def _merge_predictions(head: str, extra: list[str], tail: str) -> str:
    """Put every generated prediction into the study's one `predict` section."""
    operations = [line for line in extra if line.lstrip().startswith("operation")]
    predictions = [
        "    " + line.strip()[len("predict { ") : -len(" }")] for line in extra if "predict {" in line
    ]
    # After the line that opens the study-wide section, whatever comment ends that line.
    before, marker, after = head.partition("  predict {")
    rest_of_line, _, after = after.partition("\n")
    opening = marker + rest_of_line + "\n"
    return (
        before + opening + "\n".join(predictions) + "\n" + after + "\n" + "\n".join(operations) + "\n}" + tail
    )


def seconds(kind: str, lines: int, repeats: int) -> tuple[int, float]:
    """Lines in the generated study and the best time to check it; it must check without errors."""
    text = generated_study(kind, lines)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        diagnostics = diagnose(Source(f"{kind}.perf", text))
        best = min(best, time.perf_counter() - start)
    errors = [d for d in diagnostics if d.is_error]
    assert not count_errors(diagnostics), f"{kind}: {errors[:3]}"
    return len(text.splitlines()), best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs=2, default=(1_000, 20_000), metavar=("SMALL", "LARGE"))
    args = parser.parse_args()
    small, large = args.sizes
    for kind in GROWERS:
        figures = [seconds(kind, small, repeats=5), seconds(kind, large, repeats=2)]
        for count, elapsed in figures:
            print(f"{kind:<12} {count:>6} lines: {count / elapsed:>9,.0f} lines/s ({elapsed * 1000:,.0f} ms)")
        (small_lines, small_time), (large_lines, large_time) = figures
        ratio = (large_time / large_lines) / (small_time / small_lines)
        print(f"{kind:<12} time per line, {large_lines:,} / {small_lines:,} lines: {ratio:.2f}")


if __name__ == "__main__":
    main()
