"""Simulated ABBA block medians with a planted ratio, for the statistics tests.

A run of n rounds interleaves the arms as the sampler does (A B | B A | ...);
each block's log median is the shape's level, the machine's state at that
round (shared by the two blocks of a round), the planted log ratio for the
change, and independent block noise.
"""

from __future__ import annotations

import math

import numpy as np

from perfdsl.bundle.stopping import StoppingRule, StopRecord
from perfdsl.runtime.sequential import Watch
from perfdsl.stats.paired import Pairs, pair_blocks
from perfdsl.stats.sequential.rule import replay


def abba_indices(rounds: int) -> tuple[np.ndarray, np.ndarray]:
    """Block indices of baseline and change in an ABBA run of `rounds` rounds."""
    first = np.arange(rounds) % 2 == 0
    start = 2 * np.arange(rounds)
    return np.where(first, start, start + 1), np.where(first, start + 1, start)


def abba_pairs(
    rng: np.random.Generator,
    rounds: int,
    ratio: float,
    sd: float,
    *,
    level: float = 1e6,
    machine: np.ndarray | None = None,
) -> Pairs:
    """One simulated run, paired: `ratio` planted, log noise `sd` per block, `machine` per round."""
    state = np.zeros(rounds) if machine is None else machine
    base = level * np.exp(state + rng.normal(0.0, sd, rounds))
    change = level * ratio * np.exp(state + rng.normal(0.0, sd, rounds))
    bi, ci = abba_indices(rounds)
    return pair_blocks(base, bi, change, ci)


def spoiled_log_ratios(seed: int, pairs: int, ratio: float, spoiled: int, within: int) -> np.ndarray:
    """A run's pair log-ratios (2 % block noise, 5 % machine state per round) with `spoiled` of its
    first `within` pairs hit by a 3x spike on one block, either arm."""
    rng = np.random.default_rng(seed)
    d = abba_pairs(rng, pairs, ratio, 0.02, machine=rng.normal(0.0, 0.05, pairs)).log_ratios.copy()
    hit = rng.choice(min(within, pairs), spoiled, replace=False)
    d[hit] += np.where(rng.random(spoiled) < 0.5, math.log(3.0), -math.log(3.0))
    return d


def watched_and_replayed(rule: StoppingRule, log_ratios: np.ndarray) -> tuple[StopRecord, StopRecord]:
    """The stop the sampler's `Watch` records over these pair log-ratios (each fed as a 1 ms
    baseline block, then the change's, looked at after each pair) and the evaluation's replay."""
    watch = Watch(rule, "baseline", "change")
    for index, ratio in enumerate(np.exp(log_ratios)):
        watch.block("baseline", 2 * index, [1_000_000])
        watch.block("change", 2 * index + 1, [round(1_000_000 * float(ratio))])
        if watch.decided():
            break
    recorded, replayed = watch.record(), replay(watch._log_ratios(), rule)
    assert recorded is not None and replayed is not None
    return recorded, replayed
