"""The binomial p99 check, per-rate summaries and the goodput search."""

import json
import math

import attrs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from perfdsl.bundle.evaluation.load import GeneratorLag, RateResult
from perfdsl.stats.load import (
    capacity_change,
    find_goodput,
    goodput_search,
    interleave,
    min_completions,
    p99_check,
    summarize_rate,
)
from perfdsl.stats.sequential.proportion import rule_for


def test_459_completions_without_a_miss_pass_458_do_not():
    assert math.ceil(math.log(0.01) / math.log(0.99)) == 459
    assert p99_check(459, 0)
    assert not p99_check(458, 0)
    assert min_completions(0) == 459
    assert min_completions(0, confidence=0.95) == 299  # LoadGen's 95 % figure


def test_misses_need_more_completions():
    needed = [min_completions(k) for k in range(6)]
    assert needed == sorted(needed) and len(set(needed)) == 6
    for k, n in enumerate(needed):
        assert p99_check(n, k) and not p99_check(n - 1, k)
    assert not p99_check(100_000, 1_000)  # exactly 1 % misses never shows p99 <= SLO


@given(st.integers(1, 5_000), st.integers(0, 60))
def test_more_misses_never_help(n, k):
    k = min(k, n - 1)
    if p99_check(n, k + 1):
        assert p99_check(n, k)
    if p99_check(n, k):
        assert p99_check(n + 1, k)


def mm1_run(rate: float, service_rate: float, n: int, seed: int, slo: float) -> RateResult:
    """One simulated M/M/1 run: FIFO, one server, Lindley's recursion (vectorised)."""
    rng = np.random.default_rng(seed)
    arrivals = np.cumsum(rng.exponential(1 / rate, n))
    service = rng.exponential(1 / service_rate, n)
    # Departure d_i = max(a_i, d_{i-1}) + s_i, written as a running maximum.
    s_cum = np.cumsum(service)
    departures = np.maximum.accumulate(arrivals - s_cum + service) + s_cum
    return summarize_rate(rate, arrivals, arrivals, departures, slo)


def test_summary_of_a_light_load():
    result = mm1_run(rate=100, service_rate=1000, n=5_000, seed=1, slo=0.02)
    assert result.passed
    assert result.n == 5_000 and result.errors == 0
    assert result.p50 < result.p90 < result.p99 <= result.max
    # M/M/1 sojourn time is exponential with rate mu - lambda: p50 = ln 2 / 900.
    assert result.p50 == pytest.approx(math.log(2) / 900, rel=0.1)
    assert result.achieved_rate == pytest.approx(result.scheduled_rate, rel=0.02)
    assert result.offered_rate == 100


def test_a_p95_slo_is_checked_and_reported_at_the_95th_percentile():
    """M/M/1 at half load: sojourn times are exponential at 500/s, p95 6.0 ms, p99 9.2 ms."""
    rng = np.random.default_rng(7)
    n, rate, slo = 20_000, 500.0, 0.0075
    arrivals = np.cumsum(rng.exponential(1 / rate, n))
    service = rng.exponential(1 / 1000.0, n)
    s_cum = np.cumsum(service)
    departures = np.maximum.accumulate(arrivals - s_cum + service) + s_cum
    p95 = summarize_rate(rate, arrivals, arrivals, departures, slo, percentile=0.95)
    p99 = summarize_rate(rate, arrivals, arrivals, departures, slo)
    assert p95.p99_ok and not p99.p99_ok
    assert p95.slo_quantile == pytest.approx(math.log(20) / 500, rel=0.1)
    assert p99.slo_quantile == p99.p99 == p95.p99
    # A sequential rule decides at its own percentile, which must be the SLO's.
    rule = rule_for(0.95, n)
    assert (
        summarize_rate(rate, arrivals, arrivals, departures, slo, rule=rule, percentile=0.95).decision
        == "pass"
    )
    with pytest.raises(ValueError, match=r"percentile 0\.95, the SLO's is 0\.99"):
        summarize_rate(rate, arrivals, arrivals, departures, slo, rule=rule)


def test_overload_fails_on_throughput_and_p99():
    result = mm1_run(rate=1500, service_rate=1000, n=3_000, seed=2, slo=0.02)
    assert not result.passed
    assert not result.throughput_ok and not result.p99_ok
    assert result.achieved_rate == pytest.approx(1000, rel=0.1)


