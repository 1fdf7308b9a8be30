"""How long a run will take: calibrated call times multiplied by what the plan asks for.

A full-size study can measure for half an hour; without a word it looks hung.
So before measuring, each worker times a few calls of every arm at every shape
(and a few application requests: perfdsl/runtime/calibration.py) and returns a
`Calibration`; the parent combines them (`estimate_calibrated`) with the
sampler's own settings (perfdsl/runtime/settings.py): each arm's warm-up and
`blocks x repeats` timed calls, the application's request blocks and share
requests, and at most the load search's time budget. The display
(perfdsl/runtime/progress.py) announces the estimate and corrects it as the
blocks are measured.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import attrs

from perfdsl.bundle.plan import Plan
from perfdsl.bundle.sampling import TimingSettings
from perfdsl.runtime.settings import kernel_settings, request_settings, share_requests


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


@attrs.frozen
class Calibration:
    """One worker's calibration: what its calls took, for the parent's estimate."""

    kernels: dict[str, dict[str, float]]
    """Step key (`operation shape`) to each arm's seconds per call."""
    requests: dict[str, float]
    """Each application arm's seconds per request (empty: no application, or not timed)."""
    block_s: float
    """A block's own cost in this worker (see `timing_seconds`)."""
    raised: dict[str, dict[str, str]] = attrs.field(factory=dict)
    """Step key (or `application`) to each arm whose calibration call raised, with why: measured
    code that raised once is evidence against it, whatever its later calls did."""


def timing_seconds(call_s: Mapping[str, float], settings: TimingSettings, block_s: float) -> float:
    """One sampler call: every arm's warm-up (calls or time, whichever is longer), then its blocks.

    `block_s` is what a block costs besides its calls: the sampler collects
    garbage before each one (with the run's long-lived objects frozen out of
    it, microseconds; unfrozen, with numba loaded, 0.1-0.4 s, more than a
    whole block of small kernels).
    """
    warm = max(settings.warmup_ms / 1e3, settings.warmup_calls * sum(call_s.values()))
    return warm + sum(settings.blocks * (settings.repeats * t + block_s) for t in call_s.values())


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
    `timing_seconds`). The settings are the sampler's own (`runtime.settings`).
    """
    kernels = kernel_settings(plan)
    steps = [
        StepEstimate(key, timing_seconds(kernel_call_s[key], kernels, block_s))
        for key in step_keys(plan)
        if key in kernel_call_s
    ]
    load = 0.0
    if request_s:
        slowest = max(request_s.values())
        requests = timing_seconds(request_s, request_settings(plan.timing, slowest), block_s)
        share = share_requests(slowest, plan.quick) * sum(request_s.values())
        steps.append(StepEstimate(application_key(plan), requests + share))
        load = load_budget_s * len(request_s) if plan.load is not None and plan.load.slo_seconds else 0.0
    return RunEstimate(tuple(steps), load)


def estimate_calibrated(plan: Plan, calibrations: Sequence[Calibration]) -> RunEstimate:
    """The run's length from every worker's calibration (a worker that died gave none)."""
    from perfdsl.runtime.load_search import load_budget_s

    kernels = {key: arms for c in calibrations for key, arms in c.kernels.items()}
    requests = {arm: s for c in calibrations for arm, s in c.requests.items()} or None
    block_s = max((c.block_s for c in calibrations), default=0.0)
    budget = 0.0 if plan.load is None else load_budget_s(plan.load, plan.quick)
    return estimate_run(plan, kernels, requests, budget, block_s)


def step_keys(plan: Plan) -> list[str]:
    """The kernel timing steps, in the order the run takes them."""
    return [step_key(op.name, shape.label) for op in plan.operations for shape in op.shapes]


def step_key(operation: str, shape: str) -> str:
    return f"{operation} {shape}"


def application_key(plan: Plan) -> str:
    return f"application `{plan.application.name}`" if plan.application else "application"
