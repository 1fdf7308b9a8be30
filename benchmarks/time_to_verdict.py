"""Time to a verdict: the sequential rule, the fixed design and pyperf, on two real CPU kernels.

Not a test: a script that prints a table. Two Numba kernels
(`verdict_kernels.py`): `chain`, latency-bound, and `copy`, bandwidth-bound.
The change arm is planted `--effects` slower by doing (1 + e) times the work
(that many more elements). For each kernel, effect and `--seeds` seeded run
(the seed draws the input data) it measures, by perfdsl's own sampler
(`perfdsl.runtime.timing.sample`, interleaved ABBA blocks on the CPU target):

* (a) the sequential rule (`perfdsl.stats.sequential`) as a study's `stop sequential`
  runs it (plan/5 on, pairs winsorized at each look): pairs from `--min-pairs`
  until the confidence sequence is decided against the threshold, or `--cap`;
* (a') the same rule with planned looks (`looks 5`, `stats.sequential.planned`):
  five O'Brien-Fleming looks up to a cap sized from the same pilot as (b), the
  fewest pairs whose looks reach 80 % power at the 2 % effect
  (`planned.cap_for_power`), decided only at those looks;
* (b) the fixed design that reaches 80 % power at the 2 % effect: its pair count
  is sized from an A/A pilot's pair spread (`perfdsl.stats.power.pairs_needed`,
  the 2 % ratio against the band's edge), and judged by the paired bootstrap
  (`perfdsl.evaluate.compare.compare_blocks`), as `stop fixed` is;

and, once per kernel and effect (`--pyperf-seeds` runs, 1 by default: one
pyperf benchmark with its defaults, 20 processes of a warm-up and 3 values,
takes longer than all of a row's sequential runs),

* (c) pyperf with its default settings on the same kernels and buffer sets
  (`time_to_verdict_pyperf.py`, one benchmark per arm, each a fresh set of
  worker processes; the baseline's once per kernel and seed, as a pyperf user
  keeps one baseline file), judged by `pyperf compare_to`: "slower" or
  "faster" when it calls the difference significant, its "Not significant!"
  counted as its no-change call. pyperf has no practical threshold, so a
  significant 0.3 % is "slower" to it.

Machine time is the sampler's wall time (warm-up, every block and the garbage
collection between blocks), and for pyperf the wall time of both arms'
benchmarks (process start-up, pyperf's calibration and warm-up included: what
its call costs from scratch, the shared baseline's counted in each row). A
verdict is correct when it is true of the planted ratio: no meaningful change
for 0; no meaningful change or slower for an effect at or below the threshold
(the band's edge); slower above it. Wrong is any other
decided verdict; inconclusive is counted apart.

    .venv/bin/python benchmarks/time_to_verdict.py [--seeds 20] [--effects 0,1,2,5,10,30] [--threshold 1]
    .venv/bin/python benchmarks/time_to_verdict.py --smoke   # every path, tiny: a check that it runs

pyperf is in the `imports-tools` extra (`pip install pyperf`). The default
size took 17 minutes on a busy 2-core machine, more than half of it pyperf's
14 benchmarks of 21 processes each (a row's pyperf time, 73-118 s there, counts
its shared baseline's benchmark too; `--pyperf-seeds 0` leaves them out);
`--smoke` without pyperf took 17 s. Timings on a shared
machine are not evidence of speed; the script prints the load average beside
the table so the reader can judge.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import attrs
import numpy as np
from verdict_kernels import Kernel, calls, compile_all, kernels, set_bytes

from perfdsl.bundle.sampling import TimingSettings
from perfdsl.bundle.stopping import PLANNED_METHOD, RHO, WINSORIZED_METHOD, StoppingRule
from perfdsl.evaluate.compare import compare_blocks
from perfdsl.runtime.targets import Target
from perfdsl.runtime.timing import Arm, Sampled, sample
from perfdsl.stats.power import pairs_needed
from perfdsl.stats.sequential import planned

DESIGN_EFFECT = 0.02
"""The effect the fixed design is sized to detect with 80 % power."""
PILOT_PAIRS = 10
LOOKS = 5
"""The planned design's looks (a')."""
PYPERF_WORKER = Path(__file__).resolve().parent / "time_to_verdict_pyperf.py"
SMOKE = {"seeds": 2, "effects": "0,10", "cap": 20, "scale": 0.05, "pyperf_args": ("--debug-single-value",)}
"""`--smoke`: two seeds, two effects, a cap of 20 pairs, kernels a twentieth the size and one pyperf value."""


def arms(kernel: Kernel, effect: float, seed: int) -> list[Arm]:
    """Baseline and change over their own buffer sets (`verdict_kernels.calls`)."""
    return [
        Arm(name, sets, set_bytes=set_bytes(kernel)) for name, sets in calls(kernel, effect, seed).items()
    ]


def medians(record: Sampled) -> dict[str, tuple[np.ndarray, tuple[int, ...]]]:
    """Each arm's block medians and block indices, as the evaluation reads them."""
    blocks: dict[str, dict[int, list[int]]] = {}
    for s in record.samples:
        blocks.setdefault(s.arm, {}).setdefault(s.block, []).append(s.duration_ns)
    return {
        arm: (np.array([float(np.median(v)) for _, v in sorted(b.items())]), tuple(sorted(b)))
        for arm, b in blocks.items()
    }


