"""An application's request prepared afresh before each block, share round and load probe.

Where a request's arrays land moved one matmul of decode_step by 5-10 % between
preparations (`runtime.preparation`), so one preparation per arm would make that
placement the change's. These tests check the bookkeeping only (which
preparation served which request, how often one is made); nothing here times.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from perfdsl.bundle.application import ApplicationRecord
from perfdsl.bundle.sampling import TimingSettings
from perfdsl.kernel import Application, Variant
from perfdsl.runtime import preparation
from perfdsl.runtime.end_to_end import OpTimer, build_requests, measure_share
from perfdsl.runtime.preparation import RENEW_SHARE, WARM_CALLS, PreparedRequest
from perfdsl.runtime.targets import Target, make_target
from perfdsl.runtime.timing import Arm, sample


class Clock:
    """A clock the test moves: `advance` between blocks, `cost` per preparation."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def counting(clock: Clock, cost: float, served: list[int]):
    """A prepare() that costs `cost` of the clock, whose request appends its preparation's number."""
    made = itertools.count()

    def prepare():
        number = next(made)
        clock.now += cost

        def request() -> int:
            served.append(number)
            return number

        return request

    return prepare


def test_a_cheap_preparation_is_made_afresh_at_every_renewal_and_warmed_up() -> None:
    clock, served = Clock(), []
    request = PreparedRequest(counting(clock, 0.001, served), clock)
    for _ in range(5):
        request.renew()
        clock.now += 0.010  # a block of 10 ms
        request()
    assert request.preparations == 6
    # After each renewal, its warm-up calls, then the block's request, all on the new preparation.
    assert served == [n for n in range(1, 6) for _ in range(WARM_CALLS + 1)]


def test_an_expensive_preparation_is_renewed_only_within_its_share_of_the_time() -> None:
    clock, served = Clock(), []
    request = PreparedRequest(counting(clock, 0.050, served), clock)  # 50 ms to prepare, 10 ms blocks
    for _ in range(100):
        request.renew()
        clock.now += 0.010
    elapsed = clock.now
    preparing = 0.050 * request.preparations
    assert 2 < request.preparations < 100
    # Within the share, give or take the one preparation that starts a renewal.
    assert preparing <= RENEW_SHARE * elapsed + 0.050 * 2


def test_the_sampler_renews_an_arm_before_each_of_its_blocks_outside_the_timed_calls() -> None:
    log: list[str] = []

    def arm(name: str) -> Arm:
        return Arm(name, (lambda: log.append(name),), renew=lambda: log.append(f"renew {name}"))

    settings = TimingSettings(warmup_calls=2, warmup_ms=0.0, repeats=3, blocks=4)
    record = sample(Target(), [arm("A"), arm("B")], settings)
    assert [log.count("renew A"), log.count("renew B")] == [4, 4]
    # Each renewal comes right before its arm's block: the block's calls are all after it.
    timed = log[log.index("renew A") :]
    for block in record.timing.blocks:
        at = timed.index(f"renew {block.arm}")
        assert timed[at + 1 : at + 1 + settings.repeats] == [block.arm] * settings.repeats
        timed = timed[at + 1 + settings.repeats :]


def test_a_preparation_that_raises_stops_its_arm_with_the_error_recorded() -> None:
    calls = {"renewals": 0}

    def failing_renew() -> None:
        calls["renewals"] += 1
        if calls["renewals"] == 2:
            raise MemoryError("no room for a second preparation")

    settings = TimingSettings(warmup_calls=1, warmup_ms=0.0, repeats=2, blocks=3)
    record = sample(
        Target(), [Arm("A", (lambda: None,), renew=failing_renew), Arm("B", (lambda: None,))], settings
    )
    (failure,) = record.timing.failures
    assert (failure.arm, failure.phase, failure.position) == ("A", "block", None)
    assert "MemoryError: no room for a second preparation" in failure.message
    assert [b.arm for b in record.timing.blocks].count("A") == 1


