"""How long a run will take, said before it starts, and where it is while it runs.

A full-size study can measure for half an hour; without a word it looks hung.
So before measuring, the run times a few calls of every arm at every shape
(and a few application requests) and multiplies them by what the plan asks
for: each arm's warm-up and `blocks x repeats` timed calls, the application's
request blocks and share requests, and at most the load search's time budget.
An estimate over `LONG_RUN_S` is a warning with what shortens it.

Measured code never runs in the `perfdsl run` process: each worker
(perfdsl/runtime/worker.py) makes the calibration calls of its own operation
(`calibrate_operation`) or of the application (`calibrate_application`) and
returns a `Calibration`; the parent combines them (`estimate_calibrated`). The
workers then keep their compiled code for the measurement itself.

While measuring, the timing sampler reports each block's start and end (its
`on_block` hook); in a worker, that hook relays the event to the parent over
the worker's pipe, and the parent calls the hook `RunProgress.blocks` made for
the step. The display shows which operation, shape and arm, the blocks
done and the time left, the left time re-estimated from the blocks measured so
far. On a terminal it rewrites one line of stderr; elsewhere (a CI log) it
prints plain lines, at most one per `interval_s` and one at every new step;
with `--quiet` nothing at all.
"""

from __future__ import annotations

import gc
import math
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol, TextIO

import attrs

from perfdsl.bundle.plan import Plan

LONG_RUN_S = 600.0
"""A run estimated longer than this (10 minutes) is announced as a warning."""

CALIBRATION_CALLS = 3
"""Timed calls per arm and shape (after one untimed call that compiles and warms)."""

REQUEST_WARMUP_MIN = 2
"""The application's request blocks: at least this many requests a block, this many warm-up calls."""


@attrs.frozen
class StepEstimate:
    """One measuring step of the plan (a shape of an operation, or the application) and its seconds."""

    key: str
    seconds: float


@attrs.frozen
class RunEstimate:
    """The measuring steps in run order, and what the estimate leaves out."""

    steps: tuple[StepEstimate, ...]
    load_budget_s: float
    """The load search's time cap (both arms): it stops at a goodput, so this is a bound, not an estimate."""

    @property
    def seconds(self) -> float:
        """The timing steps' estimate; the load search, bounded only, is said apart."""
        return sum(s.seconds for s in self.steps)


def timing_seconds(
    call_s: Mapping[str, float],
    warmup_calls: int,
    warmup_ms: float,
    blocks: int,
    repeats: int,
    block_s: float,
) -> float:
    """One sampler call: every arm's warm-up (calls or time, whichever is longer), then its blocks.

    `block_s` is what a block costs besides its calls: the sampler collects
    garbage before each one, which with numba loaded takes about 0.1 s, more
    than a whole block of small kernels.
    """
    warm = max(warmup_ms / 1e3, warmup_calls * sum(call_s.values()))
    return warm + sum(blocks * (repeats * t + block_s) for t in call_s.values())


