"""The report's load sentence says which rule decided the probes, and where each one stopped."""

from __future__ import annotations

import attrs

from perfdsl.bundle.evaluation.load import GeneratorLag, LoadEvaluation, RateResult
from perfdsl.report import load_rule
from perfdsl.stats.sequential.proportion import rule_for

LAG = GeneratorLag(1e-4, 2e-4, 0.0, 0.0, 1.25e-3, "on time")
RESULT = RateResult(
    400.0,
    401.0,
    400.5,
    812,
    0,
    0,
    1e-3,
    2e-3,
    3e-3,
    4e-3,
    LAG,
    0.025,
    True,
    True,
    True,
    80.0,
    1.0,
    "pass",
    700,
)
LOAD = LoadEvaluation(0.025, 0.99, (), None, None, None, None, probe_rule=rule_for(0.99, 2000))


def test_a_sequential_load_test_states_its_rule() -> None:
    said = load_rule.p99_check(LOAD)
    assert "decided sequentially: after every 100 requests" in said
    assert "chance of a false pass stated at 1.00% however often it looked" in said
    assert (
        "(by simulation: 0.67% for a queue near saturation, 0.25% for latencies that drift over "
        "hundreds of requests)" in said
    )
    assert "a pass also needs the requests to hold 25 independent stretches of their own drift" in said
    assert "still open at 2,000 requests is not passed" in said


def test_a_bundle_of_fixed_probes_says_so() -> None:
    said = load_rule.p99_check(attrs.evolve(LOAD, probe_rule=None))
    assert "sequentially" not in said and "n / tau of them count, tau measured per probe" in said
    assert "25 independent stretches" in said


def test_each_probe_says_where_it_stopped() -> None:
    assert load_rule.probe_requests(RESULT) == "812 (pass at 700)"
    assert load_rule.probe_requests(attrs.evolve(RESULT, decision="open", decided_at=2000)) == (
        "812 (undecided at the cap)"
    )
    assert load_rule.probe_requests(attrs.evolve(RESULT, decision=None, decided_at=None)) == "812"


def test_a_probe_held_open_by_too_few_stretches_says_so() -> None:
    short = attrs.evolve(RESULT, p99_ok=False, stretches=7.4, decision="open", decided_at=2000)
    assert load_rule.probe_requests(short) == (
        "812 (undecided at the cap; 7.4 independent stretches, 25 needed to pass)"
    )
    fixed = attrs.evolve(short, decision=None, decided_at=None)
    assert load_rule.probe_requests(fixed) == "812 (7.4 independent stretches, 25 needed to pass)"
    # A failed probe failed on its misses: the stretches are no part of why.
    failed = attrs.evolve(short, decision="fail", decided_at=300)
    assert load_rule.probe_requests(failed) == "812 (fail at 300)"
    assert load_rule.decided_early(LOAD, [RESULT, attrs.evolve(RESULT, decided_at=2000)]) == (
        ", 1 decided before the cap"
    )


def test_a_probe_open_with_requests_over_the_slo_says_why_it_did_not_fail() -> None:
    # 39 of 983 requests over the SLO and "undecided" read as a check the report got wrong.
    clustered = attrs.evolve(
        RESULT, n=983, misses=39, p99_ok=False, dependence=20.0, decision="open", decided_at=983
    )
    assert load_rule.probe_requests(clustered) == (
        "983 (undecided at the cap: 39 over the SLO, but in runs, so the 983 count as 49 independent)"
    )
