"""The load test's time budget, derived from the study's sweep (no timing asserted)."""

from __future__ import annotations

import numpy as np

from perfdsl.bundle.plan import LoadPlan
from perfdsl.runtime import load_search
from perfdsl.runtime.load_generator import LoadRun, poisson_schedule
from perfdsl.runtime.load_search import FULL_LOAD, QUICK_LOAD_BUDGET_S, load_budget_s, probe_count


def sweep(rates: tuple[float, ...], requests: int = 1000) -> LoadPlan:
    return LoadPlan("poisson", rates, requests, 0.025, 0.99)


def test_a_full_search_gets_its_probes_at_the_lowest_declared_rate() -> None:
    assert probe_count(sweep((500.0,))) == (1000, 50)
    # 16 probes of 1050 requests at 50 rps: 336 s an arm.
    assert load_budget_s(sweep((50.0, 100.0)), quick=False) == FULL_LOAD["max_probes"] * 1050 / 50
    # At 500 rps those probes take 34 s, less than the floor.
    assert load_budget_s(sweep((500.0, 3000.0)), quick=False) == QUICK_LOAD_BUDGET_S


def test_a_quick_run_and_a_load_without_rates_get_the_floor() -> None:
    assert load_budget_s(sweep((50.0,)), quick=True) == QUICK_LOAD_BUDGET_S
    assert load_budget_s(sweep(()), quick=False) == QUICK_LOAD_BUDGET_S
    # Fewer requests than the sequential rule needs to pass are raised to 644 (the fixed
    # probe's one-shot test needed 459), and the budget with them.
    assert probe_count(sweep((50.0,), requests=100)) == (644, 32)


def _server(capacity: float):
    """A stand-in for the open-loop generator: a server of fixed latency that meets a 25 ms SLO
    below `capacity` rps and misses it above, with the schedule the seed draws."""

    def run(request, rate, *, count, duration_s, warmup=0, seed=0, **_cores_and_stop):
        scheduled = poisson_schedule(rate, count, seed)
        latency = np.int64(1_000_000 if rate < capacity else 50_000_000)
        done = scheduled + latency
        ok = np.ones(count, bool)
        return LoadRun(rate, seed, 1, warmup, False, scheduled, scheduled, scheduled, done, ok, None)

    return run


def test_each_repeat_at_a_rate_draws_a_fresh_schedule_shared_by_both_arms(monkeypatch) -> None:
    """Repeats once replayed one seed: a confirmation resampled the machine, never the arrivals.
    The schedule each probe gets is what is tested; the server is a stand-in."""
    monkeypatch.setattr(load_search, "run_open_loop", _server(1500.0))
    plan = LoadPlan("poisson", (400.0, 400.0), 459, 0.025, 0.99)
    probes, _, _ = load_search.search_load({"baseline": lambda: None, "change": lambda: None}, plan, False)
    seen: dict[tuple[str, float], list[int]] = {}
    for probe in probes:
        seen.setdefault((probe.arm, probe.rate), []).append(probe.run.seed)
    first = load_search.LOAD_SEED
    assert seen[("baseline", 400.0)][:2] == [first, first + 1]  # the sweep ran 400 twice
    assert any(len(seeds) > 1 for (_, rate), seeds in seen.items() if rate != 400.0)  # confirmations
    for (arm, rate), seeds in seen.items():
        assert seeds == [first + k for k in range(len(seeds))], (arm, rate)
        other = seen.get(("change" if arm == "baseline" else "baseline", rate), [])
        assert seeds[: len(other)] == other[: len(seeds)]
