"""Goodput from a recomputed offered-load curve: what limited it, and what capacity claim it supports."""

from __future__ import annotations

import math

import attrs
import pytest

from perfdsl.bundle.evaluation.load import (
    Capacity,
    CapacityInterval,
    CurvePoint,
    GeneratorLag,
    Goodput,
    LoadEvaluation,
    RateResult,
)
from perfdsl.bundle.plain import from_plain
from perfdsl.evaluate.load_curve import compare_arms, goodput
from perfdsl.evaluate.predictions import judge
from perfdsl.report import formatting as fmt

SLO = 0.025


def probe(
    index: int, rate: float, *, p99: bool = True, throughput: bool = True, lag: bool = True
) -> CurvePoint:
    result = RateResult(
        offered_rate=rate,
        scheduled_rate=rate,
        achieved_rate=rate if throughput else rate / 2,
        n=1_000,
        misses=0 if p99 else 100,
        errors=0,
        p50=0.001,
        p90=0.002,
        p99=0.003 if p99 else 0.1,
        max=0.2,
        generator=GeneratorLag(
            p50=0.0 if lag else 0.005,
            p99=0.0 if lag else 0.01,
            backlog_slope=0.0 if lag else 0.01,
            backlog_growth=0.0 if lag else 0.01,
            limit=0.05 * SLO,
            verdict="on time" if lag else "behind",
        ),
        slo=SLO,
        p99_ok=p99,
        throughput_ok=throughput,
        lag_ok=lag,
        stretches=100.0,
    )
    return CurvePoint(index, rate, "double", result, None)


def test_a_goodput_limited_by_the_slo_is_the_capacity() -> None:
    g = goodput("baseline", [probe(0, 400), probe(1, 800, p99=False), probe(2, 600)])
    assert (g.goodput, g.confirmed) == (600, False)
    assert g.limited_by == ("p99",)
    assert not g.lower_bound and g.failing == 800


def test_confirmed_rate_is_preferred_and_limit_read_above_it() -> None:
    g = goodput(
        "baseline", [probe(0, 400), probe(1, 400), probe(2, 600, lag=False), probe(3, 800, p99=False)]
    )
    assert (g.goodput, g.confirmed) == (400, True)
    assert g.limited_by == ("generator lag",)  # the lowest failing rate above 400 is 600
    # 600 is no evidence about the system; 800 failed its p99 on schedule and closes the bracket.
    assert (g.failing, g.lower_bound) == (800, False)
    only_lag = goodput("baseline", [probe(0, 400), probe(1, 400), probe(2, 600, lag=False)])
    assert (only_lag.failing, only_lag.lower_bound) == (None, True)


def test_a_failure_above_undecided_probes_closes_the_bracket() -> None:
    """A sweep's failure at 4000 rps above probes open at their cap was read as "none failed"."""

    def undecided(index: int, rate: float) -> CurvePoint:
        point = probe(index, rate, p99=False)
        return attrs.evolve(point, result=attrs.evolve(point.result, decision="open"))

    g = goodput(
        "baseline",
        [probe(0, 200), probe(1, 200), undecided(2, 250), undecided(3, 2000), probe(4, 4000, p99=False)],
    )
    assert (g.goodput, g.limited_by, g.failing, g.lower_bound) == (200, ("p99 undecided",), 4000, False)


def test_no_failure_above_the_goodput_leaves_it_a_lower_bound() -> None:
    g = goodput("change", [probe(0, 400), probe(1, 800)])
    assert g.goodput == 800 and g.limited_by == () and g.lower_bound


def test_throughput_lost_to_a_generator_behind_is_the_generators_limit() -> None:
    # Completions cannot outpace issues that fall behind: the throughput failure is the generator's.
    g = goodput("change", [probe(0, 400), probe(1, 800, throughput=False, lag=False)])
    assert g.limited_by == ("throughput", "generator lag")
    assert g.lower_bound and g.failing is None


