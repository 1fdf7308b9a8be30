"""The open-loop load test of an application: the declared sweep, then each arm's goodput search.

Poisson arrivals from a seed per repeat (`schedule_seed`), the same schedule
for baseline and change at a repeat, latency from the scheduled arrival
(`runtime.load_generator`); the search and its confirmation rule are
`stats.load.goodput_search`. Each probe is decided sequentially
(`stats.sequential.proportion`): it stops at the first window of requests
whose evidence shows the percentile within the SLO or over it, so a rate far
from the goodput costs a few windows and leaves the budget to the rates
that bracket it. The arms take turns, so that a shared machine's
drift falls on both, and the whole test has a time budget derived from the
study's own sweep.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np

from perfdsl.bundle.load import (
    GeneratorLagRecord,
    GoodputSearchRecord,
    LoadProbeRecord,
    ProbeRequests,
)
from perfdsl.bundle.plan import LoadPlan
from perfdsl.bundle.sampling import LoadReading
from perfdsl.bundle.stopping import FIXED, ProbeRule
from perfdsl.probe_size import PROBE_CONFIDENCE, clean_count, probe_cap
from perfdsl.runtime.contention import read_load
from perfdsl.runtime.load_generator import LoadRun, run_open_loop
from perfdsl.runtime.machine_state import Pinning
from perfdsl.runtime.preparation import renew

LOAD_SEED = 20261129
"""The first repeat's schedule seed; repeat k at a rate uses LOAD_SEED + k."""


def schedule_seed(repeat: int) -> int:
    """The arrival schedule of the `repeat`-th probe of an arm at a rate (0 first).

    A confirmation that replays the same arrivals resamples only the machine's
    noise, never the arrival process: a bundle's change arm passed at 2250 rps
    (p99 9.5 ms) and failed (48.8 ms) on one schedule. Each repeat draws a fresh
    schedule; both arms' k-th probes at a rate share it, which keeps them paired.
    """
    return LOAD_SEED + repeat


QUICK_LOAD = {"rel_tol": 0.25, "confirmations": 0, "max_probes": 6}
FULL_LOAD = {"rel_tol": 0.05, "confirmations": 1, "max_probes": 16}
QUICK_LOAD_BUDGET_S = 60.0
"""Wall time a quick run's load test may take per arm, and the least a full run's may."""


