"""The load test's time budget, derived from the study's sweep (no timing asserted)."""

from __future__ import annotations

import time

import numpy as np

from perfdsl.bundle.plan import LoadPlan
from perfdsl.runtime import load_search
from perfdsl.runtime.load_generator import LoadRun, poisson_schedule
from perfdsl.runtime.load_search import FULL_LOAD, QUICK_LOAD_BUDGET_S, load_budget_s, probe_count


def sweep(rates: tuple[float, ...], requests: int = 1000) -> LoadPlan:
    return LoadPlan("poisson", rates, requests, 0.025, 0.99)


def test_a_full_search_gets_its_probes_at_the_lowest_declared_rate() -> None:
    # The stated 1000 requests are the fixed probe's; the sequential cap is 644 / 459 of them.
    assert probe_count(sweep((500.0,))) == (1404, 50)
    # 16 probes of 1454 requests at 50 rps: 465 s an arm.
    assert load_budget_s(sweep((50.0, 100.0)), quick=False) == FULL_LOAD["max_probes"] * 1454 / 50
    # At 500 rps those probes take 34 s, less than the floor.
    assert load_budget_s(sweep((500.0, 3000.0)), quick=False) == QUICK_LOAD_BUDGET_S


def test_a_quick_run_and_a_load_without_rates_get_the_floor() -> None:
    assert load_budget_s(sweep((50.0,)), quick=True) == QUICK_LOAD_BUDGET_S
    assert load_budget_s(sweep(()), quick=False) == QUICK_LOAD_BUDGET_S
    # Fewer requests than the sequential rule needs to pass are raised to 644 (the fixed
    # probe's one-shot test needed 459), and the budget with them.
    assert probe_count(sweep((50.0,), requests=100)) == (644, 10)


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


def _stopping_server(capacity: float):
    """The stand-in of `_server` that honours the generator's window stop, as the real one does:
    it asks `stop` after each whole window and issues no request after a yes."""

    def run(request, rate, *, count, duration_s, warmup=0, seed=0, window=0, stop=None, **_cores):
        full = poisson_schedule(rate, warmup + count, seed)
        done = full + np.int64(1_000_000 if rate < capacity else 50_000_000)
        sent = full.size
        for end in range(warmup + window, full.size + 1, window) if stop is not None else ():
            if stop(full[warmup:end], done[warmup:end], np.ones(end - warmup, bool)):
                sent = end
                break
        kept = slice(warmup, sent)
        return LoadRun(
            rate,
            seed,
            1,
            warmup,
            False,
            full[kept],
            full[kept],
            full[kept],
            done[kept],
            np.ones(sent - warmup, bool),
            None,
            stopped=sent < full.size,
        )

    return run


def test_the_search_stops_each_probe_where_it_is_decided(monkeypatch) -> None:
    """Every probe of a search on a sharp capacity is decided before its 2000-request cap:
    a pass at 700 requests, a fail at the first window. The fixed probe spent 2000 on each."""
    monkeypatch.setattr(load_search, "run_open_loop", _stopping_server(1500.0))
    plan = LoadPlan("poisson", (400.0,), 2000, 0.025, 0.99)
    probes, _, searches = load_search.search_load({"baseline": lambda: None}, plan, False)
    assert {(p.rate < 1500.0, p.decision, p.decided_at) for p in probes} == {
        (True, "pass", 700),
        (False, "fail", 100),
    }
    assert all(p.run.scheduled_ns.size == p.decided_at for p in probes)
    assert searches[0].confirmed and 1400 <= searches[0].goodput < 1500


def test_probe_fixed_measures_the_stated_count_and_decides_nothing_early(monkeypatch) -> None:
    """`probe fixed`: every probe runs its stated requests whole, with no window and no stop, and
    the run records no sequential rule, so the evaluation takes the one binomial test."""
    monkeypatch.setattr(load_search, "run_open_loop", _stopping_server(1500.0))
    plan = LoadPlan("poisson", (400.0,), 2000, 0.025, 0.99, probe="fixed")
    assert probe_count(plan) == (2000, 100)
    assert load_search.probe_rule(plan) is None
    probes, _, searches = load_search.search_load({"baseline": lambda: None}, plan, False)
    assert {(p.decision, p.decided_at, p.run.scheduled_ns.size) for p in probes} == {(None, None, 2000)}
    assert searches[0].confirmed and 1400 <= searches[0].goodput < 1500


def test_a_fixed_probe_has_at_least_the_requests_its_test_can_pass_on() -> None:
    # 100 requests could never show p99 within the SLO at 99 %: the one-shot test needs 459.
    assert probe_count(LoadPlan("poisson", (50.0,), 100, 0.025, 0.99, probe="fixed")) == (459, 10)


def test_the_run_says_how_long_a_probe_may_be_and_when_requests_was_raised() -> None:
    from perfdsl.runtime.load_search import probe_summary

    raised = probe_summary(sweep((50.0,), requests=100))
    assert raised.startswith("load: each probe measures at most 644 requests after 10 warm-up ones")
    assert "(`requests 100` raised to the fewest a probe with no miss can pass on)" in raised
    assert "(from `requests 1000`)" in probe_summary(sweep((500.0,)))
    assert "a quick run's 60 requests raised" in probe_summary(sweep((50.0,), requests=60), quick=True)


def test_a_request_that_raises_is_left_out_of_the_service_time_not_the_load_test() -> None:
    """An application failing one request in 37 ended its worker's whole load test here."""
    from perfdsl.runtime.load_search import service_time_s

    calls = iter(range(100))

    def flaky() -> None:
        if next(calls) % 2:
            raise RuntimeError("a failed request")
        time.sleep(0.001)

    assert 0.001 <= service_time_s(flaky) < 0.1

    def broken() -> None:
        raise RuntimeError("every request fails")

    assert service_time_s(broken) == float("inf")
