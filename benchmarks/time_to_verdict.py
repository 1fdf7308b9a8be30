"""Time to a verdict: the sequential rule against the fixed design, on two real CPU kernels.

Not a test: a script that prints a table. Two Numba kernels, each timed by
perfdsl's own sampler (`perfdsl.runtime.timing.sample`, interleaved ABBA
blocks on the CPU target):

* `chain`, latency-bound: y[i] = 0.5 * y[i-1] + x[i], a dependency chain whose
  time is the core's latency per element;
* `copy`, bandwidth-bound: y[:] = x[:] over buffers larger than the
  last-level cache.

The change arm is planted `--effects` slower by doing (1 + e) times the work
(that many more elements). For each kernel, effect and `--seeds` seeded run
(the seed draws the input data), it measures:

* the sequential rule (`perfdsl.stats.sequential`): pairs from `--min-pairs`
  until the confidence sequence is decided against the threshold, or `--cap`;
* the fixed design that reaches 80 % power at the 2 % effect: its pair count
  is sized from an A/A pilot's pair spread (`perfdsl.stats.power.pairs_needed`,
  the 2 % ratio against the band's edge), and judged by the paired bootstrap
  (`perfdsl.evaluate.compare.compare_blocks`), as `stop fixed` is.

Machine time is the sampler's wall time (warm-up, every block and the garbage
collection between blocks). A verdict is correct when it is true of the
planted ratio: no meaningful change for 0; no meaningful change or slower for
an effect at or below the threshold (the band's edge); slower above it.
Wrong is any other decided verdict; inconclusive is counted apart.

    .venv/bin/python benchmarks/time_to_verdict.py [--seeds 20] [--effects 0,1,2,5,10,30] [--threshold 1]

Timings on a shared machine are not evidence of speed; the script prints the
load average beside the table so the reader can judge.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

import attrs
import numba
import numpy as np

from perfdsl.bundle.sampling import TimingSettings
from perfdsl.bundle.stopping import RHO, StoppingRule
from perfdsl.evaluate.compare import compare_blocks
from perfdsl.runtime.targets import Target
from perfdsl.runtime.timing import Arm, Sampled, sample
from perfdsl.stats.power import pairs_needed

DESIGN_EFFECT = 0.02
"""The effect the fixed design is sized to detect with 80 % power."""
PILOT_PAIRS = 10


@numba.njit(nogil=True, cache=False)
def _chain(x, y, n):
    acc = x.dtype.type(0.0)
    for i in range(n):
        acc = acc * 0.5 + x[i]
        y[i] = acc


@numba.njit(nogil=True, cache=False)
def _copy(x, y, n):
    for i in range(n):
        y[i] = x[i]


@attrs.frozen
class Kernel:
    name: str
    function: Callable[..., None]
    elements: int
    repeats: int


KERNELS = (
    Kernel("chain (latency-bound)", _chain, 200_000, 20),
    Kernel("copy (bandwidth-bound)", _copy, 4_000_000, 3),
)


def arms(kernel: Kernel, effect: float, seed: int) -> list[Arm]:
    """Baseline and change over their own buffers; the change does (1 + effect) times the elements."""
    rng = np.random.default_rng(seed)
    size = int(kernel.elements * 1.31) + 1
    made = []
    for name, work in (("baseline", kernel.elements), ("change", round(kernel.elements * (1 + effect)))):
        x, y = rng.random(size), np.empty(size)

        def call(x=x, y=y, work=work) -> None:
            kernel.function(x, y, work)

        made.append(Arm(name, (call,), set_bytes=2 * 8 * size))
    return made


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
    started = time.perf_counter()
    record = sample(Target(), arms(kernel, effect, seed), settings)
    return record, time.perf_counter() - started


def fixed_verdict(record: Sampled, threshold: float) -> str:
    found = medians(record)
    (b, bi), (c, ci) = found["baseline"], found["change"]
    return compare_blocks(b, bi, c, ci, min_effect=threshold).verdict


def pilot_spread(kernel: Kernel, settings: TimingSettings) -> float:
    """The pair log-ratios' standard deviation of an A/A run of PILOT_PAIRS pairs."""
    record, _ = timed(kernel, 0.0, 12345, attrs.evolve(settings, blocks=PILOT_PAIRS, stopping=None))
    found = medians(record)
    d = np.log(found["change"][0]) - np.log(found["baseline"][0])
    return float(np.std(d, ddof=1))


def correct(verdict: str, effect: float, threshold: float) -> bool | None:
    """True or False for a decided verdict about the planted ratio; None when inconclusive."""
    if verdict == "inconclusive":
        return None
    if effect == 0:
        return verdict == "no meaningful change"
    if effect <= threshold:
        return verdict in ("no meaningful change", "slower")
    return verdict == "slower"


def compile_kernels() -> None:
    """Compile each kernel before anything is timed, so no run's machine time holds the JIT."""
    for kernel in KERNELS:
        kernel.function(np.zeros(4), np.zeros(4), 4)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--effects", default="0,1,2,5,10,30", help="planted effects in percent")
    parser.add_argument("--threshold", type=float, default=1.0, help="the practical threshold in percent")
    parser.add_argument("--min-pairs", type=int, default=6)
    parser.add_argument("--cap", type=int, default=400)
    args = parser.parse_args()
    threshold = args.threshold / 100
    effects = [float(e) / 100 for e in args.effects.split(",")]
    base = TimingSettings(warmup_calls=5, warmup_ms=50.0, warmup_cap_calls=200, warmup_cap_ms=2000.0)
    rule = StoppingRule(0.95, threshold, args.min_pairs, args.cap, RHO)
    compile_kernels()
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    window = f"sequential pairs {args.min_pairs}..{args.cap}"
    print(f"threshold {args.threshold:g} %, {args.seeds} seeds per row, {window}")
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
    for kernel in KERNELS:
        settings = attrs.evolve(base, repeats=kernel.repeats)
        spread = pilot_spread(kernel, settings)
        edge = (1 + DESIGN_EFFECT) / (1 + threshold) - 1
        n_fixed = min(max(pairs_needed(spread, edge) or args.cap, 5), args.cap)
        print(f"# {kernel.name}: A/A pilot pair spread {spread:.4f}; fixed design {n_fixed} pairs")
        for effect in effects:
            for design in ("sequential", "fixed"):
                pairs, seconds, calls = [], [], []
                for seed in range(args.seeds):
                    if design == "sequential":
                        record, took = timed(
                            kernel, effect, seed, attrs.evolve(settings, blocks=args.cap, stopping=rule)
                        )
                        assert record.timing.stop is not None
                        verdict, used = record.timing.stop.verdict, record.timing.stop.pairs
                    else:
                        record, took = timed(kernel, effect, seed, attrs.evolve(settings, blocks=n_fixed))
                        verdict, used = fixed_verdict(record, threshold), n_fixed
                    pairs.append(used)
                    seconds.append(took)
                    calls.append(correct(verdict, effect, threshold))
                n = len(calls)
                print(
                    " | ".join(
                        (
                            kernel.name,
                            f"{100 * effect:g} %",
                            design,
                            f"{statistics.median(pairs):g}",
                            f"{statistics.median(seconds):.2f}",
                            f"{sum(seconds):.1f}",
                            f"{sum(c is True for c in calls) / n:.0%}",
                            f"{sum(c is False for c in calls) / n:.0%}",
                            f"{sum(c is None for c in calls) / n:.0%}",
                        )
                    ),
                    flush=True,
                )
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