def test_errors_count_as_misses_and_a_generator_behind_invalidates():
    sched = np.arange(1_000) / 100.0
    done = sched + 0.001
    ok = np.ones(1_000, bool)
    ok[::50] = False  # 2 % failures
    failing = summarize_rate(100, sched, sched, done, slo=0.01, ok=ok)
    assert failing.errors == 20 and failing.misses == 20
    assert failing.max == math.inf and not failing.p99_ok
    steady = summarize_rate(100, sched, sched + 0.002, done + 0.002, slo=0.01)
    assert steady.generator.verdict == "jitter" and steady.lag_ok and steady.passed
    drifting = sched + np.linspace(0.0, 0.002, sched.size)  # 2 ms more lag by the end of 10 s
    drift = summarize_rate(100, sched, drifting, done + 0.002, slo=0.01)
    assert drift.generator.verdict == "jitter" and drift.passed  # issued at 99.98 % of the rate
    growing = sched * 1.05  # issued at 1 / 1.05 of the scheduled rate: 0.5 s behind by the end
    behind = summarize_rate(100, sched, growing, growing + 0.001, slo=0.01)
    assert not behind.lag_ok and not behind.passed
    assert behind.generator_limited and not steady.generator_limited


def test_jitter_that_alone_decides_the_p99_check_makes_the_probe_the_generators():
    sched = np.arange(1_000) / 500.0
    late = np.zeros(1_000)
    late[::33] = 0.040  # 31 wake-ups 40 ms late, no growing backlog
    issued = sched + late
    # The server answers 1 ms after each issue: it met the SLO for every request it was sent.
    jittered = summarize_rate(500, sched, issued, issued + 0.001, slo=0.025)
    assert jittered.generator.verdict == "jitter" and not jittered.p99_ok
    assert not jittered.lag_ok and jittered.generator_limited and not jittered.passed
    # The same lateness in front of a server that is itself slow for those requests is the system's.
    slow = issued + 0.001 + np.where(late > 0, 0.030, 0.0)
    system = summarize_rate(500, sched, issued, slow, slo=0.025)
    assert not system.p99_ok and system.lag_ok and not system.generator_limited


ON_TIME = GeneratorLag(p50=0.0, p99=0.0, backlog_slope=0.0, backlog_growth=0.0, limit=0.05, verdict="on time")


def result_for(rate: float, passed: bool) -> RateResult:
    return RateResult(
        offered_rate=rate,
        scheduled_rate=rate,
        achieved_rate=rate,
        n=1_000,
        misses=0,
        errors=0,
        p50=0.0,
        p90=0.0,
        p99=0.0,
        max=0.0,
        generator=ON_TIME,
        slo=1.0,
        p99_ok=passed,
        throughput_ok=True,
        lag_ok=True,
        stretches=100.0,
    )


def test_search_on_a_sharp_capacity():
    search = find_goodput(lambda r: result_for(r, r <= 731.0), start_rate=10.0, rel_tol=0.02)
    assert search.confirmed
    assert 731.0 / 1.02 <= search.goodput <= 731.0
    phases = [p.phase for p in search.probes]
    assert phases[0] == "start" and phases[-1] == "confirm" and "bisect" in phases
    # The second pass repeats the goodput only; the rate above it failed once, which closes the bracket.
    confirms = [p for p in search.probes if p.phase == "confirm"]
    assert [(p.rate, p.result.passed) for p in confirms] == [(search.goodput, True)]
    assert search.failing is not None and 731.0 < search.failing <= 1.02 * search.goodput
    assert search.reason == ""
    assert [p.rate for p in search.probes][:4] == [10.0, 20.0, 40.0, 80.0]


def test_failing_start_rate_steps_down():
    search = find_goodput(lambda r: result_for(r, r <= 30.0), start_rate=100.0, rel_tol=0.05)
    assert search.confirmed
    assert 30.0 / 1.05 <= search.goodput <= 30.0
    assert [p.phase for p in search.probes][:3] == ["start", "step down", "step down"]


def test_failed_confirmation_steps_down():
    seen: dict[float, int] = {}

    def flaky(rate: float) -> RateResult:
        # Rates above 90 pass the first time only: a result that is not monotone.
        seen[rate] = seen.get(rate, 0) + 1
        return result_for(rate, rate <= 90.0 or (rate <= 100.0 and seen[rate] == 1))

    search = find_goodput(flaky, start_rate=50.0, rel_tol=0.02)
    assert search.confirmed
    assert 90.0 / 1.02 <= search.goodput <= 90.0
    assert "step down" in [p.phase for p in search.probes]


BEHIND = attrs.evolve(ON_TIME, p99=0.2, backlog_slope=0.1, backlog_growth=0.1, verdict="behind")


def test_a_run_the_generator_fell_behind_in_is_run_again_before_the_search_moves_on():
    stalled: set[float] = set()

    def stalls_once_at_80(rate: float) -> RateResult:
        if rate == 80.0 and rate not in stalled:
            stalled.add(rate)  # the machine starved the generator on this run only
            return attrs.evolve(result_for(rate, True), generator=BEHIND, lag_ok=False)
        return result_for(rate, rate <= 731.0)

    search = find_goodput(stalls_once_at_80, start_rate=10.0, rel_tol=0.02)
    at_80 = [p for p in search.probes if p.rate == 80.0]
    assert [p.result.generator_limited for p in at_80] == [True, False]
    assert [p.rate for p in search.probes][:6] == [10.0, 20.0, 40.0, 80.0, 80.0, 160.0]
    assert search.confirmed and 731.0 / 1.02 <= search.goodput <= 731.0