def timed(kernel: Kernel, effect: float, seed: int, settings: TimingSettings) -> tuple[Sampled, float]:
    made = arms(kernel, effect, seed)
    started = time.perf_counter()
    record = sample(Target(), made, settings)
    return record, time.perf_counter() - started


def planned_rule(spread: float, threshold: float, min_pairs: int, cap: int) -> StoppingRule:
    """(a'): LOOKS planned looks up to the fewest pairs with 80 % power at DESIGN_EFFECT at the
    pilot's spread (at most `cap`), as a study would size `max_blocks` for `looks 5`."""
    drift = (math.log1p(DESIGN_EFFECT) - math.log1p(threshold)) / spread
    most = min(max(planned.cap_for_power(drift, LOOKS, min_pairs, 0.95), min_pairs), cap)
    looks = planned.schedule(LOOKS, min_pairs, most)
    boundaries = planned.z_boundaries(looks, 0.95)
    return StoppingRule(0.95, threshold, min_pairs, most, RHO, PLANNED_METHOD, looks, boundaries)


def fixed_verdict(record: Sampled, threshold: float) -> str:
    found = medians(record)
    (b, bi), (c, ci) = found["baseline"], found["change"]
    return compare_blocks(b, bi, c, ci, min_effect=threshold)[0].verdict


def pilot_spread(kernel: Kernel, settings: TimingSettings) -> float:
    """The pair log-ratios' standard deviation of an A/A run of PILOT_PAIRS pairs."""
    record, _ = timed(kernel, 0.0, 12345, attrs.evolve(settings, blocks=PILOT_PAIRS, stopping=None))
    found = medians(record)
    d = np.log(found["change"][0]) - np.log(found["baseline"][0])
    return float(np.std(d, ddof=1))


def pyperf_benchmark(
    kernel: Kernel, arm: str, effect: float, seed: int, scale: float, extra: tuple[str, ...], out: Path
) -> float:
    """One pyperf benchmark of one arm, with pyperf's defaults, into `out`; its wall time."""
    command = [sys.executable, str(PYPERF_WORKER), "--quiet", *extra, "-o", str(out)]
    command += ["--kernel", kernel.key, "--effect", str(effect), "--seed", str(seed)]
    command += ["--arm", arm, "--scale", str(scale)]
    started = time.perf_counter()
    subprocess.run(command, check=True, capture_output=True, text=True)
    return time.perf_counter() - started


def compare_to(baseline: Path, change: Path) -> str:
    """`pyperf compare_to`'s call on the two files."""
    command = [sys.executable, "-m", "pyperf", "compare_to", str(baseline), str(change)]
    return pyperf_verdict(subprocess.run(command, check=True, capture_output=True, text=True).stdout)


def pyperf_verdict(compared: str) -> str:
    """`pyperf compare_to`'s call in this script's words: its no-change call is "Not significant!"
    or, for a single benchmark, "Benchmark hidden because not significant"."""
    if "not significant" in compared.lower():
        return "no meaningful change"
    if "slower" in compared:
        return "slower"
    if "faster" in compared:
        return "faster"
    raise ValueError(f"unexpected `pyperf compare_to` output: {compared!r}")


def correct(verdict: str, effect: float, threshold: float) -> bool | None:
    """True or False for a decided verdict about the planted ratio; None when inconclusive."""
    if verdict == "inconclusive":
        return None
    if effect == 0:
        return verdict == "no meaningful change"
    if effect <= threshold:
        return verdict in ("no meaningful change", "slower")
    return verdict == "slower"


