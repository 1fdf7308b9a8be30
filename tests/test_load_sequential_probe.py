"""A load probe decided sequentially: the generator stops at a window, the bundle keeps every
request, and the evaluation reaches the run's own decision from the recorded latencies.

Service times are `time.sleep`; the planted latencies (a no-op against a 1 s SLO, or 10 ms
against 3 ms) are far from the SLO, so which decision the rule makes never depends on this
machine's speed (a busy machine's wake-ups reach tens of milliseconds: near a 25 ms SLO they
would decide it).
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from types import SimpleNamespace

import attrs
import numpy as np

from perfdsl.bundle.files import BundleWriter
from perfdsl.bundle.load import LoadRecord, read_probe_csv
from perfdsl.bundle.plan import LoadPlan
from perfdsl.bundle.stopping import ProbeRule
from perfdsl.evaluate.load_curve import evaluate_load
from perfdsl.probe_size import sequential_clean
from perfdsl.runtime import load_search
from perfdsl.runtime.load_generator import NOT_COMPLETED, _served_prefix, run_open_loop
from perfdsl.stats.load import sequential_stop, summarize_rate
from perfdsl.stats.sequential.proportion import decide, look_points, rule_for

SLO = 0.025


def test_a_pass_without_a_miss_needs_644_independent_requests() -> None:
    """The one-shot binomial passes at 459; looking after every window costs 1.40x."""
    rule = rule_for(0.99, 5000)
    assert sequential_clean(0.99, 0.99) == 644
    assert decide(np.full(643, 1e-3), SLO, attrs.evolve(rule, window=643)).decision == "open"
    assert decide(np.full(644, 1e-3), SLO, attrs.evolve(rule, window=644)).decision == "pass"


def test_the_looks_are_every_window_and_the_last_request() -> None:
    rule = rule_for(0.99, 2000)
    assert look_points(2500, rule) == [*range(100, 2000, 100), 2000]
    assert look_points(644, rule) == [100, 200, 300, 400, 500, 600, 644]
    assert look_points(0, rule) == []


def test_a_probe_stops_at_the_first_decided_window() -> None:
    rule = rule_for(0.99, 2000)
    fast = decide(np.full(2000, 1e-3), SLO, rule)
    assert (fast.decision, fast.requests) == ("pass", 700)
    slow = decide(np.full(2000, 0.06), SLO, rule)
    assert (slow.decision, slow.requests) == ("fail", 100)
    # Misses at exactly the stated rate never decide either way: open at the cap.
    edge = np.full(2000, 1e-3)
    edge[::100] = 0.06
    assert decide(edge, SLO, rule).decision == "open"


def _sleeper(seconds: float):
    return lambda: time.sleep(seconds)


def test_the_generator_stops_at_a_window_and_records_every_request_it_served() -> None:
    """A stop after the second window: the dispatcher issues no more than it had when the
    monitor answered, and every request served is in the record, completed."""
    asked: list[int] = []

    def stop(scheduled_ns: np.ndarray, completed_ns: np.ndarray, ok: np.ndarray) -> bool:
        asked.append(scheduled_ns.size)
        assert np.all(completed_ns >= scheduled_ns) and ok.all()
        return scheduled_ns.size >= 40

    run = run_open_loop(
        _sleeper(1e-3), 400.0, count=400, warmup=10, duration_s=5.0, seed=3, window=20, stop=stop
    )
    assert asked == [20, 40]
    assert run.stopped and not run.truncated
    assert 40 <= run.scheduled_ns.size < 400
    assert np.all(run.issued_ns >= 0) and run.ok.all() and np.all(run.completed_ns > 0)


def test_a_probe_that_is_never_decided_runs_its_whole_schedule() -> None:
    run = run_open_loop(
        _sleeper(0), 2000.0, count=60, duration_s=5.0, seed=1, window=25, stop=lambda *_: False
    )
    assert run.scheduled_ns.size == 60 and not run.stopped


def test_a_stopped_record_ends_before_the_first_request_never_begun() -> None:
    """Two workers: one may begin a later request than one the other skipped once the probe
    was decided; the record ends at the gap, rather than count the skipped one as a miss."""
    started = np.array([5, 6, 7, 8, NOT_COMPLETED, 9, NOT_COMPLETED])
    assert _served_prefix(started, warmup=2, sent=7) == 4
    assert _served_prefix(started[:4], warmup=2, sent=4) == 4


def _bundle_of_probes(
    tmp_path: Path, service_s: float, rate: float, slo: float, window: int = 0, repeats: int = 2
) -> tuple[Path, LoadRecord, list]:
    """Probes at one rate (fresh schedules) through the real generator and bundle writer, as
    `search_load` runs them."""
    plan = LoadPlan("poisson", (rate,), 700, slo, 0.99)
    rule = load_search.probe_rule(plan)
    rule = attrs.evolve(rule, window=window or rule.window)
    count, warmup = load_search.probe_count(plan)
    probes = []
    for index in range(repeats):
        run = run_open_loop(
            _sleeper(service_s),
            rate,
            count=count,
            warmup=warmup,
            seed=load_search.schedule_seed(index),
            duration_s=30.0,
            window=rule.window,
            stop=sequential_stop(slo, rule),
        )
        scheduled, issued, _, completed = run.seconds()
        result = summarize_rate(rate, scheduled, issued, completed, slo, run.ok, rule)
        lag = load_search.GeneratorLagRecord(**attrs.asdict(result.generator))
        probes.append(
            (
                result,
                load_search.LoadProbe(
                    "baseline", index, rate, "sweep", run, lag, result.decision, result.decided_at
                ),
            )
        )
    with BundleWriter(tmp_path, "study") as bundle:
        entries = []
        for _, probe in probes:
            entry, requests = load_search.probe_record(probe)
            bundle.write_csv(requests.path, *requests.rows())
            entries.append(entry)
        load = LoadRecord("poisson", 0, slo, 0.99, tuple(entries), probe_rule=rule)
        bundle.write_json("load.json", load.to_json())
    return bundle.path, load, [result for result, _ in probes]


def rule_window(load: LoadRecord) -> int:
    assert load.probe_rule is not None
    return load.probe_rule.window


def test_evaluate_recomputes_each_probe_decision_bit_for_bit(tmp_path: Path) -> None:
    path, load, results = _bundle_of_probes(tmp_path, 0.0, 1000.0, 1.0)
    read = LoadRecord.from_json(json.loads((path / "load.json").read_text()))
    assert read == load
    evaluation = evaluate_load(SimpleNamespace(path=path), read)  # type: ignore[arg-type]
    baseline = next(g for g in evaluation.arms if g.arm == "baseline")
    again = sorted((p.index, p.result) for p in baseline.curve)
    for (index, result), run_result, record in zip(again, results, read.probes, strict=True):
        assert result == run_result, index  # every field, the floats to the bit
        assert (record.decision, record.decided_at) == (result.decision, result.decided_at)
        # Far inside the SLO the probe passes at a look: the first it can (700 requests) when its
        # latencies already hold enough independent stretches, a later one on a machine whose
        # timing drifted (a fresh-clone run passed at 900). Which look is the machine's; that the
        # evaluation reaches the same one, bit for bit, is the test.
        assert result.decision == "pass" and result.decided_at is not None
        assert result.decided_at >= 700 and result.decided_at % rule_window(read) == 0
        recorded = read_probe_csv(path / record.records)["scheduled_ns"].size
        assert result.n == recorded >= result.decided_at  # those in flight at the deciding look too
    assert evaluation.probe_rule == load.probe_rule


def test_an_overloaded_probe_fails_in_its_first_windows_and_leaves_its_queue_unserved(
    tmp_path: Path,
) -> None:
    """Five times the server's capacity: the first window of 20 decides. By then about 250
    requests had been issued; the one in service finishes and the queue is never served
    (serving it would take the rest of a second and decide nothing)."""
    path, load, results = _bundle_of_probes(tmp_path, 0.01, 500.0, 0.003, window=20, repeats=1)
    evaluation = evaluate_load(SimpleNamespace(path=path), load)  # type: ignore[arg-type]
    again = sorted((p.index, p.result) for p in evaluation.arms[0].curve)
    for (_, result), run_result in zip(again, results, strict=True):
        assert result == run_result
        assert result.decision == "fail" and result.decided_at == 20 and not result.p99_ok
        # The deciding window and what was in service as the monitor answered: a few requests
        # on a busy machine (the monitor polls every millisecond), never the queue of ~250.
        assert 20 <= result.n <= 25, result.n


def test_a_bundle_before_the_sequential_rule_is_evaluated_by_the_fixed_probe(tmp_path: Path) -> None:
    """results/9 and earlier: no `probe_rule`, no per-probe decision; the fixed binomial over
    every request decides, as it did when that bundle was run."""
    path, load, _ = _bundle_of_probes(tmp_path, 0.0, 1000.0, 1.0, repeats=1)
    data = load.to_json()
    del data["probe_rule"]
    for probe in data["probes"]:
        del probe["decision"], probe["decided_at"]
    old = LoadRecord.from_json(data)
    assert old.probe_rule is None and all(p.decision is None for p in old.probes)
    evaluation = evaluate_load(SimpleNamespace(path=path), old)  # type: ignore[arg-type]
    for point in next(g for g in evaluation.arms if g.arm == "baseline").curve:
        assert point.result is not None and point.result.decision is None
        assert point.result.p99_ok  # 700 requests without a miss pass the one-shot test (459)
    assert evaluation.probe_rule is None


def test_the_rule_survives_its_json() -> None:
    rule = rule_for(0.99, 2000)
    assert ProbeRule.from_json(json.loads(json.dumps(rule.to_json()))) == rule
