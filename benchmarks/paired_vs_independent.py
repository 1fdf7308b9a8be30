"""Paired against independent analysis of an ABBA run whose machine changes speed halfway.

Not a test: a script that prints rates. Synthetic block medians are drawn as
the sampler lays them out (A B | B A | ...), with log-normal block noise, and,
in the drift scenario, the whole machine running `--step` slower from the
middle of the run on. Each scenario is analysed twice:

* independent: the ratio of the arms' median block medians, with a
  percentile bootstrap that resamples each arm on its own (what the kernel
  comparison did before the paired analysis);
* paired: `perfdsl.stats.paired.compare_paired` on adjacent block pairs.

For each it prints the A/A false-call rate (verdict faster or slower on
identical arms) and the power to call a planted 5 % slowdown "slower", over
`--seeds` seeded runs, at the practical threshold `--theta`.

    .venv/bin/python benchmarks/paired_vs_independent.py [--seeds 200] [--blocks 10] [--step 0.05]
"""

from __future__ import annotations

import argparse

import numpy as np

from perfdsl.stats.paired import compare_paired, pair_blocks
from perfdsl.stats.verdict import classify

SLOWDOWN = 1.05


def simulate(
    rng: np.random.Generator, blocks: int, ratio: float, noise: float, step: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Block medians and indices of baseline and change in one ABBA run of `blocks` per arm."""
    order = np.arange(2 * blocks)
    rounds = order // 2
    first = rounds % 2 == 0
    is_change = (order % 2 == 1) == first
    machine = np.where(order >= blocks, np.log1p(step), 0.0)
    log_time = machine + np.where(is_change, np.log(ratio), 0.0) + rng.normal(0.0, noise, order.size)
    times = 1e6 * np.exp(log_time)
    return times[~is_change], order[~is_change], times[is_change], order[is_change]


def independent_verdict(
    baseline: np.ndarray, change: np.ndarray, theta: float, resamples: int, seed: int
) -> tuple[str, float]:
    """Ratio of medians with each arm bootstrapped on its own: the verdict and the interval width."""
    rng = np.random.default_rng(seed)
    mb = np.median(baseline[rng.integers(0, baseline.size, (resamples, baseline.size))], axis=1)
    mc = np.median(change[rng.integers(0, change.size, (resamples, change.size))], axis=1)
    lo, hi = np.quantile(mc / mb, [0.025, 0.975])
    return classify(float(lo), float(hi), theta), float(hi / lo)


def paired_verdict(
    b: np.ndarray, bi: np.ndarray, c: np.ndarray, ci: np.ndarray, theta: float, resamples: int, seed: int
) -> tuple[str, float]:
    """The paired comparison's verdict and interval width (high / low)."""
    result = compare_paired(pair_blocks(b, bi, c, ci), theta=theta, resamples=resamples, seed=seed)
    return result.verdict, result.high / result.low


def scenario(name: str, step: float, args: argparse.Namespace) -> None:
    """Print both analyses' A/A false-call rate, 5 % power and median interval width."""
    print(
        f"{name} (machine step {step:+.0%} halfway, block noise {args.noise:.1%}, {args.blocks} blocks/arm)"
    )
    for label in ("independent", "paired"):
        false_calls = hits = 0
        widths = []
        for seed in range(args.seeds):
            for ratio in (1.0, SLOWDOWN):
                rng = np.random.default_rng([seed, int(ratio * 100)])
                b, bi, c, ci = simulate(rng, args.blocks, ratio, args.noise, step)
                if label == "independent":
                    verdict, width = independent_verdict(b, c, args.theta, args.resamples, seed)
                else:
                    verdict, width = paired_verdict(b, bi, c, ci, args.theta, args.resamples, seed)
                if ratio == 1.0:
                    false_calls += verdict in ("faster", "slower")
                else:
                    hits += verdict == "slower"
                    widths.append(width)
        print(
            f"  {label:>11}: A/A false calls {false_calls / args.seeds:6.1%}   "
            f"5 % slowdown called slower {hits / args.seeds:6.1%}   "
            f"median interval width {np.median(widths) - 1:6.2%}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--blocks", type=int, default=10, help="blocks per arm")
    parser.add_argument("--noise", type=float, default=0.02, help="log sd of a block median")
    parser.add_argument("--step", type=float, default=0.05, help="machine slowdown from halfway on")
    parser.add_argument("--theta", type=float, default=0.01)
    parser.add_argument("--resamples", type=int, default=2000)
    args = parser.parse_args()
    scenario("steady machine", 0.0, args)
    scenario("speed step", args.step, args)


if __name__ == "__main__":
    main()