def test_a_rate_is_judged_by_its_runs_where_the_generator_kept_up() -> None:
    # At 800 the generator fell behind once; its second run passed: 800 is the goodput.
    g = goodput("change", [probe(0, 400), probe(1, 800, lag=False), probe(2, 800), probe(3, 1000, p99=False)])
    assert (g.goodput, g.failing, g.lower_bound) == (800, 1000, False)
    assert g.limited_by == ("p99",)


def test_a_goodput_is_confirmed_when_it_passed_twice_and_one_failure_closes_its_bracket() -> None:
    once_above = goodput("baseline", [probe(0, 400), probe(1, 500, p99=False), probe(2, 400)])
    assert (once_above.goodput, once_above.failing, once_above.confirmed) == (400, 500, True)
    # A rate above that fails once and passes once is not reliably served: it still closes the bracket.
    flaky_above = goodput("baseline", [probe(0, 400), probe(1, 500, p99=False), probe(2, 400), probe(3, 500)])
    assert (flaky_above.goodput, flaky_above.failing, flaky_above.confirmed) == (400, 500, True)
    single = goodput("baseline", [probe(0, 400), probe(1, 500, p99=False)])
    assert (single.goodput, single.confirmed) == (400, False)
    # The search's step-down: 500 failed its repeat, 476 passed twice; the bracket is [476, 500).
    stepped = goodput(
        "baseline",
        [
            probe(0, 400),
            probe(1, 500),
            probe(2, 600, p99=False),
            probe(3, 500, p99=False),
            probe(4, 476),
            probe(5, 476),
        ],
    )
    assert (stepped.goodput, stepped.failing, stepped.confirmed) == (476, 500, True)
    open_bracket = goodput("baseline", [probe(0, 400), probe(1, 400)])
    assert (open_bracket.failing, open_bracket.confirmed, open_bracket.lower_bound) == (None, True, True)


def _arms(base_lag: bool, change_lag: bool) -> tuple:
    base = goodput("baseline", [probe(0, 500), probe(1, 600, lag=not base_lag, p99=base_lag)])
    change = goodput("change", [probe(0, 1000), probe(1, 1200, lag=not change_lag, p99=change_lag)])
    return base, change


def test_capacity_is_exact_when_both_goodputs_are_capacities() -> None:
    load = compare_arms(SLO, 0.99, _arms(False, False))
    assert load.capacity is not None and load.capacity.change == pytest.approx(2.0)
    assert load.capacity_bound == "exact"
    # Brackets [500, 600) and [1000, 1200): the quotient 2 is one point of [1000/600, 1200/500).
    assert load.capacity_interval == (pytest.approx(1000 / 600), pytest.approx(2.4))
    assert load.capacity_range is not None and not load.capacity_range.confirmed


def test_a_baseline_held_back_by_its_generator_makes_the_ratio_an_upper_bound() -> None:
    load = compare_arms(SLO, 0.99, _arms(True, False))
    assert load.capacity_bound == "at most"
    low, high = load.capacity_interval
    assert (low, high) == (0.0, pytest.approx(2.4))
    # A prediction of at least 1.5x can be neither confirmed nor refuted by "below 2.4".
    assert judge(low, high, ">=", 1.5) == "inconclusive"
    assert judge(low, high, ">=", 2.5) == "refuted"


def test_a_change_held_back_by_its_generator_makes_the_ratio_a_lower_bound() -> None:
    load = compare_arms(SLO, 0.99, _arms(False, True))
    assert load.capacity_bound == "at least"
    low, high = load.capacity_interval
    assert low == pytest.approx(1000 / 600) and math.isinf(high)
    assert judge(low, high, ">=", 1.5) == "confirmed"
    assert judge(low, high, ">=", 2.5) == "inconclusive"


def test_two_lower_bounds_support_no_capacity_claim() -> None:
    load = compare_arms(SLO, 0.99, _arms(True, True))
    assert load.capacity is None and load.capacity_bound is None
    assert "neither goodput is a capacity" in (load.capacity_missing or "")


