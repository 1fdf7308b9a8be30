"""How fast `perfdsl check` is: start-up in a fresh process, and parse+check throughput.

Prints figures; it asserts nothing (timings belong in a report, not a test).
Targets: 0.25 s or less for `perfdsl check` on one study in a fresh process,
time per line roughly constant from 1,000 to 10,000 lines, and none of the
heavy run/report dependencies imported on the check path.

    .venv/bin/python benchmarks/check_speed.py
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "studies" / "rmsnorm_fusion.perf"
HEAVY = ("numba", "scipy", "weasyprint", "matplotlib")
RUNS = 10


def fresh_process_seconds(bytecode: bool) -> float:
    """Median wall time of `python -m perfdsl check STUDY` over RUNS fresh processes.

    With `bytecode`, the run may cache compiled modules as an installed package
    does; without, every module is compiled from source on every run (what
    PYTHONDONTWRITEBYTECODE=1 in a development shell costs).
    """
    command = [sys.executable, "-m", "perfdsl", "check", str(STUDY)]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    if not bytecode:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    # The first run writes the grammar cache (and bytecode, when allowed).
    subprocess.run(command, check=True, capture_output=True, env=env)
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def generated_study(lines: int) -> str:
    """A valid study of about `lines` lines: the bundled one plus repeated sections."""
    text = STUDY.read_text(encoding="utf-8")
    head, _, tail = text.rpartition("\n}")
    extra: list[str] = []
    index = 0
    while len(text.splitlines()) + len(extra) < lines:
        extra += [
            f"  operation extra_{index} {{",
            "    baseline  kernels.rmsnorm:unfused",
            "    change    kernels.rmsnorm:fused",
            "    reference kernels.rmsnorm:reference",
            "    bytes     baseline 4*(5*M*N + M), change 4*(2*M*N + N)",
            "  }",
            f'  rejected "Alternative explanation {index}" {{',
            '    because "ruled out by the measured bytes"',
            "  }",
        ]
        index += 1
    return head + "\n" + "\n".join(extra) + "\n}" + tail


def seconds_per_line(lines: int) -> tuple[int, float, float]:
    """Best-of-5 parse and check times per line on a generated study (must check cleanly)."""
    from perfdsl.check import check
    from perfdsl.parse import parse
    from perfdsl.source import Source

    text = generated_study(lines)
    count = len(text.splitlines())
    parse_best = check_best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        parsed = parse(Source("generated.perf", text))
        middle = time.perf_counter()
        assert parsed.study is not None and not parsed.diagnostics
        found = check(parsed.study)
        parse_best = min(parse_best, middle - start)
        check_best = min(check_best, time.perf_counter() - middle)
    assert not found, found[:3]
    return count, parse_best / count, check_best / count


def heavy_imports() -> dict[str, bool]:
    """Which heavy modules the check path imports, in a fresh interpreter."""
    probe = (
        "import sys, perfdsl.commands.check, perfdsl.check, perfdsl.parse; "
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                            text=True)
    loaded = set(filter(None, result.stdout.strip().split(",")))
    return {name: name in loaded for name in HEAVY}


def main() -> None:
    for bytecode, how in ((True, "bytecode cached"), (False, "compiled every run")):
        wall = fresh_process_seconds(bytecode)
        print(f"perfdsl check {STUDY.relative_to(ROOT)} in a fresh process ({how}): "
              f"median {wall * 1000:.0f} ms over {RUNS} runs (target <= 250 ms)")
    small_lines, small_parse, small_check = seconds_per_line(1_000)
    large_lines, large_parse, large_check = seconds_per_line(10_000)
    for lines, parse_time, check_time in ((small_lines, small_parse, small_check),
                                          (large_lines, large_parse, large_check)):
        per_line = parse_time + check_time
        print(f"parse+check {lines:>6} lines: {1 / per_line:>8,.0f} lines/s "
              f"({per_line * lines * 1000:.0f} ms: parse {parse_time * lines * 1000:.0f} ms, "
              f"check {check_time * lines * 1000:.0f} ms)")
    ratio = (large_parse + large_check) / (small_parse + small_check)
    print(f"time per line, 10,000 / 1,000 lines: {ratio:.2f} (linear growth: near 1; "
          f"parse {large_parse / small_parse:.2f}, check {large_check / small_check:.2f})")
    for name, loaded in heavy_imports().items():
        print(f"{name:<11} imported by the check path: {'YES' if loaded else 'no'}")


if __name__ == "__main__":
    main()
