"""The sampler's side of the sequential rule: after each round of blocks, has the comparison stopped?

The sampler hands every finished block of the two compared arms to a `Watch`,
and asks it after each round (one block of every arm, so one more pair). The
watch turns each block into its median exactly as the evaluation reads it from
the sample CSV (`numpy.median` of the block's integer durations, every sample
kept), pairs the blocks with the evaluation's own pairing, and applies the
rule's look to the pairs so far (`perfdsl.stats.sequential.rule`). So the stop
the run records is the one `evaluate` replays from the raw samples. While the
comparison is open, the watch also says how many pairs it would take at the
current spread (`Watch.outlook`), which the progress display turns into time.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from perfdsl.bundle.stopping import OPEN, StoppingRule, StopRecord
from perfdsl.stats.sequential import planned
from perfdsl.stats.sequential.rule import Look, look, pair_log_ratios, pairs_to_decide, settle, stop_record


class Watch:
    """The block medians of the compared arms so far, and the rule that may stop them."""

    def __init__(self, rule: StoppingRule, baseline: str, change: str) -> None:
        self.rule = rule
        self.arms = (baseline, change)
        self._medians: dict[str, list[float]] = {baseline: [], change: []}
        self._indices: dict[str, list[int]] = {baseline: [], change: []}
        self.stop: StopRecord | None = None
        self.current: Look | None = None
        """The latest look (`decided`)."""
        if rule.planned:  # before any block is timed, not between two of them
            planned.prepare(rule.looks)

    def block(self, arm: str, index: int, durations_ns: Sequence[int]) -> None:
        """Keep one finished block of a compared arm (a block without samples has no median)."""
        if arm in self._medians and durations_ns:
            self._medians[arm].append(float(np.median(list(durations_ns))))
            self._indices[arm].append(index)

    def _log_ratios(self) -> np.ndarray:
        baseline, change = self.arms
        return pair_log_ratios(
            np.array(self._medians[baseline]),
            np.array(self._indices[baseline]),
            np.array(self._medians[change]),
            np.array(self._indices[change]),
        )

    def decided(self) -> bool:
        """Look at the pairs so far; True once the rule has stopped the comparison."""
        d = self._log_ratios()
        if self.stop is None and d.size:
            self.current = look(d, self.rule)
            self.stop = settle(self.current, self.rule)
        return self.stop is not None

    def outlook(self) -> tuple[Look, int] | None:
        """While open: the latest look, and the pairs it would stop at if its ratio and spread
        held (`rule.pairs_to_decide`), for the progress display's time left."""
        if self.stop is not None or self.current is None:
            return None
        return self.current, pairs_to_decide(self.current, self.rule)

    def record(self) -> StopRecord | None:
        """The stop, or, when the blocks ended before the rule stopped, the last look marked OPEN."""
        if self.stop is not None:
            return self.stop
        d = self._log_ratios()
        if not d.size:
            return None
        return stop_record(look(d, self.rule), self.rule, OPEN)