def test_report_states_the_bound_and_why() -> None:
    bracket = CapacityInterval(0.0, 3.797, False, (-math.inf, 0.737), "")
    curve = (CurvePoint(0, 663.0, "search", None, None), CurvePoint(1, 757.0, "search", None, "behind"))
    baseline = Goodput("baseline", 663.0, None, False, curve, ("generator lag",), True)
    load = LoadEvaluation(0.025, 0.99, (baseline,), Capacity(3.797, 0.737), None, "at most", bracket)
    assert fmt.capacity_ratio(load) == (
        "in the bracket [0, 3.797) of the rates the search tried (no confidence level), which holds 1: "
        "no capacity change is shown either way, unconfirmed (a goodput passed once, or above a failure)"
    )
    caveat = fmt.capacity_caveat(load) or ""
    assert "baseline's goodput is a lower bound" in caveat
    assert "at 757 rps the load generator fell behind its schedule" in caveat
    # An unbounded upper end, as evaluation.json holds it: null.
    plain = {"low": 1.24, "high": None, "confirmed": True, "fleet_fraction_freed": [0.19, 1.0], "message": ""}
    confirmed = from_plain(CapacityInterval, plain)
    assert fmt.capacity_ratio(attrs.evolve(load, capacity_range=confirmed)) == (
        "in the bracket [1.240, ∞) of the rates the search tried (no confidence level)"
    )
    below = attrs.evolve(confirmed, low=0.62, high=0.97)
    assert fmt.capacity_ratio(attrs.evolve(load, capacity_range=below)).endswith("(no confidence level)")
    assert fmt.capacity_caveat(attrs.evolve(load, capacity_bound="exact")) is None
    assert fmt.interval(3.797, None) == "[3.797, ∞)"


def test_a_failure_below_a_candidate_caps_the_goodput_and_leaves_it_unconfirmed() -> None:
    """The audit's oracle: every rate up to 2050 rps passes except one sweep failure at 1500.
    The doubling path passed 2000 twice (sweep and search), so the old rule confirmed 2000
    above the failure, and against a change confirmed at 1750 printed a capacity loss."""
    points = [
        probe(0, 500),
        probe(1, 1000),
        probe(2, 1500, p99=False),
        probe(3, 2000),
        probe(4, 2000),
        probe(5, 4000, p99=False),
        probe(6, 2062.5, p99=False),
    ]
    g = goodput("baseline", points)
    assert g.goodput == 1000 and g.failing == 1500
    assert not g.confirmed and g.passed_above == (2000,)


def test_a_monotone_curve_keeps_its_confirmed_goodput() -> None:
    points = [probe(0, 500), probe(1, 1000), probe(2, 1000), probe(3, 1500, p99=False)]
    g = goodput("baseline", points)
    assert (g.goodput, g.failing, g.confirmed, g.passed_above) == (1000, 1500, True, ())


def test_a_probe_undecided_at_its_cap_leaves_the_bracket_open_above_the_goodput() -> None:
    """It is not passed, so no goodput rests on it, but it did not show the p99 over the SLO."""
    undecided = probe(2, 800, p99=False)
    undecided = attrs.evolve(undecided, result=attrs.evolve(undecided.result, decision="open"))
    g = goodput("baseline", [probe(0, 400), probe(1, 400), undecided])
    assert (g.goodput, g.failing, g.lower_bound) == (400, None, True)
    assert g.limited_by == ("p99 undecided",)
    decided = attrs.evolve(undecided, result=attrs.evolve(undecided.result, decision="fail"))
    g = goodput("baseline", [probe(0, 400), probe(1, 400), decided])
    assert (g.goodput, g.failing, g.limited_by) == (400, 800, ("p99",))