def probe_count(load: LoadPlan) -> tuple[int, int]:
    """The most requests a probe measures (its cap, `probe_size.probe_cap`) and the
    warm-up requests it discards before them."""
    warmup = max(10, load.requests // 20)
    return probe_cap(load.requests, load.probe, load.slo_percentile), warmup


def probe_summary(load: LoadPlan, quick: bool = False) -> str:
    """The run's line on how long each probe may be, said before the first: the study's `requests`
    is the fixed probe's count, and the cap can be well above it (or raised to the fewest
    requests a probe can pass on, which a study of `requests 100` would otherwise not learn)."""
    count, warmup = probe_count(load)
    rule = probe_rule(load)
    how = (
        "one test after them"
        if rule is None
        else f"decided sequentially, a look every {rule.window} requests"
    )
    raised = count > load.requests and count == clean_count(load.probe, load.slo_percentile)
    stated = f"a quick run's {load.requests} requests" if quick else f"`requests {load.requests}`"
    why = f"{stated} raised to the fewest a probe with no miss can pass on" if raised else f"from {stated}"
    return f"load: each probe measures at most {count} requests after {warmup} warm-up ones ({why}), {how}"


def probe_rule(load: LoadPlan) -> ProbeRule | None:
    """The sequential rule each probe of this load test is decided by, capped at `probe_count`;
    None for `probe fixed` (one test over the stated count: `stats.load.dependent_p99_check`)."""
    from perfdsl.stats.sequential.proportion import rule_for

    if load.probe == FIXED:
        return None
    return rule_for(load.slo_percentile, probe_count(load)[0], PROBE_CONFIDENCE)


def load_budget_s(load: LoadPlan, quick: bool) -> float:
    """Wall time the load test may take per arm: a full search's probes at the lowest declared rate.

    The sweep says where the study expects its capacities; a search that steps far
    below its lowest rate is measuring a machine busy with other work, and each
    halving doubles a probe's length, so it is cut off there, its goodput marked
    unconfirmed with the reason. At least `QUICK_LOAD_BUDGET_S`; a quick run gets that.
    """
    if quick or not load.rates:
        return QUICK_LOAD_BUDGET_S
    count, warmup = probe_count(load)
    return max(QUICK_LOAD_BUDGET_S, FULL_LOAD["max_probes"] * (count + warmup) / min(load.rates))


@attrs.frozen
class LoadProbe:
    """One probe the load test ran: which arm, at what rate, why, and its raw records."""

    arm: str
    index: int
    rate: float
    phase: str
    run: LoadRun
    generator: GeneratorLagRecord
    """The generator's own lag over this probe, as judged when it ran."""
    decision: str | None
    """The sequential rule's decision as the run made it (`RateResult.decision`)."""
    decided_at: int | None
    machine_start: LoadReading | None = None
    """The machine's load when the probe started (`runtime.contention.read_load`), and ended:
    a busy machine spoils a goodput as surely as a kernel block (None: not Linux)."""
    machine_end: LoadReading | None = None


def service_time_s(request: Callable[[], Any], calls: int = 5) -> float:
    """The median time of one request, to start the load search near capacity (inf when every
    call raised).

    A request that raises is a failed request, which the load test counts as a miss: it ended
    the whole load test here, its worker recorded as dead, when an application failed one
    request in 37.
    """
    times = []
    for call in range(calls + 1):  # the first warms up, untimed
        start = time.perf_counter_ns()
        try:
            request()
        except Exception:  # a failed request: the probes count it, this estimate leaves it out
            continue
        if call:
            times.append(time.perf_counter_ns() - start)
    return float(np.median(times)) / 1e9 if times else math.inf


def search_load(
    requests: dict[str, Callable[[], Any]],
    load: LoadPlan,
    quick: bool,
    on_probe: Callable[[str, float, GeneratorLagRecord, str], None] | None = None,
    pinning: Pinning | None = None,
    on_served: Callable[[], None] | None = None,
) -> tuple[list[LoadProbe], list[str], list[GoodputSearchRecord]]:
    """The declared sweep (full runs only), then the goodput searches, the arms taking turns.

    The sweep runs each rate for every arm before the next rate, and the searches
    run one probe of each arm in turn (`stats.load.interleave`), the arm that went
    second in the sweep going first, so that the machine's drift falls on both
    arms. Each arm's search judges a rate on its sweep's runs too, as the
    evaluation does. Every probe keeps its raw per-request records. Returns the
    probes, why an arm stopped when the load test's time budget ran out, and how
    each arm's search ended. `on_probe(arm, rate, lag, stop)` hears of each probe
    as it ends, `stop` saying where its rule stopped ("fail at 100 of 330 requests").
    Each probe runs on a fresh preparation of its arm's request (`runtime.preparation`);
    `on_served` hears of every request served (`runtime.load_generator.run_open_loop`).
    """
    from perfdsl.bundle.evaluation.load import RateResult
    from perfdsl.stats.load import goodput_search, interleave, sequential_stop, summarize_rate

    if load.slo_seconds is None:
        return [], [], []
    count, warmup = probe_count(load)
    rule = probe_rule(load)
    stop = sequential_stop(load.slo_seconds, rule) if rule is not None else None
    arms = list(requests)
    # The arms take turns, so the budget is the load test's: each arm's share, together.
    budget = load_budget_s(load, quick) * len(arms)
    deadline = time.monotonic() + budget
    probes: list[LoadProbe] = []
    stopped: list[str] = []
    swept: dict[str, list[tuple[float, RateResult]]] = {arm: [] for arm in arms}

    def run_rate(arm: str, rate: float, phase: str) -> RateResult | None:
        duration = 1.5 * (count + warmup) / rate + 2.0
        if time.monotonic() + duration > deadline:
            stopped.append(
                f"`{arm}` load search stopped: a probe at {rate:.3g} rps would take "
                f"{duration:.0f} s, past the load test's {budget:.0f} s budget"
            )
            return None
        repeat = sum(1 for p in probes if p.arm == arm and p.rate == rate)
        seed = schedule_seed(repeat)
        renew(requests[arm])
        before = read_load()
        run = run_open_loop(
            requests[arm],
            rate,
            count=count,
            warmup=warmup,
            seed=seed,
            duration_s=duration,
            generator_cores=pinning.generator if pinning else (),
            server_cores=pinning.measuring if pinning else (),
            window=rule.window if rule is not None else 0,
            stop=stop,
            on_served=on_served,
        )
        after = read_load()
        scheduled, issued, _, completed = run.seconds()
        result = summarize_rate(
            rate, scheduled, issued, completed, load.slo_seconds, run.ok, rule, load.slo_percentile
        )
        lag = GeneratorLagRecord(**attrs.asdict(result.generator))
        probes.append(
            LoadProbe(
                arm, len(probes), rate, phase, run, lag, result.decision, result.decided_at, before, after
            )
        )
        if on_probe:
            # Where the rule stopped, for the progress line: "fail at 100 of 330 requests".
            said = "fixed probe" if result.decision is None else f"{result.decision} at {result.decided_at}"
            on_probe(arm, rate, lag, f"{said} of {result.n} requests")
        return result

    if not quick:
        sweeping = set(arms)
        for rate in load.rates:
            for arm in [a for a in arms if a in sweeping]:
                result = run_rate(arm, rate, "sweep")
                if result is None:
                    sweeping.discard(arm)
                else:
                    swept[arm].append((rate, result))
        arms.reverse()
    outcomes = interleave(
        {
            arm: goodput_search(
                _start_rate(requests[arm], load, quick),
                prior=swept[arm],
                **(QUICK_LOAD if quick else FULL_LOAD),
            )
            for arm in arms
        },
        run_rate,
    )
    searches = [
        GoodputSearchRecord(arm, search.goodput, search.failing, search.confirmed, search.reason)
        for arm, search in outcomes.items()
    ]
    return probes, stopped, searches


def _start_rate(request: Callable[[], Any], load: LoadPlan, quick: bool) -> float:
    """Where the search starts: the declared lowest rate, or half the single-request capacity.

    Quick runs start near capacity, where a few probes bracket the goodput; full
    runs start where the study says, unless that is already past capacity.
    """
    capacity = 1.0 / max(service_time_s(request), 1e-6)
    if quick or not load.rates:
        return max(1.0, capacity / 2)
    return max(1.0, min(load.rates[0], capacity / 2))


def probe_record(probe: LoadProbe) -> tuple[LoadProbeRecord, ProbeRequests]:
    """The probe's entry in results.json, and its per-request records for the file it names."""
    path = f"load/{probe.arm}-{probe.index:03d}.csv"
    run = probe.run
    requests = tuple(
        zip(
            run.scheduled_ns.tolist(),
            run.issued_ns.tolist(),
            run.started_ns.tolist(),
            run.completed_ns.tolist(),
            run.ok.astype(int).tolist(),
            strict=True,
        )
    )
    entry = LoadProbeRecord(
        arm=probe.arm,
        index=probe.index,
        rate=probe.rate,
        phase=probe.phase,
        records=path,
        warmup=run.warmup,
        truncated=run.truncated,
        first_error=run.first_error,
        generator=probe.generator,
        seed=run.seed,
        machine_start=probe.machine_start,
        machine_end=probe.machine_end,
        decision=probe.decision,
        decided_at=probe.decided_at,
    )
    return entry, ProbeRequests(path, requests)