def test_each_share_round_runs_on_a_fresh_preparation_of_its_arm(monkeypatch) -> None:
    # Requests of microseconds: the budget would space the renewals out; this test lifts it.
    monkeypatch.setattr(preparation, "RENEW_SHARE", math.inf)
    timers: dict[str, OpTimer] = {}
    served: dict[str, list[int]] = {"baseline": [], "change": []}

    def prepare_for(arm: str):
        made = itertools.count()

        def prepare(ctx):
            number = next(made)
            x = np.ones(4, np.float32)

            def request() -> None:
                ctx.op(x=x)
                if timers[arm].on:  # the pass's own requests, not a renewal's warm-up calls
                    served[arm].append(number)

            return request

        return prepare

    requests = {}
    for arm in served:
        variants = {arm: Variant(name=arm, cpu=lambda x: None)}
        application = Application("app", prepare_for(arm))
        requests.update(
            build_requests(application, make_target("cpu"), variants, {"N": 4}, np.float32, timers)
        )
    shares = measure_share(requests, timers, 40)
    for arm, share in shares.items():
        pairs = list(zip(share.rounds, served[arm], strict=True))
        # One preparation per round, a different one each round, none of them the first.
        by_round = {r: {n for rr, n in pairs if rr == r} for r in set(share.rounds)}
        assert all(len(numbers) == 1 for numbers in by_round.values()), by_round
        assert sorted(n for numbers in by_round.values() for n in numbers) == list(range(1, 11))
        assert requests[arm].preparations == 11
    # The warm-up calls after each renewal are not in the pass's operation times.
    assert [len(s.op_ns) for s in shares.values()] == [40, 40]
    assert [len(t.spent) for t in timers.values()] == [40, 40]


def test_the_record_states_the_preparations_and_an_older_one_reads_as_none() -> None:
    record = ApplicationRecord(
        "app", "m:app", {"N": 4}, ("op",), None, preparations={"baseline": 12, "change": 12}
    )
    plain = record.to_json()
    assert plain["preparations"] == {"baseline": 12, "change": 12}
    assert ApplicationRecord.from_json(plain) == record
    older = {k: v for k, v in plain.items() if k != "preparations"}
    assert ApplicationRecord.from_json(older).preparations == {}
    assert "preparations" not in ApplicationRecord("app", "m:app", {"N": 4}, ("op",), None).to_json()


def test_the_report_says_how_many_preparations_each_arm_rests_on(tmp_path, monkeypatch) -> None:
    import attrs
    from evaluate_fixtures import make_bundle

    from perfdsl.bundle.evaluation.evaluation import Evaluation
    from perfdsl.bundle.opened import open_bundle
    from perfdsl.evaluate.evaluation import evaluate, write_evaluation
    from perfdsl.parse import parse
    from perfdsl.report.markdown import render_markdown
    from perfdsl.source import Source

    monkeypatch.chdir(tmp_path)
    path = make_bundle(tmp_path, predictions=["app.time ratio <= amdahl"])
    write_evaluation(open_bundle(path), evaluate(open_bundle(path)))
    opened = open_bundle(path)
    study = parse(Source("study.perf", opened.study_text)).study
    evaluation = Evaluation.read(path)
    assert opened.results.application is not None
    before, _ = render_markdown(study, evaluation, opened)
    assert "prepared afresh" not in before  # a bundle before results/12: one preparation per arm
    renewed = attrs.evolve(opened.results.application, preparations={"baseline": 34, "change": 27})
    after, _ = render_markdown(
        study, evaluation, attrs.evolve(opened, results=attrs.evolve(opened.results, application=renewed))
    )
    assert (
        "Each arm's request was prepared afresh before its request blocks, share rounds and load probes"
        in after
    )
    assert "(baseline 34 and change 27 preparations;" in after
