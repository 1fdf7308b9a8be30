"""Where a run is while it runs: the estimate announced, then a live view of the timing blocks.

While measuring, the timing sampler reports each block's start and end (its
`on_block` hook); in a worker, that hook relays the event to the parent over
the worker's pipe, and the parent calls the hook `RunProgress.blocks` made for
the step. The display shows which operation, shape and arm, the blocks
done and the time left, the left time re-estimated from the blocks measured so
far (the estimate itself: perfdsl/runtime/estimate.py); under a sequential
rule, from the pairs the comparison's current spread still needs (`look`), said
as an estimate: "about 40 s left, if the spread holds". On a terminal it
rewrites one line of stderr; elsewhere (a CI log) it prints plain lines, at
most one per `interval_s` and one at every new step; with `--quiet` nothing at all.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, TextIO

from perfdsl.bundle.stopping import DECIDED, StopRecord
from perfdsl.runtime.estimate import RunEstimate

if TYPE_CHECKING:
    from perfdsl.stats.sequential.rule import Look

LONG_RUN_S = 600.0
"""A run estimated longer than this (10 minutes) is announced as a warning."""


def stop_summary(stop: StopRecord) -> str:
    """`decided faster after 8 pairs, interval [0.41, 0.52]`, or where the cap left it."""
    interval = f"interval [{stop.low:.4g}, {stop.high:.4g}]"
    if stop.reason == DECIDED:
        return f"decided {stop.verdict} after {stop.pairs} pairs, {interval}"
    straddled = stop.rule.straddled(stop.low, stop.high)
    if stop.verdict != "inconclusive" and straddled:
        bounds = " and ".join(f"{edge:.4g}" for edge in straddled)
        return (
            f"{stop.verdict} at the cap of {stop.pairs} pairs, {interval}, "
            f"still across the prediction bound {bounds}"
        )
    return f"{stop.verdict} at the cap of {stop.pairs} pairs, {interval}"


def duration(seconds: float) -> str:
    """`under 1 s`, `45 s`, `12 min`, `1 h 05 min`: as precise as an estimate deserves
    (a quick run's whole timing can take under a second, which "0 s" misstates)."""
    if seconds < 0.5:
        return "under 1 s"
    if seconds < 90:
        return f"{max(seconds, 0):.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min"


class Progress(Protocol):
    """What a run stage reports to: `RunProgress` in the parent, a relay to it in a worker."""

    def __call__(self, message: str) -> None: ...

    def blocks(self, key: str, order: Sequence[str]) -> Callable[[], None]: ...

    def look(self, key: str, current: Look, needed: int) -> None: ...

    def finish_step(self, key: str, stop: StopRecord | None = None) -> None: ...


class RunProgress:
    """The run's voice on stderr: steps, the estimate, and a live view of the timing blocks.

    Callable with a message, as the run's steps have always been reported, so
    every stage that takes a `progress` callable takes this too.
    """

    def __init__(
        self,
        stream: TextIO | None = None,
        *,
        quiet: bool = False,
        live: bool | None = None,
        interval_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._quiet = quiet
        self._live = self._stream.isatty() if live is None else live
        self._interval_s = interval_s
        self._clock = clock
        self._pending: dict[str, float] = {}
        self._scale = 1.0
        """Measured / estimated seconds over the finished steps: corrects the steps still to come."""
        self._last_line = -math.inf
        self._outlooks: dict[str, tuple[Look, int]] = {}
        """Each open sequential step's latest look and the pairs it would stop at (`look`)."""

    def __call__(self, message: str) -> None:
        if self._quiet:
            return
        # On a terminal a step's line replaces the live one and stays; the next live line goes below it.
        self._stream.write(("\r\x1b[K" if self._live else "") + f"  {message}\n")
        self._stream.flush()

    def announce(self, estimate: RunEstimate) -> None:
        """Say how long the run will take (a warning past LONG_RUN_S), before anything is measured."""
        self._pending = {s.key: s.seconds for s in estimate.steps}
        load = (
            f", then the load search (at most {duration(estimate.load_budget_s)})"
            if estimate.load_budget_s
            else ""
        )
        self(
            f"estimated measuring time: {duration(estimate.seconds)}{load} (from calibration calls; "
            "compilation and correctness checks not counted)"
        )
        if estimate.seconds > LONG_RUN_S:
            longest = max(estimate.steps, key=lambda s: s.seconds, default=None)
            where = f"; the longest step is {longest.key} ({duration(longest.seconds)})" if longest else ""
            self(
                f"warning: this run is long (about {duration(estimate.seconds)}){where}; "
                "`--quick` makes a smoke run; fewer `blocks`, `repeats` or smaller shapes shorten a full one"
            )
        if estimate.load_budget_s > LONG_RUN_S:
            # A search that steps below the sweep's lowest rate runs probes that each take
            # longer: a new user's ran 6 min past its 47 s of kernels before they stopped it.
            self(
                f"warning: the load search may take up to {duration(estimate.load_budget_s)}: a probe "
                "lasts its requests over its rate, so the sweep's lowest rate sets the budget; a higher "
                "lowest rate in `load`, or fewer `requests`, shortens it"
            )

    def blocks(self, key: str, order: Sequence[str]) -> Callable[[], None]:
        """A sampler `on_block` hook that reports the blocks of step `key` (`order`: each block's arm).

        The sampler calls it at the start and at the end of every block; it
        returns nothing to store with the block. The time left is this step's
        blocks still to run at the pace of those done, plus the steps to come
        at their estimate, corrected by how the finished steps compared with theirs.
        A sequential step's blocks still to run are those of the pairs its latest
        look expects to need at the current spread (`look`), not the cap's; the
        steps to come have no spread yet and keep the cap's estimate.
        """
        started = self._clock()
        calls = 0
        total = len(order)
        per_pair = len(set(order)) or 1
        estimated = self._pending.get(key)

        def hook() -> None:
            nonlocal calls
            index, ending = divmod(calls, 2)
            calls += 1
            if index >= total:
                return
            done = index + ending
            elapsed = self._clock() - started
            if done == total and estimated:
                self._scale = elapsed / estimated
            if done == total:
                self._pending.pop(key, None)
            outlook = self._outlooks.get(key)
            planned = total if outlook is None else min(total, outlook[1] * per_pair)
            here = elapsed / done * max(planned - done, 0) if done else (estimated or 0.0) * self._scale
            later = sum(s for k, s in self._pending.items() if k != key) * self._scale
            remaining = duration(here + later)
            left = f"{'' if remaining.startswith('under') else 'about '}{remaining} left"
            if outlook is not None:
                current = outlook[0]
                left = (
                    f"open after {current.pairs} pairs, interval [{current.low:.4g}, {current.high:.4g}]; "
                    f"{left}, if the spread holds"
                )
            self._line(
                f"  {key}: block {index + 1}/{total} ({order[index]}), {done} done, {left}",
                step=calls == 1 or done == total,
            )

        return hook

    def look(self, key: str, current: Look, needed: int) -> None:
        """Step `key`'s comparison is still open at `current`, and would stop at `needed` pairs
        if its ratio and spread held (`stats.sequential.rule.pairs_to_decide`): the time
        left follows from that from the next block on."""
        self._outlooks[key] = (current, needed)

    def finish_step(self, key: str, stop: StopRecord | None = None) -> None:
        """The step no longer counts towards the time left; a sequential `stop` is said.

        A rule that decides early leaves the step's last planned block unrun, so the
        display names what the step ended on: the pairs, the interval and the verdict,
        or the cap. Said in every mode (a log too): it is the step's result."""
        self._pending.pop(key, None)
        self._outlooks.pop(key, None)
        if stop is not None:
            self(f"{key}: {stop_summary(stop)}")

    def _line(self, text: str, *, step: bool) -> None:
        """A terminal rewrites one line; a log gets a step's first and last block, and one per interval."""
        if self._quiet:
            return
        if self._live:
            self._stream.write(f"\r\x1b[K{text}")
        elif step or self._clock() - self._last_line >= self._interval_s:
            self._stream.write(text + "\n")
            self._last_line = self._clock()
        else:
            return
        self._stream.flush()
