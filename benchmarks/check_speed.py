"""How fast `perfdsl check` is: start-up in a fresh process, and parse+check throughput.

Prints figures; it asserts nothing (timings belong in a report, not a test).
Targets: 0.25 s or less for `perfdsl check` on one study in a fresh process,
time per line roughly constant from 1,000 to 10,000 lines, and none of the
heavy run/report dependencies imported on the check path.

    .venv/bin/python benchmarks/check_speed.py

Fresh-process times are wall times, median and minimum of interleaved runs:
on a busy 2-core machine the median moves with the load (printed first) and
the minimum is the better guide to what the code costs.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "studies" / "rmsnorm_fusion.perf"
HEAVY = ("numpy", "numba", "scipy", "weasyprint", "matplotlib")
RUNS = 15
TARGET_MS = 250


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    return {**env, **extra}


def fresh_process_ms(tree: Path) -> dict[str, tuple[float, float]]:
    """(median, min) wall milliseconds of each start-up figure, over RUNS interleaved runs.

    "bytecode cached" is an installed package (pip compiles it). "compiled every
    run" runs `tree`, a copy of perfdsl without __pycache__, under
    PYTHONDONTWRITEBYTECODE=1, as a development shell that sets it does (`-m`
    finds the package in the working directory first). `python -c pass` is the
    interpreter and its site-packages `.pth` files alone, which perfdsl does not
    control.
    """
    check = [sys.executable, "-m", "perfdsl", "check", str(STUDY)]
    commands = {
        "bytecode cached": (check, _environment(), ROOT),
        "compiled every run": (check, _environment(PYTHONDONTWRITEBYTECODE="1"), tree),
        "python -c pass": ([sys.executable, "-c", "pass"], _environment(), ROOT),
    }
    for command, env, cwd in commands.values():
        # The first run writes the grammar cache (and bytecode, where allowed).
        subprocess.run(command, check=True, capture_output=True, env=env, cwd=cwd)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(RUNS):
        for name, (command, env, cwd) in commands.items():
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, env=env, cwd=cwd)
            times[name].append((time.perf_counter() - start) * 1000)
    return {name: (statistics.median(ms), min(ms)) for name, ms in times.items()}


def pth_redirector_ms() -> float:
    """numba-cuda's `_numba_cuda_redirector.pth` at interpreter start (-X importtime, best of 5)."""
    best = float("inf")
    for _ in range(5):
        result = subprocess.run(
            [sys.executable, "-X", "importtime", "-c", "pass"],
            check=True,
            capture_output=True,
            text=True,
            env=_environment(),
            cwd=ROOT,
        )
        found = re.search(r"\|\s*(\d+) \|\s*_numba_cuda_redirector$", result.stderr, re.MULTILINE)
        if found is None:
            return 0.0
        best = min(best, int(found.group(1)) / 1000)
    return best


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


def heavy_imports() -> list[str]:
    """The heavy modules that running `perfdsl check` imports, in a fresh interpreter."""
    probe = (
        "import contextlib, io, sys; from perfdsl.cli import main\n"
        f"with contextlib.redirect_stdout(io.StringIO()): main(['check', {str(STUDY)!r}])\n"
        f"print(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe],
        check=True,
        capture_output=True,
        text=True,
        env=_environment(),
        cwd=ROOT,
    )
    return list(filter(None, result.stdout.strip().split(",")))


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    with tempfile.TemporaryDirectory() as tree:
        for part in ("perfdsl", "grammar"):
            shutil.copytree(ROOT / part, Path(tree) / part, ignore=shutil.ignore_patterns("__pycache__"))
        startup = fresh_process_ms(Path(tree))
    print(
        f"perfdsl check {STUDY.relative_to(ROOT)} in a fresh process, {RUNS} runs (target <= {TARGET_MS} ms):"
    )
    for name, (median, best) in startup.items():
        print(f"  {name:<20} median {median:4.0f} ms, min {best:4.0f} ms")
    print(
        f"  of `python -c pass`, numba-cuda's .pth redirector: {pth_redirector_ms():.0f} ms "
        "(-X importtime; outside perfdsl)"
    )
    figures = [seconds_per_line(lines) for lines in (1_000, 10_000)]
    for lines, parse_time, check_time in figures:
        per_line = parse_time + check_time
        print(
            f"parse+check {lines:>6} lines: {1 / per_line:>8,.0f} lines/s "
            f"({per_line * lines * 1000:.0f} ms: parse {parse_time * lines * 1000:.0f} ms, "
            f"check {check_time * lines * 1000:.0f} ms)"
        )
    (_, small_parse, small_check), (_, large_parse, large_check) = figures
    ratio = (large_parse + large_check) / (small_parse + small_check)
    print(
        f"time per line, 10,000 / 1,000 lines: {ratio:.2f} (linear growth: near 1; "
        f"parse {large_parse / small_parse:.2f}, check {large_check / small_check:.2f})"
    )
    loaded = heavy_imports()
    print(
        f"heavy modules imported by `perfdsl check` ({', '.join(HEAVY)}): "
        f"{', '.join(loaded) if loaded else 'none'}"
    )


if __name__ == "__main__":
    main()