def estimate_run(
    plan: Plan,
    kernel_call_s: Mapping[str, Mapping[str, float]],
    request_s: Mapping[str, float] | None,
    load_budget_s: float,
    block_s: float,
) -> RunEstimate:
    """The run's length from the plan and calibrated call times.

    `kernel_call_s` maps a step key (`operation shape`) to each arm's seconds
    per call; `request_s` each application arm's seconds per request (None
    without an application); `block_s` each block's own cost (see
    `timing_seconds`). The warm-up matches the sampler's settings in
    `runtime.execute` and `runtime.end_to_end` (50 or 200 ms for kernels,
    100 ms for requests).
    """
    t = plan.timing
    steps = [
        StepEstimate(
            key,
            timing_seconds(
                kernel_call_s[key], t.warmup, 50.0 if plan.quick else 200.0, t.blocks, t.repeats, block_s
            ),
        )
        for key in step_keys(plan)
        if key in kernel_call_s
    ]
    load = 0.0
    if request_s:
        from perfdsl.runtime.end_to_end import request_repeats, share_requests

        slowest = max(request_s.values())
        repeats = request_repeats(t.repeats, slowest)
        requests = timing_seconds(
            request_s, max(REQUEST_WARMUP_MIN, t.warmup // 2), 100.0, t.blocks, repeats, block_s
        )
        share = share_requests(slowest, plan.quick) * sum(request_s.values())
        steps.append(StepEstimate(application_key(plan), requests + share))
        load = load_budget_s * len(request_s) if plan.load is not None and plan.load.slo_seconds else 0.0
    return RunEstimate(tuple(steps), load)


def step_keys(plan: Plan) -> list[str]:
    """The kernel timing steps, in the order the run takes them."""
    return [step_key(op.name, shape.label) for op in plan.operations for shape in op.shapes]


def step_key(operation: str, shape: str) -> str:
    return f"{operation} {shape}"


def application_key(plan: Plan) -> str:
    return f"application `{plan.application.name}`" if plan.application else "application"


def calibrate_arms(target: Any, arms: Sequence[Any], calls: int = CALIBRATION_CALLS) -> dict[str, float]:
    """Seconds per call of each prepared arm: one untimed call (compilation, first touch), then the median."""
    out = {}
    for arm in arms:
        call = arm.calls[0]
        try:
            target.time(call)
            out[arm.name] = sorted(target.time(call).duration_ns for _ in range(calls))[calls // 2] / 1e9
        except Exception:  # a failing variant is the correctness check's to report
            continue
    return out


def calibrate_requests(
    requests: Mapping[str, Callable[[], Any]], calls: int = CALIBRATION_CALLS
) -> dict[str, float]:
    """Seconds per application request of each arm (median of `calls`, after one untimed)."""
    out = {}
    for arm, request in requests.items():
        times = []
        try:
            request()
            for _ in range(calls):
                start = time.perf_counter_ns()
                request()
                times.append(time.perf_counter_ns() - start)
        except Exception:  # a failing application is the model-level check's to report
            continue
        out[arm] = sorted(times)[calls // 2] / 1e9
    return out


def duration(seconds: float) -> str:
    """`45 s`, `12 min`, `1 h 05 min`: as precise as an estimate deserves."""
    if seconds < 90:
        return f"{max(seconds, 0):.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    hours, minutes = divmod(round(seconds / 60), 60)
    return f"{hours} h {minutes:02d} min"


class Progress(Protocol):
    """What a run stage reports to: `RunProgress` in the parent, a relay to it in a worker."""

    def __call__(self, message: str) -> None: ...

    def blocks(self, key: str, order: Sequence[str]) -> Callable[[], dict[str, Any]]: ...

    def finish_step(self, key: str) -> None: ...


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

    def blocks(self, key: str, order: Sequence[str]) -> Callable[[], dict[str, Any]]:
        """A sampler `on_block` hook that reports the blocks of step `key` (`order`: each block's arm).

        The sampler calls it at the start and at the end of every block; it
        returns nothing to store with the block. The time left is this step's
        blocks still to run at the pace of those done, plus the steps to come
        at their estimate, corrected by how the finished steps compared with theirs.
        """
        started = self._clock()
        calls = 0
        total = len(order)
        estimated = self._pending.get(key)

        def hook() -> dict[str, Any]:
            nonlocal calls
            index, ending = divmod(calls, 2)
            calls += 1
            if index >= total:
                return {}
            done = index + ending
            elapsed = self._clock() - started
            if done == total and estimated:
                self._scale = elapsed / estimated
            if done == total:
                self._pending.pop(key, None)
            here = elapsed / done * (total - done) if done else (estimated or 0.0) * self._scale
            later = sum(s for k, s in self._pending.items() if k != key) * self._scale
            self._line(
                f"  {key}: block {index + 1}/{total} ({order[index]}), {done} done, "
                f"about {duration(here + later)} left",
                step=calls == 1 or done == total,
            )
            return {}

        return hook

    def finish_step(self, key: str) -> None:
        """A step that was not timed in blocks (skipped, failed) no longer counts towards the time left."""
        self._pending.pop(key, None)

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


@attrs.frozen
class Calibration:
    """One worker's calibration: what its calls took, for the parent's estimate."""

    kernels: dict[str, dict[str, float]]
    """Step key (`operation shape`) to each arm's seconds per call."""
    requests: dict[str, float]
    """Each application arm's seconds per request (empty: no application, or not timed)."""
    block_s: float
    """A block's own cost in this worker (see `timing_seconds`)."""


def calibrate_operation(plan: Plan, operation: Any, target: Any, resolved: Any, roof: Any) -> Calibration:
    """Time a few calls of every arm of `operation` at every shape (in its worker).

    `resolved` is the operation's `execute.Resolved`, `roof` maps each roof
    arm (read, write, copy) to its (reference, variant). Inputs are prepared as
    the timing prepares them, with one buffer set, and dropped before measuring
    starts. A variant that raises here is left out of the estimate, not reported: it has not been
    checked yet, and the correctness check reports it with its shape and seed.
    """
    from perfdsl.runtime.timing import prepare_arms

    kernels: dict[str, dict[str, float]] = {}
    variants = list(resolved.variants.values())
    for shape in operation.shapes:
        try:
            arms = prepare_arms(target, resolved.reference, variants, shape.sizes, plan.dtype, 1)
            for problem, kernel in roof.values():
                arms += prepare_arms(target, problem, [kernel], shape.sizes, plan.dtype, 1)
        except Exception:  # the correctness check reports it, at its shape and seed
            continue
        kernels[step_key(operation.name, shape.label)] = calibrate_arms(target, arms)
    return Calibration(kernels, {}, _block_seconds())


def calibrate_application(plan: Plan, application: Any, target: Any, resolved: Any) -> Calibration:
    """Time a few requests of each application arm (in the application's worker)."""
    from perfdsl.runtime.end_to_end import build_requests

    requests: dict[str, float] = {}
    if plan.application is not None and target.timings_valid:
        try:
            prepared = build_requests(
                application, target, resolved.variants, plan.application.shape, plan.dtype
            )
        except Exception:  # the model-level check reports it
            prepared = {}
        requests = calibrate_requests(prepared)
    return Calibration({}, requests, _block_seconds())


def _block_seconds() -> float:
    """What the sampler's garbage collection before each block costs in this process."""
    started = time.perf_counter()
    gc.collect()
    return time.perf_counter() - started


def estimate_calibrated(plan: Plan, calibrations: Sequence[Calibration]) -> RunEstimate:
    """The run's length from every worker's calibration (a worker that died gave none)."""
    from perfdsl.runtime.load_search import load_budget_s

    kernels = {key: arms for c in calibrations for key, arms in c.kernels.items()}
    requests = {arm: s for c in calibrations for arm, s in c.requests.items()} or None
    block_s = max((c.block_s for c in calibrations), default=0.0)
    budget = 0.0 if plan.load is None else load_budget_s(plan.load, plan.quick)
    return estimate_run(plan, kernels, requests, budget, block_s)
