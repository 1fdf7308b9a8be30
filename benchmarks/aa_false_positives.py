"""False positives and power on the CPU target, independent against paired: A/A and a planted 5% slowdown.

Not a test: a script that prints rates (issue 4's acceptance numbers).

* A/A: the scan kernel against itself, each arm a separately loaded and
  compiled copy (benchmarks/aa_kernels.py imported under two module names),
  repeated REPS times: how often is the verdict "faster" or "slower"?
  Target: at most 1 of 20.
* Planted slowdown: the scan against a scan that also runs over an extra 5% of the
  elements, REPS times: how often is it called "slower"? Target: at least 90%.

Each repetition uses the run stage's own sampler (interleaved ABBA blocks,
rotated buffers larger than the cache, warm-up by count and time) and judges
the same block medians twice: the old independent `compare` (each arm
bootstrapped on its own) and the evaluation's paired `compare_blocks`
(adjacent blocks as pairs), in process: the same statistics as `perfdsl run` +
`perfdsl evaluate` without writing a bundle per repetition.

    .venv/bin/python benchmarks/aa_false_positives.py [--reps 20] [--blocks 20] [--theta 0.01]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections import defaultdict
from pathlib import Path
from types import ModuleType

import attrs
import numpy as np

from perfdsl.bundle.evaluation.kernels import Comparison
from perfdsl.bundle.sampling import TimingSettings
from perfdsl.evaluate.compare import compare, compare_blocks
from perfdsl.kernel import Variant
from perfdsl.runtime.targets import make_target
from perfdsl.runtime.timing import prepare_arms, sample

HERE = Path(__file__).resolve().parent
SHAPE = {"N": 1 << 16}
"""256 KiB a float32 array: a chain of about a third of a millisecond, latency-bound."""


def load_kernels(module_name: str) -> ModuleType:
    """benchmarks/aa_kernels.py as a fresh module: its own Numba dispatchers."""
    spec = importlib.util.spec_from_file_location(module_name, HERE / "aa_kernels.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    return module


def one_comparison(
    baseline: Variant, change: Variant, settings: TimingSettings, seed: int, level: float, theta: float
) -> tuple[Comparison, Comparison]:
    """Sample both arms interleaved and compare their block medians: independent, then paired."""
    from kernels.copy import reference

    target = make_target("cpu")
    arms = prepare_arms(target, reference, [baseline, change], SHAPE, "float32", 4, seed=seed)
    arms = [attrs.evolve(arm, name=role) for arm, role in zip(arms, ("baseline", "change"), strict=True)]
    record = sample(target, arms, settings)
    blocks: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for s in record.samples:
        blocks[s.arm][s.block].append(s.duration_ns)
    medians = {arm: np.array([np.median(v) for _, v in sorted(b.items())]) for arm, b in blocks.items()}
    index = {arm: tuple(sorted(b)) for arm, b in blocks.items()}
    independent = compare(medians["baseline"], medians["change"], level=level, min_effect=theta)
    paired, _ = compare_blocks(
        medians["baseline"],
        index["baseline"],
        medians["change"],
        index["change"],
        level=level,
        min_effect=theta,
    )
    return independent, paired


def experiment(
    name: str, baseline: Variant, change: Variant, args: argparse.Namespace, settings: TimingSettings
) -> list[tuple[Comparison, Comparison]]:
    """REPS comparisons of one pair, printed one line each (independent, then paired)."""
    results = []
    for rep in range(args.reps):
        both = one_comparison(baseline, change, settings, seed=rep, level=args.level, theta=args.theta)
        results.append(both)
        shown = "; ".join(
            f"{c.analysis} {c.ratio:.4f} [{c.ci_low:.4f}, {c.ci_high:.4f}] {c.verdict}" for c in both
        )
        print(f"  {name} {rep + 1:>2}/{args.reps}: {shown}", flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--blocks", type=int, default=20, help="blocks per arm (at least 10)")
    parser.add_argument("--repeats", type=int, default=20, help="timed calls per block")
    parser.add_argument("--level", type=float, default=0.95)
    parser.add_argument(
        "--theta",
        type=float,
        default=0.01,
        help="the study's minimum effect (the threshold is max(1%%, theta))",
    )
    args = parser.parse_args()
    sys.path.insert(0, str(HERE.parent))  # the bundled kernels/ package: its copy reference draws the inputs
    settings = TimingSettings(warmup_calls=5, warmup_ms=50.0, repeats=args.repeats, blocks=args.blocks)
    arm_a, arm_b = load_kernels("aa_kernels_a"), load_kernels("aa_kernels_b")
    print(
        f"settings: {args.reps} repetitions, {args.blocks} blocks x {args.repeats} calls per arm, "
        f"{args.level:.0%} intervals, threshold {max(0.01, args.theta):.1%}, shape {SHAPE}"
    )
    began = time.perf_counter()
    aa = experiment("A/A", arm_a.scan, arm_b.scan, args, settings)
    planted = experiment("+5%", arm_a.scan, arm_b.scan_more, args, settings)
    for which, analysis in enumerate(("independent", "paired")):
        false_positives = sum(pair[which].verdict in ("faster", "slower") for pair in aa)
        called_slower = sum(pair[which].verdict == "slower" for pair in planted)
        median_ratio = float(np.median([pair[which].ratio for pair in planted]))
        print(
            f"{analysis}: A/A {false_positives}/{args.reps} called faster or slower "
            f"(target <= 1 of 20): {'PASS' if false_positives <= args.reps / 20 else 'FAIL'}; "
            f"planted 5% slowdown {called_slower}/{args.reps} called slower = "
            f"{called_slower / args.reps:.0%} (target >= 90%), median measured ratio {median_ratio:.4f}: "
            f"{'PASS' if called_slower >= 0.9 * args.reps else 'FAIL'}"
        )
    print(f"elapsed {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
