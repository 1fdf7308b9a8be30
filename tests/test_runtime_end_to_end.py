"""How the application's request timing and share pass are sized and ordered (no timing asserted)."""

from __future__ import annotations

import numpy as np

from perfdsl.kernel import Application, Variant
from perfdsl.runtime.end_to_end import SHARE_ROUNDS, OpTimer, build_requests, measure_share
from perfdsl.runtime.settings import SHARE_REQUESTS, request_repeats, share_requests
from perfdsl.runtime.targets import make_target


def test_a_block_of_short_requests_spans_ten_milliseconds() -> None:
    assert request_repeats(10, 0.00045) == 23  # ceil(10 ms / 0.45 ms)
    # Requests of several milliseconds keep a fifth of the kernels' repeats, at least 3.
    assert request_repeats(10, 0.005) == 3
    assert request_repeats(100, 0.005) == 20


def test_the_share_pass_lasts_half_a_second_per_arm_unless_quick() -> None:
    assert share_requests(0.0005, quick=False) == 1000
    assert share_requests(0.1, quick=False) == SHARE_REQUESTS
    assert share_requests(0.0005, quick=True) == 5


def test_the_share_pass_alternates_the_arms_on_the_timed_requests() -> None:
    order: list[str] = []

    def prepare(ctx):
        x = np.ones(4, np.float32)

        def request():
            ctx.op(x=x)
            return x

        return request

    variants = {
        arm: Variant(name=arm, cpu=lambda x, arm=arm: order.append(arm)) for arm in ("baseline", "change")
    }
    timers: dict[str, OpTimer] = {}
    requests = build_requests(
        Application("app", prepare), make_target("cpu"), variants, {"N": 4}, np.float32, timers
    )
    for request in requests.values():
        request()  # as the request time runs them: the timers are off
    assert [t.spent for t in timers.values()] == [[], []]
    shares = measure_share(requests, timers, 40)
    assert [len(s.op_ns) for s in shares.values()] == [40, 40]
    assert not any(t.on for t in timers.values()) and [len(t.spent) for t in timers.values()] == [40, 40]
    # SHARE_ROUNDS turns of 40 / SHARE_ROUNDS requests per arm, after the two untimed ones.
    timed = order[2:]
    turns = [timed[i : i + 40 // SHARE_ROUNDS] for i in range(0, len(timed), 40 // SHARE_ROUNDS)]
    assert [set(t) for t in turns] == [{"baseline"}, {"change"}] * SHARE_ROUNDS