def planted(runs: dict[float, list[bool]]):
    """A server whose runs at each rate pass or fail as planted, in order; any other rate raises."""
    outcomes = {rate: iter(passes) for rate, passes in runs.items()}
    return lambda rate: result_for(rate, next(outcomes[rate]))


def test_a_repeat_that_fails_steps_down_until_a_rate_passes_twice():
    # A shared machine near capacity: p99 flips between runs at the same rate.
    search = find_goodput(
        planted(
            {
                100.0: [True],
                200.0: [True],
                400.0: [False],
                300.0: [True, False],
                350.0: [False],
                240.0: [True, True],
            }
        ),
        start_rate=100.0,
        rel_tol=0.25,
    )
    assert [(p.rate, p.phase, p.result.passed) for p in search.probes] == [
        (100.0, "start", True),
        (200.0, "double", True),
        (400.0, "double", False),
        (300.0, "bisect", True),
        (350.0, "bisect", False),
        (300.0, "confirm", False),  # the repeat failed: 300 closes the bracket
        (240.0, "step down", True),
        (240.0, "confirm", True),
    ]
    assert (search.goodput, search.failing, search.confirmed, search.reason) == (240.0, 300.0, True, "")


def test_stepping_down_past_a_rate_that_already_passed_repeats_that_rate():
    # 240 fails its repeat too; the next step (192) is below 200, which passed once: 200 is repeated.
    search = find_goodput(
        planted(
            {
                100.0: [True],
                200.0: [True, True],
                400.0: [False],
                300.0: [True, False],
                350.0: [False],
                240.0: [True, False],
            }
        ),
        start_rate=100.0,
        rel_tol=0.25,
    )
    assert [(p.rate, p.phase) for p in search.probes][-3:] == [
        (240.0, "step down"),
        (240.0, "confirm"),
        (200.0, "confirm"),
    ]
    assert (search.goodput, search.failing, search.confirmed) == (200.0, 240.0, True)


def test_a_rate_the_sweep_saw_fail_is_not_confirmed_by_the_search():
    # The sweep failed 400 once; the search passes it twice, but the pooled runs at 400
    # include a failure, so the search steps below it, as the evaluation would.
    search = find_goodput(
        lambda r: result_for(r, r <= 400.0),
        start_rate=100.0,
        rel_tol=0.05,
        prior=[(400.0, result_for(400.0, False)), (200.0, result_for(200.0, True))],
    )
    assert search.confirmed and 400.0 / 1.05 <= search.goodput < 400.0 and search.failing == 400.0
    # Where the sweep already passed a rate, one more pass confirms it: no extra run.
    swept = find_goodput(
        lambda r: result_for(r, r <= 100.0),
        start_rate=100.0,
        rel_tol=1.5,  # no bisection: the bracket [100, 200) is left as it is
        prior=[(100.0, result_for(100.0, True))],
    )
    assert (
        swept.confirmed and swept.goodput == 100.0 and [p.phase for p in swept.probes] == ["start", "double"]
    )


def test_a_search_asked_for_no_second_pass_is_unconfirmed():
    quick = find_goodput(lambda r: result_for(r, r <= 731.0), start_rate=100.0, rel_tol=0.25, confirmations=0)
    assert not quick.confirmed and quick.reason == "no second pass was asked for"
    assert "confirm" not in [p.phase for p in quick.probes]


def test_an_unconfirmed_goodput_says_why():
    seen: dict[float, int] = {}

    def first_pass_only(rate: float) -> RateResult:
        seen[rate] = seen.get(rate, 0) + 1
        return result_for(rate, rate <= 100.0 and seen[rate] == 1)

    search = find_goodput(first_pass_only, start_rate=50.0, rel_tol=0.05, max_probes=9)
    assert not search.confirmed and len(search.probes) == 9
    assert search.reason.startswith("the probe budget (9 runs) ran out")


