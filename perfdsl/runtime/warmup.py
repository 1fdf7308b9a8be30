"""Warm-up until the timing has settled, with a cap: the samples start in steady state.

A fixed count of warm-up calls is not enough: a parallel kernel's first calls
pay for JIT compilation, first-touch page faults, the thread pool's start and
the clock's ramp, and how many calls that takes depends on the kernel and the
machine (three calls left blocks 3-5x apart from first to last). The rule here:

* arms take turns, one call each, as in the sampled blocks;
* every arm makes at least `min_calls` calls and the warm-up lasts at least `min_ms`
  (time counted from the end of the first round, whose calls compile the kernels);
* an arm has **settled** when the medians of its last two consecutive windows of
  `window` calls agree within `threshold` (relative to the later window): its
  time has stopped moving by more than the threshold over 2 x `window` calls;
* warm-up ends when every arm's latest two windows agree, or at the cap (`cap_calls` per arm or
  `cap_ms` in all), whichever comes first. An arm that reaches the cap unsettled
  is recorded as such (`settled` false), and the evaluation reports it (PQ008).

Every warm-up duration is kept (the warm-up curve) but none is a sample.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs
import numpy as np

from perfdsl.bundle.sampling import CAP_CALLS, CAP_MS, Warmup

SETTLE_WINDOW = 5
"""Calls per window: a median of 5 ignores one interrupted call."""
SETTLE_THRESHOLD = 0.05
"""Two windows' medians within 5 %: below the practical threshold of most studies."""


@attrs.frozen
class WarmupPolicy:
    """How long to warm up: the floor, the settle rule, and the cap."""

    min_calls: int = 10
    min_ms: float = 200.0
    window: int = SETTLE_WINDOW
    threshold: float = SETTLE_THRESHOLD
    cap_calls: int = CAP_CALLS
    cap_ms: float = CAP_MS


QUICK_CAP = {"cap_calls": 100, "cap_ms": 2_000.0}
"""A quick run uses the same rule with a smaller cap."""


def settled_at(durations: Sequence[float], window: int, threshold: float) -> int | None:
    """The first call count n at which the windows [n-2w, n-w) and [n-w, n) agree, or None.

    Agreement: |median(later) - median(earlier)| <= threshold x median(later).
    """
    x = np.asarray(durations, dtype=float)
    if window < 1:
        raise ValueError(f"the settle window must be at least 1 call, not {window}")
    for n in range(2 * window, x.size + 1):
        earlier = float(np.median(x[n - 2 * window : n - window]))
        later = float(np.median(x[n - window : n]))
        if later > 0 and abs(later - earlier) <= threshold * later:
            return n
    return None


def warm_up(
    names: Sequence[str],
    timed: Callable[[str], Any],
    policy: WarmupPolicy,
    on_failure: Callable[[str, int, BaseException], None],
) -> tuple[Warmup, ...]:
    """Call the arms in turn until all have settled (or the cap); `timed(name)` returns a Timed.

    An arm whose call raises is reported through `on_failure` and stops.
    """
    curves: dict[str, list[int]] = {name: [] for name in names}
    failed: set[str] = set()
    began = time.perf_counter_ns()

    def steady(name: str) -> bool:
        # Judged on the latest two windows, so an arm that settled early and then
        # moved again (another arm woke the thread pool, say) is not counted settled.
        recent = curves[name][-2 * policy.window :]
        return settled_at(recent, policy.window, policy.threshold) is not None

    while True:
        live = [n for n in names if n not in failed]
        elapsed_ms = (time.perf_counter_ns() - began) / 1e6
        floor_met = elapsed_ms >= policy.min_ms and all(len(curves[n]) >= policy.min_calls for n in live)
        capped = elapsed_ms >= policy.cap_ms or all(len(curves[n]) >= policy.cap_calls for n in live)
        # The floor comes first: the cap bounds how long an unsettled warm-up goes on after it.
        if not live or (floor_met and (capped or all(steady(n) for n in live))):
            break
        for name in live:
            try:
                result = timed(name)
            except Exception as error:
                on_failure(name, len(curves[name]), error)
                failed.add(name)
                continue
            curves[name].append(int(result.duration_ns))
        if all(len(curves[n]) <= 1 for n in names):
            # The first round compiles and first-touches: the floor and cap in time start after it.
            began = time.perf_counter_ns()
    elapsed = time.perf_counter_ns() - began
    return tuple(
        Warmup(
            arm=name,
            calls=len(curves[name]),
            elapsed_ns=elapsed,
            durations_ns=tuple(curves[name]),
            settled=name not in failed and steady(name),
        )
        for name in names
    )
