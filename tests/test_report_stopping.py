"""The report's account of the stopping rule: the rule, and when and why each comparison stopped."""

from __future__ import annotations

import math

from perfdsl.bundle.plan import TimingPlan
from perfdsl.bundle.stopping import CAP, DECIDED, OPEN, RHO, SEQUENTIAL, StoppingRule, StopRecord
from perfdsl.evaluate.sequential import pairs_the_cap_lacked
from perfdsl.report.stopping import Stopped, describe_stop, rule_sentence, stops_sentence
from perfdsl.stats.sequential import planned
from perfdsl.stats.sequential.boundary import half_width

RULE = StoppingRule(0.95, 0.02, 6, 400, RHO)
DIFFERS = " (**the evaluation's replay does not reach this stop**)"


def _stop(reason: str, verdict: str, pairs: int, ratio: float, sd: float) -> StopRecord:
    width = float(half_width(sd * sd, pairs, 0.95))
    mean = math.log(ratio)
    return StopRecord(RULE, pairs, reason, verdict, ratio, math.exp(mean - width), math.exp(mean + width), sd)


def test_the_rule_is_stated_with_its_window_and_band() -> None:
    timing = TimingPlan(10, 50, 10, 4, 0.95, 0.02, SEQUENTIAL, 6, 400)
    said = rule_sentence(timing)
    assert "from pair 6 on" in said and "at 400 pairs they stop inconclusive" in said
    assert "[0.9804, 1.020]" in said
    assert "fixed design, 10 blocks per arm" in rule_sentence(TimingPlan(10, 50, 10, 4, 0.95, 0.02))
    shared = rule_sentence(TimingPlan(10, 50, 10, 4, 0.95, 0.02, SEQUENTIAL, 6, 400, family=3))
    assert "the 98.33% interval, the study's 95% shared over its family of 3 comparisons" in shared


def test_each_stop_says_when_why_and_its_interval() -> None:
    decided = describe_stop(_stop(DECIDED, "slower", 9, 1.05, 0.01), True)
    assert decided.startswith("decided **slower** after 9 pairs, interval [1.0")
    open_ = describe_stop(_stop(OPEN, "inconclusive", 3, 1.0, 0.01), True)
    assert "measuring ended after 3 pairs" in open_


def test_a_stop_at_the_cap_says_what_would_have_decided_it() -> None:
    capped = _stop(CAP, "inconclusive", 400, 1.01, 0.1)
    needed = pairs_the_cap_lacked(capped)
    assert needed is not None
    # The interval at that count, around the same ratio and spread, fits inside the band.
    room = math.log1p(0.02) - math.log(1.01)
    assert float(half_width(0.01, needed, 0.95)) <= room < float(half_width(0.01, needed - 1, 0.95))
    said = describe_stop(capped, True, needed)
    assert said.startswith("reached the cap of 400 pairs **inconclusive**")
    assert f"about {needed} pairs would have decided it" in said
    assert pairs_the_cap_lacked(_stop(DECIDED, "slower", 9, 1.05, 0.01)) is None


def test_a_replay_that_differs_is_said() -> None:
    said = describe_stop(_stop(DECIDED, "faster", 7, 0.9, 0.01), False)
    assert "does not reach the run's recorded stop" in said


def test_the_first_page_says_when_and_why_every_comparison_stopped() -> None:
    stopped = [
        Stopped("`op` 64x64", _stop(DECIDED, "faster", 6, 0.5, 0.05), True),
        Stopped("`op` 128x128", _stop(DECIDED, "slower", 9, 1.05, 0.01), True),
        Stopped("`app` request time", _stop(DECIDED, "no meaningful change", 30, 1.0, 0.01), False),
        Stopped("`op` 256x256", _stop(CAP, "inconclusive", 400, 1.01, 0.1), True, 900),
    ]
    said = stops_sentence(RULE, stopped)
    assert said is not None
    assert said.startswith(
        "Measuring stopped by the registered sequential rule (looks from pair 6, cap 400 pairs): "
    )
    parts = said.removesuffix(".").split(": ", 1)[1].split("; ")
    assert parts[0].startswith("`op` 64x64 after 6 pairs, its interval [0.4")
    assert parts[0].endswith("wholly below the band: **faster**")
    assert parts[1].endswith("wholly above the band: **slower**")
    assert parts[2].endswith("wholly inside the band: **no meaningful change**" + DIFFERS)
    assert parts[3].startswith("`op` 256x256 at the cap, 400 pairs")
    assert parts[3].endswith("**inconclusive** (about 900 pairs would have decided it)")
    assert stops_sentence(RULE, []) is None


def test_planned_looks_are_stated_with_their_boundaries_and_the_cap_says_what_it_lacked() -> None:
    timing = TimingPlan(
        10,
        50,
        10,
        4,
        0.95,
        0.02,
        SEQUENTIAL,
        6,
        40,
        looks=(8, 16, 24, 32, 40),
        boundaries=(4.6, 3.2, 2.6, 2.3, 2.05),
    )
    said = rule_sentence(timing)
    assert "group-sequential" in said and "5 looks planned at block pairs 8 (4.60), 16 (3.20)" in said
    assert "computed for the cap of 40 pairs" in said and "Between looks nothing is decided" in said
    rule = timing.stopping
    assert rule is not None and rule.planned
    assert "looks planned at pairs 8, 16, 24, 32, 40" in stops_sentence(
        rule, [Stopped("`op`", _stop(DECIDED, "slower", 16, 1.05, 0.01), True)]
    )
    capped = StopRecord(rule, 40, CAP, "inconclusive", 1.01, 0.99, 1.03, 0.05)
    needed = pairs_the_cap_lacked(capped)
    # The final look's boundary at the count needed fits the room left to the band's edge.
    room = math.log1p(0.02) - math.log(1.01)
    assert planned.half_width(0.0025, needed, 2.05) <= room < planned.half_width(0.0025, needed - 1, 2.05)
