"""A registered prediction's bound keeps the comparison it rests on measuring.

The sequential rule stops a comparison when its interval is decided against
the practical band. A prediction `normalize.time ratio <= 0.7` is judged on
the same interval, so a stop decided against the band at [0.34, 0.74] left the
prediction inconclusive: `make report` printed exactly that. The rule's
`edges` keep such a comparison open while its interval straddles a bound;
here through the rule itself, the plan that registers the bounds, the
evaluation's replay and the report's sentence.
"""

from __future__ import annotations

import math
from pathlib import Path

import attrs
import numpy as np
from stats_simulation import watched_and_replayed

from perfdsl.bundle.stopping import CAP, DECIDED, RHO, StoppingRule
from perfdsl.evaluate.sequential import pairs_the_cap_lacked
from perfdsl.parse import parse
from perfdsl.plan import plan
from perfdsl.report.stopping import Stopped, describe_stop, held_open, rule_sentence, stops_sentence
from perfdsl.runtime.progress import stop_summary
from perfdsl.source import Source
from perfdsl.stats.sequential.rule import look, pairs_to_decide, replay

ROOT = Path(__file__).resolve().parents[1]


def _rule(edges: tuple[float, ...] = (), max_pairs: int = 100) -> StoppingRule:
    return StoppingRule(0.95, 0.01, 6, max_pairs, RHO, edges=edges)


def _halved(pairs: int, noise: float = 0.25, seed: int = 3) -> np.ndarray:
    """Pair log-ratios of a change that halves the time, with a wide spread between pairs."""
    return math.log(0.5) + noise * np.random.default_rng(seed).standard_normal(pairs)


def test_a_bound_inside_the_interval_keeps_a_decided_comparison_open() -> None:
    d = _halved(100)
    plain = replay(d, _rule())
    assert plain is not None and plain.reason == DECIDED and plain.verdict == "faster"
    # The band alone stops it while the interval still reaches past 0.7 (as the demo's did).
    assert plain.low < 0.7 < plain.high
    held = replay(d, _rule(edges=(0.7,)))
    assert held is not None and held.reason == DECIDED and held.verdict == "faster"
    assert held.pairs > plain.pairs and held.high < 0.7
    # Every look in between was decided against the band and straddled the bound.
    for t in range(plain.pairs, held.pairs):
        current = look(d[:t], held.rule)
        assert current.verdict == "faster" and current.low < 0.7 < current.high


def test_a_bound_the_interval_never_clears_ends_at_the_cap_with_the_bands_verdict() -> None:
    d = math.log(0.7) + 0.05 * np.random.default_rng(5).standard_normal(30)
    stop = replay(d, _rule(edges=(0.7,), max_pairs=30))
    assert stop is not None and (stop.reason, stop.pairs, stop.verdict) == (CAP, 30, "faster")
    needed = pairs_the_cap_lacked(stop)
    assert needed is not None and needed > 30
    assert "still across the prediction bound 0.7" in describe_stop(stop, True, needed)
    assert "still across the prediction bound 0.7" in stop_summary(stop)
    brief = stops_sentence(stop.rule, [Stopped("`normalize` 2048x4096", stop, True, needed)])
    assert brief is not None and "but across the prediction bound 0.7: **faster**" in brief
    assert "inconclusive" not in brief


def test_a_bound_outside_the_interval_changes_nothing() -> None:
    d = _halved(100, noise=0.02)
    assert (
        replay(d, _rule(edges=(0.9,))).to_json()
        == attrs.evolve(replay(d, _rule()), rule=_rule(edges=(0.9,))).to_json()
    )


def test_the_time_left_counts_the_pairs_the_bound_needs() -> None:
    d = _halved(6, noise=0.15)
    current = look(d, _rule())
    assert current.verdict == "faster" and current.low < 0.7 < current.high
    assert pairs_to_decide(current, _rule(edges=(0.7,))) > pairs_to_decide(current, _rule())


def test_the_sampler_stops_where_the_evaluation_replays_it() -> None:
    recorded, replayed = watched_and_replayed(_rule(edges=(0.7,)), _halved(100))
    assert recorded.to_json() == replayed.to_json() and "edges" in recorded.to_json()["rule"]


STUDY = (ROOT / "studies" / "rmsnorm_cpu.perf").read_text(encoding="utf-8")


def test_the_plan_registers_each_comparisons_numeric_time_bounds_under_the_sequential_rule() -> None:
    study = parse(Source(str(ROOT / "studies" / "rmsnorm_cpu.perf"), STUDY)).study
    assert study is not None
    planned = plan(study, "cpu", quick=False)
    assert planned.timing.stop == "sequential"
    (operation,) = planned.operations
    # `normalize.time ratio <= 0.7`; `decode_step.time ratio <= amdahl` is measured, so no edge.
    assert operation.stop_edges == (0.7,)
    assert planned.application is not None and planned.application.stop_edges == ()
    assert planned.timing.stopping_for(operation.stop_edges).edges == (0.7,)
    assert held_open(planned) == ["`normalize` shapes at 0.7"]
    assert "straddles the numeric bound" in rule_sentence(planned.timing, held_open(planned))


def test_a_fixed_design_registers_no_bounds() -> None:
    fixed = STUDY.replace("stop sequential", "stop fixed")
    assert fixed != STUDY
    study = parse(Source("fixed.perf", fixed)).study
    assert study is not None
    planned = plan(study, "cpu", quick=False)
    assert planned.timing.stop == "fixed" and planned.operations[0].stop_edges == ()
    assert "stop_edges" not in planned.to_json()["operations"][0]