def row(kernel: Kernel, effect: float, design: str, pairs: list, seconds: list[float], calls_: list) -> str:
    """One line of the table."""
    n = len(calls_)
    return " | ".join(
        (
            kernel.name,
            f"{100 * effect:g} %",
            design,
            f"{statistics.median(pairs):g}" if pairs else "-",
            f"{statistics.median(seconds):.2f}",
            f"{sum(seconds):.1f}",
            f"{sum(c is True for c in calls_) / n:.0%}",
            f"{sum(c is False for c in calls_) / n:.0%}",
            f"{sum(c is None for c in calls_) / n:.0%}",
        )
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--effects", default="0,1,2,5,10,30", help="planted effects in percent")
    parser.add_argument("--threshold", type=float, default=1.0, help="the practical threshold in percent")
    parser.add_argument("--min-pairs", type=int, default=6)
    parser.add_argument("--cap", type=int, default=200)
    parser.add_argument("--scale", type=float, default=1.0, help="kernel element counts, times the default")
    parser.add_argument(
        "--pyperf-seeds", type=int, default=1, help="pyperf calls per kernel and effect (0: none)"
    )
    parser.add_argument(
        "--smoke", action="store_true", help="a tiny run of every path: a check, not evidence"
    )
    args = parser.parse_args()
    pyperf_args: tuple[str, ...] = ()
    if args.smoke:
        args.seeds, args.effects, args.cap, args.scale = (
            SMOKE[k] for k in ("seeds", "effects", "cap", "scale")
        )
        pyperf_args = SMOKE["pyperf_args"]
    if args.pyperf_seeds and importlib.util.find_spec("pyperf") is None:
        parser.error("pyperf is not installed: `pip install pyperf` (imports-tools) or --pyperf-seeds 0")
    threshold = args.threshold / 100
    effects = [float(e) / 100 for e in args.effects.split(",")]
    base = TimingSettings(warmup_calls=5, warmup_ms=50.0, warmup_cap_calls=200, warmup_cap_ms=2000.0)
    # The rule a study's `stop sequential` runs by (plan/5 on: pairs winsorized at each look).
    rule = StoppingRule(0.95, threshold, args.min_pairs, args.cap, RHO, WINSORIZED_METHOD)
    compile_all()
    started = time.monotonic()
    print(
        f"load average before: {os.getloadavg()[0]:.2f}"
        + (" (smoke run: not evidence)" if args.smoke else "")
    )
    window = f"sequential pairs {args.min_pairs}..{args.cap}"
    seeds = f"{args.seeds} seeds per row ({args.pyperf_seeds} for pyperf)"
    print(f"threshold {args.threshold:g} %, {seeds}, {window}")
    header = (
        "kernel",
        "effect",
        "design",
        "pairs (median)",
        "machine s (median)",
        "machine s (total)",
        "correct",
        "wrong",
        "inconclusive",
    )
    print(" | ".join(header))
    tmp = Path(tempfile.mkdtemp(prefix="time_to_verdict."))
    for kernel in kernels(args.scale):
        settings = attrs.evolve(base, repeats=kernel.repeats)
        spread = pilot_spread(kernel, settings)
        n_fixed = min(max(pairs_needed(spread, DESIGN_EFFECT, threshold=threshold) or args.cap, 5), args.cap)
        looked = planned_rule(spread, threshold, args.min_pairs, args.cap)
        print(
            f"# {kernel.name}: A/A pilot pair spread {spread:.4f}; fixed design {n_fixed} pairs; "
            f"planned looks at pairs {', '.join(map(str, looked.looks))}"
        )
        # pyperf's baseline is the same at every effect (the seed draws it): benchmarked once per
        # seed, as a pyperf user keeps one baseline file, and counted in every row's call.
        baselines = [
            pyperf_benchmark(
                kernel, "baseline", 0.0, seed, args.scale, pyperf_args, tmp / f"{kernel.key}-{seed}.json"
            )
            for seed in range(args.pyperf_seeds)
        ]
        for effect in effects:
            for design in ("sequential", "planned", "fixed"):
                pairs, seconds, verdicts = [], [], []
                for seed in range(args.seeds):
                    if design != "fixed":
                        chosen = rule if design == "sequential" else looked
                        record, took = timed(
                            kernel,
                            effect,
                            seed,
                            attrs.evolve(settings, blocks=chosen.max_pairs, stopping=chosen),
                        )
                        assert record.timing.stop is not None
                        verdict, used = record.timing.stop.verdict, record.timing.stop.pairs
                    else:
                        record, took = timed(kernel, effect, seed, attrs.evolve(settings, blocks=n_fixed))
                        verdict, used = fixed_verdict(record, threshold), n_fixed
                    pairs.append(used)
                    seconds.append(took)
                    verdicts.append(correct(verdict, effect, threshold))
                print(row(kernel, effect, design, pairs, seconds, verdicts), flush=True)
            if args.pyperf_seeds:
                seconds, verdicts = [], []
                for seed in range(args.pyperf_seeds):
                    change = tmp / f"{kernel.key}-{effect}-{seed}.json"
                    took = pyperf_benchmark(kernel, "change", effect, seed, args.scale, pyperf_args, change)
                    seconds.append(baselines[seed] + took)
                    verdicts.append(
                        correct(compare_to(tmp / f"{kernel.key}-{seed}.json", change), effect, threshold)
                    )
                print(row(kernel, effect, "pyperf", [], seconds, verdicts), flush=True)
    shutil.rmtree(tmp)
    print(f"load average after: {os.getloadavg()[0]:.2f}; {time.monotonic() - started:.0f} s in all")


if __name__ == "__main__":
    main()