def test_two_goodputs_bounded_only_by_undecided_probes_say_so() -> None:
    def undecided(index: int, rate: float) -> CurvePoint:
        point = probe(index, rate, p99=False)
        return attrs.evolve(point, result=attrs.evolve(point.result, decision="open"))

    arms = (
        goodput("baseline", [probe(0, 400), probe(1, 400), undecided(2, 800)]),
        goodput("change", [probe(0, 500), probe(1, 500), undecided(2, 900)]),
    )
    load = compare_arms(SLO, 0.99, arms)
    assert load.capacity is None
    assert (
        "the baseline's probes at 800 rps stayed undecided at their cap; "
        "the change's probes at 900 rps stayed undecided at their cap"
    ) in (load.capacity_missing or "")


def test_undecided_probes_under_rates_that_passed_are_named_with_them() -> None:
    """A cap too short for a correlated service: open at the lowest rate, every higher one passed."""

    def undecided(index: int, rate: float) -> CurvePoint:
        point = probe(index, rate, p99=False)
        return attrs.evolve(point, result=attrs.evolve(point.result, decision="open"))

    higher = [probe(i, rate) for i, rate in enumerate((200, 300, 400, 500), start=2)]
    arms = (
        goodput("baseline", [probe(0, 50), probe(1, 50), undecided(6, 100), *higher]),
        goodput("change", [probe(0, 50), probe(1, 50), undecided(6, 100), *higher]),
    )
    assert arms[0].passed_above == (200, 300, 400, 500) and not arms[0].confirmed
    load = compare_arms(SLO, 0.99, arms)
    assert "the baseline's probes at 100 rps stayed undecided at their cap, though 4 higher rates passed" in (
        load.capacity_missing or ""
    )


def test_page_one_says_an_arm_misses_the_target_load_only_where_a_probe_failed() -> None:
    from perfdsl.report.decision import _at_target

    def undecided(index: int, rate: float) -> CurvePoint:
        point = probe(index, rate, p99=False)
        return attrs.evolve(point, result=attrs.evolve(point.result, decision="open"))

    meets = goodput("change", [probe(0, 400), probe(1, 400), probe(2, 800, p99=False)])
    failed = goodput("baseline", [probe(0, 50), probe(1, 50), probe(2, 100, p99=False)])
    assert _at_target(100, failed, meets, percentile=0.99) == (
        "the change meets the SLO; the baseline does not meet the SLO (a probe at or below that load failed)"
    )
    short = goodput("baseline", [probe(0, 50), probe(1, 50), undecided(2, 100), probe(3, 200)])
    said = _at_target(100, short, meets, percentile=0.99)
    assert "does not meet" not in said
    assert (
        "the baseline is not shown to meet the SLO or to miss it (its probes between its goodput and "
        "the load stayed " in said
    )
    # The worst undecided probe is quoted, so that a p99 far over the SLO does not read as close to it.
    worst = "the worst, at 100 rps, had p99 100 ms against the SLO's 25 ms, 100 of 1,000 requests over it)"
    assert worst in said
    # A `slo p95` quotes the probe's 95th percentile, under its name.
    at_p95 = attrs.evolve(short.curve[2], result=attrs.evolve(short.curve[2].result, slo_quantile=0.03))
    p95 = goodput("baseline", [*short.curve[:2], at_p95, short.curve[3]])
    assert "had p95 30 ms against the SLO's 25 ms" in _at_target(100, p95, meets, percentile=0.95)
    clustered = attrs.evolve(short.curve[2], result=attrs.evolve(short.curve[2].result, dependence=40.0))
    runs = goodput("baseline", [*short.curve[:2], clustered, short.curve[3]])
    clustered_said = _at_target(100, runs, meets, percentile=0.99)
    assert "their latencies came in runs, so the 1,000 count as 25 independent ones)" in clustered_said
    inside = goodput("baseline", [probe(0, 50), probe(1, 50), probe(2, 200, p99=False)])
    assert "between its goodput and 200 rps, which failed" in _at_target(100, inside, meets, percentile=0.99)


