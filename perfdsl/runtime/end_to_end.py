"""End-to-end evidence: the application with the baseline and with the change.

Three measurements, each on the real application with the operation swapped
through `AppContext.op`:

* request time, in interleaved blocks like the kernels' (the same sampler);
* the operation's share of critical time, f, measured *inside* the
  application by timing each call of the operation (synchronised on a GPU),
  in a separate instrumented pass so the timers do not perturb the others;
* the open-loop load search (`runtime.load_search`): Poisson arrivals from a
  seed per repeat, the same schedule for both arms at a repeat, latency from the
  scheduled arrival, and the goodput found by doubling then bisecting
  (LoadGen's server scenario).

Raw records go to the bundle; `perfdsl evaluate` recomputes every summary.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from perfdsl.bundle.application import (
    ApplicationRecord,
    ArmShare,
    ModelLevelArm,
    ModelLevelRecord,
)
from perfdsl.bundle.load import LoadRecord, ProbeRequests
from perfdsl.bundle.plan import Plan, TimingPlan
from perfdsl.bundle.sampling import ApplicationTiming
from perfdsl.kernel import AppContext, Application, Variant
from perfdsl.runtime.estimate import application_key
from perfdsl.runtime.load_search import (
    LOAD_SEED,
    probe_record,
    probe_rule,
    probe_summary,
    search_load,
    service_time_s,
)
from perfdsl.runtime.machine_state import Pinning
from perfdsl.runtime.preparation import PreparedRequest, renew
from perfdsl.runtime.progress import Progress
from perfdsl.runtime.settings import SHARE_REQUESTS, request_settings, share_requests
from perfdsl.runtime.targets import Target
from perfdsl.runtime.timing import Arm, BlockHook, LookHook, Sampled, block_order, sample, seeded_rng

SHARE_ROUNDS = 10
"""The share pass alternates the arms this many times, so that drift falls on both arms' operation times."""

GENERATOR_SAID = {"on time": "on time", "jitter": "waking late", "behind": "behind its schedule"}
"""The generator's lag verdict (`stats.generator_lag`) as the progress line says it: "jitter" alone
read as a failure the report calls "generator lag", which only falling behind, or jitter that
decides the p99 check, is."""


@attrs.define
class OpTimer:
    """Times the operation's calls inside one arm's requests while `on`; passes them through otherwise.

    The request time, the share pass and the load test use the same requests,
    the timer switched on for the share pass only, each renewed before its blocks,
    rounds and probes (`runtime.preparation`). When the request time and the share
    pass each ran on one preparation of their own, the request time ratio moved
    away from the f and r of the other preparation by more than Amdahl's check
    allows; renewed, both passes sample the same spread of preparations.
    """

    target: Target
    on: bool = False
    spent: list[int] = attrs.Factory(list)

    def wrap(self, op: Callable[..., None]) -> Callable[..., None]:
        def timed(**arrays: Any) -> None:
            if not self.on:
                op(**arrays)
                return
            self.target.synchronize()
            start = time.perf_counter_ns()
            op(**arrays)
            self.target.synchronize()
            self.spent.append(time.perf_counter_ns() - start)

        return timed


def build_requests(
    application: Application,
    target: Target,
    variants: dict[str, Variant],
    shape: dict[str, int],
    dtype: Any,
    timers: dict[str, OpTimer] | None = None,
) -> dict[str, Callable[[], Any]]:
    """One prepared `request()` per arm, which `renew` prepares afresh (`runtime.preparation`);
    with `timers`, each arm's operation goes through its timer.

    Every preparation of an arm draws the same inputs (the same seeded generator), so a
    fresh one changes where the arrays are, not what the request computes."""
    requests: dict[str, PreparedRequest] = {}
    for arm, variant in variants.items():
        op = target.op(variant)
        if timers is not None:
            op = timers.setdefault(arm, OpTimer(target)).wrap(op)
        requests[arm] = PreparedRequest(functools.partial(_prepare, application, target, op, shape, dtype))
    return requests


def _prepare(
    application: Application, target: Target, op: Callable[..., None], shape: dict[str, int], dtype: Any
) -> Callable[[], Any]:
    context = AppContext(target.name, op, shape, seeded_rng(0, shape, 7), np.dtype(dtype))
    return application.prepare(context)


def time_requests(
    target: Target,
    requests: dict[str, Callable[[], Any]],
    timing: TimingPlan,
    request_s: float,
    on_block: BlockHook | None = None,
    on_look: LookHook | None = None,
    edges: tuple[float, ...] = (),
) -> Sampled:
    """Request time in interleaved blocks, every sample kept; `on_block` and `on_look` as the
    sampler's (progress).

    `request_s` is the slowest arm's time per request, which sizes the blocks (`request_repeats`).
    Under a sequential rule the blocks stop as the kernels' do, when the rule decides (and no
    prediction bound in `edges` is straddled) or at its cap.
    """
    arms = [Arm(name, (call,), renew=functools.partial(renew, call)) for name, call in requests.items()]
    settings = request_settings(timing, request_s, edges)
    return sample(target, arms, settings, on_block=on_block, on_look=on_look)