def test_interleaved_searches_take_turns_and_find_what_each_finds_alone():
    capacity = {"baseline": 300.0, "change": 731.0}
    order: list[tuple[str, str]] = []

    def run(arm: str, rate: float, phase: str) -> RateResult:
        order.append((arm, phase))
        return result_for(rate, rate <= capacity[arm])

    both = interleave({arm: goodput_search(100.0, rel_tol=0.02) for arm in ("change", "baseline")}, run)
    for arm, search in both.items():
        alone = find_goodput(lambda r, arm=arm: result_for(r, r <= capacity[arm]), 100.0, rel_tol=0.02)
        assert search == alone and search.confirmed
    # Turns alternate while both run; the shorter search ends first and the other goes on alone.
    shorter = min(len(s.probes) for s in both.values())
    assert [arm for arm, _ in order[: 2 * shorter]] == ["change", "baseline"] * shorter
    assert order[0] == ("change", "start") and order[-1][1] == "confirm"


def test_an_interleaved_search_whose_budget_is_spent_ends_without_a_result():
    def run(arm: str, rate: float, phase: str) -> RateResult | None:
        if arm == "baseline" and rate > 200.0:
            return None  # its time budget ran out before this probe
        return result_for(rate, rate <= 731.0)

    both = interleave({arm: goodput_search(100.0) for arm in ("baseline", "change")}, run)
    assert list(both) == ["change"] and both["change"].confirmed


def test_probe_budget_is_respected():
    calls = []

    def never(rate: float) -> RateResult:
        calls.append(rate)
        return result_for(rate, False)

    search = find_goodput(never, start_rate=100.0, max_probes=5)
    assert len(calls) == len(search.probes) == 5
    assert search.goodput == 0.0 and not search.confirmed
    tight = find_goodput(lambda r: result_for(r, r <= 731.0), start_rate=10.0, max_probes=8)
    assert len(tight.probes) == 8 and not tight.confirmed and tight.goodput > 0


def test_search_on_a_simulated_mm1_server():
    """Capacity at the SLO is known: p99 of an exponential sojourn, ln 100 / (mu - lambda) = SLO."""
    mu, slo = 1000.0, 0.05
    capacity = mu - math.log(100) / slo  # 907.9 requests per second
    runs = iter(range(10_000))
    search = find_goodput(
        lambda rate: mm1_run(rate, mu, 20_000, seed=next(runs), slo=slo),
        start_rate=100.0,
        rel_tol=0.02,
    )
    # The goodput passed twice; within 2 % of capacity a queue's runs are long and
    # autocorrelated, so a repeat may fail and the search step down (seed-dependent).
    assert search.confirmed
    assert [p.rate for p in search.probes if p.phase == "confirm"][-1] == search.goodput
    assert search.failing is not None and search.failing > search.goodput
    # The binomial check demands evidence that p99 is below the SLO, over the requests'
    # effective number: near capacity an M/M/1 queue's latencies are correlated over tens of
    # requests, so a probe of 20,000 carries a few hundred independent ones and the goodput
    # sits below the analytic capacity (about 83 % of it here), never above it by much.
    assert 0.75 * capacity <= search.goodput <= 1.02 * capacity
    assert capacity_change(search.goodput, 1.1 * search.goodput) == pytest.approx(1.1)


def test_a_rate_already_judged_not_passing_is_never_probed_again():
    # A start rate that did not pass, a halving that did: the doubling would land on the
    # start rate again, and a sweep rate that failed lies on the way. Neither is run again.
    search = find_goodput(
        planted({230.0: [False], 115.0: [True, True], 172.5: [False]}),
        start_rate=230.0,
        rel_tol=0.5,
    )
    assert [(p.rate, p.phase) for p in search.probes] == [
        (230.0, "start"),
        (115.0, "step down"),
        (172.5, "bisect"),
        (115.0, "confirm"),
    ]
    assert (search.goodput, search.failing, search.confirmed) == (115.0, 172.5, True)
    swept = find_goodput(
        planted({100.0: [True], 150.0: [True, True]}),
        start_rate=100.0,
        rel_tol=0.4,
        prior=[(200.0, result_for(200.0, False))],
    )
    assert 200.0 not in [p.rate for p in swept.probes]
    assert (swept.goodput, swept.failing) == (150.0, 200.0)


def test_the_slo_percentile_s_latency_is_written_only_where_it_is_not_the_p99() -> None:
    """A p99 SLO's evaluation.json keeps its bytes; a p95 one holds the latency it was judged at."""
    from perfdsl.bundle.plain import from_plain, to_plain

    rng = np.random.default_rng(3)
    arrivals = np.cumsum(rng.exponential(1 / 200.0, 2_000))
    departures = arrivals + rng.exponential(1 / 1000.0, 2_000)
    for percentile in (0.99, 0.95):
        result = summarize_rate(200.0, arrivals, arrivals, departures, 0.02, percentile=percentile)
        written = to_plain(result, 12)
        assert ("slo_quantile" in written) == (percentile != 0.99)
        assert from_plain(RateResult, written) == from_plain(RateResult, json.loads(json.dumps(written)))
        assert from_plain(RateResult, written).slo_quantile == pytest.approx(result.slo_quantile, rel=1e-11)
