"""The load test's time budget, derived from the study's sweep (no timing asserted)."""

from __future__ import annotations

from perfdsl.bundle.plan import LoadPlan
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
    # Fewer requests than the p99 check needs are raised to 459, and the budget with them.
    assert probe_count(sweep((50.0,), requests=100)) == (459, 22)