def test_the_load_table_calls_an_open_probe_undecided_not_failed() -> None:
    from perfdsl.report.workload import _verdict

    point = probe(0, 100, p99=False)
    assert _verdict(point.result, 0.99) == "fails (p99)"
    assert _verdict(attrs.evolve(point.result, decision="open"), 0.99) == "undecided (p99 open at the cap)"
    late = attrs.evolve(point.result, decision="open", lag_ok=False)
    assert _verdict(late, 0.99) == "fails (p99 undecided, generator lag)"
    # A `slo p95` is checked, and named, at its own percentile.
    assert _verdict(late, 0.95) == "fails (p95 undecided, generator lag)"
    assert _verdict(attrs.evolve(point.result, decision="open"), 0.999) == "undecided (p99.9 open at the cap)"


def test_open_probes_inside_a_bracket_say_what_would_decide_them() -> None:
    """Near capacity requests come in runs: a probe's 1,404 requests held 1,404 / tau independent ones."""
    from perfdsl.bundle.plan import LoadPlan
    from perfdsl.probe_size import probe_cap
    from perfdsl.report.end_to_end import open_bracket

    def undecided(index: int, rate: float, tau: float) -> CurvePoint:
        point = probe(index, rate)
        result = attrs.evolve(
            point.result, n=1404, p99_ok=False, decision="open", dependence=tau, stretches=30.0
        )
        return attrs.evolve(point, result=result)

    plan = LoadPlan(arrivals="poisson", rates=(400.0,), requests=1000, slo_seconds=SLO, slo_percentile=0.99)
    failed = probe(4, 1000, p99=False)
    # Between them, a probe open with misses: it has its own sentence, and is not among these.
    missed = attrs.evolve(
        undecided(5, 700, 40.0), result=attrs.evolve(undecided(5, 700, 40.0).result, misses=2)
    )
    g = goodput(
        "baseline",
        [probe(0, 400), probe(1, 400), undecided(2, 600, 50.0), missed, undecided(3, 800, 90.0), failed],
    )
    said = open_bracket((g,), plan)
    assert said is not None
    assert "(the baseline's at 600 rps, 800 rps)" in said
    assert "tau 50 to 90" in said and "28 to 16" not in said and "16 to 28 independent requests" in said
    # 644 independent requests with no miss, at tau 50: 32,200 requests.
    assert "about 32,000 requests, 53.7 s at that rate" in said
    requests = int(said.split("`requests ")[1].split("`")[0])
    assert probe_cap(requests, "sequential", 0.99) >= 32_200 > probe_cap(requests - 100, "sequential", 0.99)
    # Nothing to say where the probes inside the bracket were decided.
    assert open_bracket((goodput("baseline", [probe(0, 400), probe(1, 400), failed]),), plan) is None
    # A quick run whose study's own `requests` already holds that says so, not to write fewer:
    # a quick run of a `requests 1000` study advised `requests 600`.
    held = open_bracket((g,), plan, full_requests=30_000)
    assert held is not None
    assert held.endswith(
        f"a full run's probes, capped at {probe_cap(30_000, 'sequential', 0.99):,} requests by the "
        "study's `requests 30000`, hold that; this quick run's were capped lower."
    )
    assert f"`requests {requests}`" in (open_bracket((g,), plan, full_requests=1000) or "")


def test_page_one_calls_a_next_rate_that_also_lost_throughput_a_failure() -> None:
    """ "the next rate up stayed undecided at its cap, which is no failure" stood beside a table
    whose row for that rate said it failed on throughput."""
    from perfdsl.report.decision import _undecided_above

    def undecided(index: int, rate: float, throughput: bool) -> CurvePoint:
        point = probe(index, rate, p99=False, throughput=throughput)
        return attrs.evolve(point, result=attrs.evolve(point.result, decision="open"))

    open_only = goodput("baseline", [probe(0, 400), probe(1, 400), undecided(2, 800, True)])
    short = goodput("change", [probe(0, 400), probe(1, 400), undecided(2, 800, False)])
    assert open_only.limited_by == ("p99 undecided",)
    assert short.limited_by == ("p99 undecided", "throughput") and short.failing == 800
    assert "the baseline's goodput is the highest rate" in _undecided_above(open_only, short)
    assert _undecided_above(short) == ""
