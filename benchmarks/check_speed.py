"""How fast `perfdsl check` is: its start-up against the interpreter's own, and a 20,000-line study.

Prints figures; it asserts nothing (timings belong in a report, not a test).
Targets: `perfdsl check` of a typical study within 1.5x of `python -c pass`,
a 20,000-line study checked in under 2 s, and none of the heavy run/report
dependencies imported on the check path.

    .venv/bin/python benchmarks/check_speed.py [--runs 21]

Every figure is a wall time of a fresh process, the processes of one table
interleaved, so that a ratio compares runs made under the same load: on a
shared machine the load moves every time (it is printed first), and only the
ratios within one run are evidence. The minimum is the better guide to what
the code costs; the median says what a user waits under that load.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from check_scaling import generated_study

ROOT = Path(__file__).resolve().parent.parent
STUDY = ROOT / "studies" / "rmsnorm_fusion.perf"
HEAVY = ("numpy", "numba", "scipy", "weasyprint", "matplotlib", "lark")
"""Not on the check path: the run and report stages' dependencies, and Lark (a study that parses
is parsed from the shipped plain tables; Lark is loaded for a syntax error's message)."""
TARGET_RATIO = 1.5
LARGE_LINES = 20_000
LARGE_TARGET_S = 2.0


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    return {**env, **extra}


# `-m` from the repository root: the perfdsl of this checkout, whatever the environment installed.
PERFDSL = [sys.executable, "-m", "perfdsl"]


Command = tuple[list[str], dict[str, str], Path]


def _times(commands: dict[str, Command], runs: int) -> dict[str, list[float]]:
    """Wall milliseconds of each command over `runs` interleaved runs, after one unmeasured run each."""
    for command, env, cwd in commands.values():
        # The first run writes bytecode, where allowed.
        subprocess.run(command, check=True, capture_output=True, env=env, cwd=cwd)
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (command, env, cwd) in commands.items():
            start = time.perf_counter()
            subprocess.run(command, check=True, capture_output=True, env=env, cwd=cwd)
            times[name].append((time.perf_counter() - start) * 1000)
    return times


def startup(tree: Path, bare: Path, runs: int) -> dict[str, list[float]]:
    """`perfdsl check` of the bundled study beside the interpreter's own start-up.

    "bytecode compiled every run" runs `tree`, a copy of perfdsl without
    __pycache__, under PYTHONDONTWRITEBYTECODE=1, as a development shell that
    sets it does (`-m` finds the package in the working directory first).
    "tables not shipped" runs `bare`, a copy without perfdsl/parser_data.py: the
    parser is built from the grammar at every start, as after an edit of the
    grammar until the tables are rebuilt.
    """
    check = [*PERFDSL, "check", str(STUDY)]
    return _times(
        {
            "python -S -c pass": ([sys.executable, "-S", "-c", "pass"], _environment(), ROOT),
            "python -c pass": ([sys.executable, "-c", "pass"], _environment(), ROOT),
            "python -c 'import attrs'": ([sys.executable, "-c", "import attrs"], _environment(), ROOT),
            "python -c 'import attrs, lark'": (
                [sys.executable, "-c", "import attrs, lark"],
                _environment(),
                ROOT,
            ),
            "python -m perfdsl check": (check, _environment(), ROOT),
            "bytecode compiled every run": (check, _environment(PYTHONDONTWRITEBYTECODE="1"), tree),
            "tables not shipped": (check, _environment(), bare),
        },
        runs,
    )


def _pth_modules() -> set[str]:
    """The modules that the site-packages `.pth` files of this interpreter import at every start."""
    probe = "import site; print('\\n'.join(site.getsitepackages()))"
    found: set[str] = set()
    result = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    for directory in result.stdout.split():
        for pth in Path(directory).glob("*.pth"):
            for line in pth.read_text(encoding="utf-8", errors="replace").splitlines():
                if line.startswith(("import ", "import\t")):
                    found.update(re.findall(r"(?:^import\s+|__import__\(')([\w.]+)", line))
    # `import os; ...` in a .pth imports nothing new: site has imported the standard library's own.
    return found - set(sys.stdlib_module_names)


def pth_ms() -> float:
    """The `.pth` files' imports at interpreter start (-X importtime, best of 5): not perfdsl's."""
    modules = _pth_modules()
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
        # Imported while `site` runs: indented by two spaces under it.
        found = re.findall(r"\|\s*(\d+) \|   (\S+)$", result.stderr, re.MULTILINE)
        best = min(best, sum(int(us) for us, name in found if name in modules) / 1000)
    return best


def large_study_s(kind: str, runs: int) -> tuple[int, list[float]]:
    """The lines of a generated study and `perfdsl check`'s wall seconds on it, fresh processes."""
    text = generated_study(kind, LARGE_LINES)
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / f"{kind}.perf"
        path.write_text(text, encoding="utf-8")
        result = subprocess.run([*PERFDSL, "check", str(path)], capture_output=True, text=True, cwd=ROOT)
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        times: list[float] = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([*PERFDSL, "check", str(path)], check=True, capture_output=True, cwd=ROOT)
            times.append(time.perf_counter() - start)
    return len(text.splitlines()), times


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


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} cores"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="fresh processes per start-up figure")
    args = parser.parse_args()
    print(f"{_load()} (a shared machine: compare the ratios within this run, not the times across runs)")
    with tempfile.TemporaryDirectory() as directory:
        tree, bare = Path(directory) / "tree", Path(directory) / "bare"
        for copy in (tree, bare):
            for part in ("perfdsl", "grammar"):
                shutil.copytree(ROOT / part, copy / part, ignore=shutil.ignore_patterns("__pycache__"))
        (bare / "perfdsl" / "parser_data.py").unlink()
        times = startup(tree, bare, args.runs)
    print(f"start-up, `perfdsl check {STUDY.relative_to(ROOT)}`, fresh processes interleaved:")
    for name, ms in times.items():
        print(f"  {name:<30} median {statistics.median(ms):5.0f} ms, min {min(ms):5.0f} ms ({len(ms)} runs)")
    check = times["python -m perfdsl check"]
    for base in ("python -c pass", "python -S -c pass", "python -c 'import attrs'"):
        # Each round runs every command once, one after the other: the ratio of a round's
        # two times is taken under one load, and the median of those ratios moves least.
        rounds = statistics.median(c / b for c, b in zip(check, times[base], strict=True))
        print(
            f"  perfdsl check / {base:<24} {rounds:4.2f}x (median of the {len(check)} rounds' ratios; "
            f"of medians {statistics.median(check) / statistics.median(times[base]):4.2f}x, "
            f"of minima {min(check) / min(times[base]):4.2f}x)"
        )
    print(f"  target: {TARGET_RATIO}x `python -c pass`")
    print(
        f"  of `python -c pass`, the site-packages .pth files' imports: {pth_ms():.0f} ms "
        "(-X importtime; outside perfdsl, paid by every Python command of this environment)"
    )
    print(f"{_load()}")
    for kind in ("operations", "predictions"):
        lines, seconds = large_study_s(kind, runs=3)
        print(
            f"perfdsl check of a {lines:,}-line study grown by {kind}, fresh process: "
            f"median {statistics.median(seconds):.2f} s, min {min(seconds):.2f} s "
            f"(target < {LARGE_TARGET_S:.0f} s)"
        )
    loaded = heavy_imports()
    print(
        f"heavy modules imported by `perfdsl check` ({', '.join(HEAVY)}): "
        f"{', '.join(loaded) if loaded else 'none'}"
    )
    print(f"{_load()}")


if __name__ == "__main__":
    main()
