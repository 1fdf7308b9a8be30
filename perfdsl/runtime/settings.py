"""The sampler's settings, one owner for each knob: the kernels', the requests', the share pass's.

The sampler runs with these settings and the run's estimate
(perfdsl/runtime/estimate.py) multiplies them, so each is spelled here once: a
warm-up changed in one place and not in the other would make the estimate
wrong without a test noticing.
"""

from __future__ import annotations

import math

from perfdsl.bundle.arms import ARMS
from perfdsl.bundle.plan import OperationPlan, Plan, TimingPlan
from perfdsl.bundle.sampling import CAP_CALLS, CAP_MS, TimingSettings
from perfdsl.runtime.warmup import QUICK_CAP

SHARE_REQUESTS = 20
"""The fewest requests per arm in the share pass."""
SHARE_S = 0.5
"""The share pass's length per arm, at the least: f is a ratio of sums, and on a shared machine
one preemption of a few milliseconds among 20 requests of half a millisecond halved it."""
REQUEST_BLOCK_S = 0.01
"""The shortest block of requests the request timing takes: a few of the scheduler's slices."""
REQUEST_WARMUP_MIN = 2
"""The fewest warm-up requests per arm; otherwise half the kernels' warm-up calls."""
REQUEST_WARMUP_MS = 100.0
"""The application's warm-up floor in time, beside REQUEST_WARMUP_MIN's in calls."""


def kernel_settings(plan: Plan, operation: OperationPlan | None = None) -> TimingSettings:
    """The sampler's settings for the plan's kernels: its warm-up floor, the settle rule's cap, its blocks
    (the fixed count, or the sequential rule's cap and the rule, held open for `operation`'s
    prediction bounds)."""
    cap = QUICK_CAP if plan.quick else {}
    return TimingSettings(
        warmup_calls=plan.timing.warmup,
        warmup_ms=50.0 if plan.quick else 200.0,
        warmup_cap_calls=cap.get("cap_calls", CAP_CALLS),
        warmup_cap_ms=cap.get("cap_ms", CAP_MS),
        repeats=plan.timing.repeats,
        blocks=plan.timing.kernel_blocks,
        stopping=plan.timing.stopping_for(operation.stop_edges if operation else ()),
        compared=ARMS,
    )


def request_settings(timing: TimingPlan, request_s: float, edges: tuple[float, ...] = ()) -> TimingSettings:
    """The sampler's settings for the application's requests; `request_s` (the slowest arm's
    seconds per request) sizes the blocks (`request_repeats`), and the sequential rule stays open
    while the interval straddles one of `edges` (`ApplicationPlan.stop_edges`)."""
    return TimingSettings(
        warmup_calls=max(REQUEST_WARMUP_MIN, timing.warmup // 2),
        warmup_ms=REQUEST_WARMUP_MS,
        repeats=request_repeats(timing.repeats, request_s),
        blocks=timing.kernel_blocks,
        stopping=timing.stopping_for(edges),
    )


def request_repeats(timing_repeats: int, request_s: float) -> int:
    """Requests per timed block: a fifth of the kernels' repeats, at least 3, and enough to fill
    `REQUEST_BLOCK_S`.

    Each block's first request refills the caches the other arm displaced (640 against
    400 us for a half-millisecond request), and a preemption on a busy machine stretches
    the request it lands in by milliseconds. With three requests a block, one of each
    made the block's median a cold or a stalled request; a block of ten milliseconds
    keeps its median on the warm, unstalled requests. Requests of several milliseconds
    keep the fifth of the kernels' repeats they had.
    """
    return max(3, timing_repeats // 5, math.ceil(REQUEST_BLOCK_S / max(request_s, 1e-6)))


def share_requests(request_s: float, quick: bool) -> int:
    """Requests per arm in the share pass: `SHARE_REQUESTS`, or `SHARE_S` worth if more (quick: 5)."""
    if quick:
        return 5
    return max(SHARE_REQUESTS, math.ceil(SHARE_S / max(request_s, 1e-6)))