def measure_share(
    requests: dict[str, Callable[[], Any]], timers: dict[str, OpTimer], count: int = SHARE_REQUESTS
) -> dict[str, ArmShare]:
    """f's raw data: each request's total time and the time its operation calls took.

    The requests are warm (the request time ran them); `timers` are theirs
    (`build_requests`), switched on for this pass only. The arms take turns,
    `SHARE_ROUNDS` of them (fewer when there are fewer requests), so that r, the
    ratio of their operation times, does not compare two moments of a machine
    whose load drifts; each request's round is recorded, the unit the
    statistics resample. Each round runs on a fresh preparation of its arm
    (`runtime.preparation`), so that the rounds resampled hold the spread of
    where the arrays land, not one placement per arm.
    """
    totals: dict[str, list[int]] = {arm: [] for arm in requests}
    ops: dict[str, list[int]] = {arm: [] for arm in requests}
    rounds_of: dict[str, list[int]] = {arm: [] for arm in requests}
    rounds = min(SHARE_ROUNDS, count)
    for timer in timers.values():
        timer.on = True
    try:
        for turn in range(rounds):
            for arm, request in requests.items():
                timers[arm].on = False  # a fresh preparation's warm-up calls are not the pass's
                renew(request)
                timers[arm].on = True
                spent = timers[arm].spent
                for _ in range(count * (turn + 1) // rounds - count * turn // rounds):
                    before = len(spent)
                    start = time.perf_counter_ns()
                    request()
                    totals[arm].append(time.perf_counter_ns() - start)
                    ops[arm].append(sum(spent[before:]))
                    rounds_of[arm].append(turn)
    finally:
        for timer in timers.values():
            timer.on = False
    return {arm: ArmShare(tuple(totals[arm]), tuple(ops[arm]), tuple(rounds_of[arm])) for arm in requests}


def model_level(comparisons: dict[str, ModelLevelArm], tolerances: dict[str, float]) -> ModelLevelRecord:
    """Judge the application's outputs against its float64 run, relative to the baseline.

    The application's own arithmetic in the workload's dtype differs from its
    float64 run whatever the operation does (a float32 MLP around an exact
    transpose is still float32), so an absolute bound would fail every study
    with a tight kernel tolerance. The question at model level is whether the
    change makes the application's output worse: the change's error may exceed
    the baseline's by at most the study's tolerance, and no arm may raise,
    leave outputs unwritten or produce NaN/Inf.
    """
    broken = {
        arm: c.message or c.output.problem
        for arm, c in comparisons.items()
        if c.output is None or c.output.problem
    }
    excess: dict[str, float | None] = {}
    baseline, change = comparisons.get("baseline"), comparisons.get("change")
    if not broken and baseline is not None and change is not None:
        for metric in tolerances:
            base, new = getattr(baseline.output, metric), getattr(change.output, metric)
            excess[metric] = None if base is None or new is None else new - base
    failed = [
        f"`{metric}` is undefined for an arm, so the change cannot be compared"
        if value is None
        else f"the change adds {value:.3g} to `{metric}` (tolerance {tolerances[metric]:g})"
        for metric, value in excess.items()
        if value is None or value > tolerances[metric]
    ]
    arms = {
        arm: attrs.evolve(
            c,
            passed=arm not in broken and (arm != "change" or not failed),
            message=broken.get(arm) or ("; ".join(failed) if arm == "change" else ""),
        )
        for arm, c in comparisons.items()
    }
    return ModelLevelRecord(
        rule="change error <= baseline error + tolerance, against the float64 run",
        passed=not broken and not failed,
        excess=excess,
        arms=arms,
    )


def run_application(
    plan: Plan,
    application: Application,
    resolved: Any,
    target: Target,
    progress: Progress,
    correctness_passed: bool,
) -> tuple[ApplicationRecord, Sampled | None, LoadInput | None]:
    """The application's evidence before its load test, its request samples (None: not timed)
    and the prepared requests the load test then serves (None: not timed, and the record
    says why in its `load_missing` too).

    The samples come back as the kernels' samples do, the bundle's records for the
    caller to write at the paths the record names. The load test is `run_load`, asked
    apart, so that measured code ending its worker there leaves this evidence whole.
    """
    from perfdsl.runtime.correctness import compare_application

    app = plan.application
    assert app is not None
    variants = resolved.variants
    progress(f"application `{app.name}`: model-level correctness")
    comparisons = {
        arm: compare_application(
            application,
            resolved.reference,
            variant,
            target,
            app.shape,
            seed=0,
            dtype=plan.dtype,
            tolerances=plan.correctness.tolerances,
        )
        for arm, variant in variants.items()
    }
    entry = ApplicationRecord(
        name=app.name,
        entry=app.entry,
        shape=dict(app.shape),
        uses=tuple(app.uses),
        model_level=model_level(comparisons, plan.correctness.tolerances),
    )
    reason = None
    if not (correctness_passed and entry.model_level is not None and entry.model_level.passed):
        reason = "not timed: a correctness check failed"
    elif not target.timings_valid:
        # The simulator takes seconds per request, and its times would not be evidence anyway.
        reason = f"not timed on {target.name}: its timings are not evidence"
    if reason is not None:
        missing = attrs.evolve(entry, samples_missing=reason, share_missing=reason, load_missing=reason)
        return missing, None, None

    progress(f"application `{app.name}`: request time")
    timers: dict[str, OpTimer] = {}
    requests = build_requests(application, target, variants, app.shape, plan.dtype, timers)
    key = application_key(plan)
    served = LoadInput(requests, {arm: service_time_s(request) for arm, request in requests.items()})
    slowest = served.slowest_s
    record = time_requests(
        target,
        requests,
        plan.timing,
        slowest,
        on_block=progress.blocks(key, block_order(list(requests), plan.timing.kernel_blocks)),
        on_look=lambda current, needed: progress.look(key, current, needed),
        edges=app.stop_edges,
    )
    progress.finish_step(key, record.timing.stop)
    timing = ApplicationTiming(record.timing.blocks, record.timing.failures, record.timing.stop)

    progress(f"application `{app.name}`: the operation's share of time")
    shares = measure_share(requests, timers, share_requests(slowest, plan.quick))
    entry = attrs.evolve(entry, samples="samples/application.csv", timing=timing, share=shares)
    if entry.operation_never_called:
        progress(f"warning: {entry.operation_never_called}")
    return attrs.evolve(entry, preparations=_preparations(requests)), record, served


@attrs.frozen
class LoadInput:
    """The application's prepared requests, as its load test takes them."""

    requests: dict[str, PreparedRequest]
    alone_s: dict[str, float]
    """Each arm's median request time, one at a time."""

    @property
    def slowest_s(self) -> float:
        """The slower arm's median request time: no rate can meet an SLO below it."""
        return max(self.alone_s.values())


@attrs.frozen
class LoadOutcome:
    """What the load test adds to the application's record: the test or why there is none, the
    probes' per-request records, and each arm's preparations counted once it ended."""

    load: LoadRecord | None
    missing: str | None
    probes: tuple[ProbeRequests, ...]
    preparations: dict[str, int]


def run_load(
    plan: Plan,
    served: LoadInput,
    progress: Progress,
    pinning: Pinning | None = None,
    on_served: Callable[[], None] | None = None,
) -> LoadOutcome:
    """The open-loop load test of the prepared requests (`run_application`'s), as the plan
    declares it. `pinning` puts the load generator's thread on its own core
    (`runtime.machine_state`); `on_served` hears of every request served (the worker's progress).
    """
    requests, slowest = served.requests, served.slowest_s
    if plan.load is None:
        return LoadOutcome(None, "the study declares no load", (), _preparations(requests))
    if plan.load.slo_seconds is not None and slowest > plan.load.slo_seconds:
        missing = _unmeetable(served, plan.load.slo_seconds)
        progress(f"load: not run: {missing}")
        return LoadOutcome(None, missing, (), _preparations(requests))
    progress(probe_summary(plan.load, plan.quick))
    probes, stopped, searches = search_load(
        requests,
        plan.load,
        plan.quick,
        on_probe=lambda arm, rate, lag, stop: progress(
            f"load: {arm} at {rate:.1f} rps, {stop}, generator {GENERATOR_SAID[lag.verdict]} "
            f"(issue lag p99 {lag.p99 * 1e3:.2f} ms, backlog growth {lag.backlog_growth * 1e3:.2f} ms)"
        ),
        pinning=pinning,
        on_served=on_served,
    )
    from perfdsl.stats.load import CONFIRMATION_RULE

    entries, probe_requests = zip(*(probe_record(p) for p in probes), strict=True) if probes else ((), ())
    load = LoadRecord(
        arrivals=plan.load.arrivals,
        seed=LOAD_SEED,
        slo_seconds=plan.load.slo_seconds,
        percentile=plan.load.slo_percentile,
        probes=tuple(entries),
        stopped=tuple(stopped),
        rule=CONFIRMATION_RULE,
        searches=tuple(searches),
        probe_rule=probe_rule(plan.load),
    )
    return LoadOutcome(load, None, tuple(probe_requests), _preparations(requests))


def _unmeetable(served: LoadInput, slo_s: float) -> str:
    """Why the load test did not run: which arm's one request alone is over the SLO. "No rate can
    meet the SLO" named the baseline's 62.1 ms where the change's request took 4.13 ms."""
    alone = served.alone_s
    over = [arm for arm, s in alone.items() if s > slo_s]
    said = ", ".join(f"the {arm}'s {s * 1e3:.3g} ms" for arm, s in alone.items())
    who = " and the ".join(over)
    return (
        f"no rate can meet the SLO of {slo_s * 1e3:.3g} ms for the {who}: one request alone takes "
        f"{said}; a load test compares both arms, so none ran"
    )


def _preparations(requests: dict[str, PreparedRequest]) -> dict[str, int]:
    return {arm: request.preparations for arm, request in requests.items()}
