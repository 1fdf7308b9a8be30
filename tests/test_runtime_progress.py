"""The run's progress: the estimate from the plan and calibration calls, and the plain and live views.

The display is driven by a fake clock, so what it prints is exact; the
estimate is checked against the plan's arithmetic, and calibration against
calls whose least duration is known (a sleep lasts at least its argument).
"""

from __future__ import annotations

import io
import time

import attrs
import pytest
from evaluate_fixtures import study_text

from perfdsl.bundle.stopping import RHO, StoppingRule
from perfdsl.parse import parse
from perfdsl.plan import plan
from perfdsl.runtime.calibration import calibrate_arms, calibrate_requests
from perfdsl.runtime.estimate import estimate_run, step_key, step_keys
from perfdsl.runtime.progress import RunProgress, duration
from perfdsl.runtime.targets import make_target
from perfdsl.runtime.timing import Arm, block_order
from perfdsl.source import Source
from perfdsl.stats.sequential.rule import Look, pairs_to_decide


@pytest.fixture(scope="module")
def tiny():
    """The planted study's plan (two shapes, an application, a load test), cut to 4 blocks of 5 calls."""
    study = parse(Source("study.perf", study_text(["op.time ratio <= 0.9"]))).study
    planned = plan(study, "cpu", quick=False)
    return attrs.evolve(planned, timing=attrs.evolve(planned.timing, warmup=10, repeats=5, blocks=4))


def test_estimate_is_the_plans_calls_times_the_calibrated_time(tiny) -> None:
    keys = step_keys(tiny)
    assert keys == ["op 64x4096", "op 256x1024"]
    calls = {keys[0]: {"baseline": 0.002, "change": 0.001}, keys[1]: {"baseline": 0.004, "change": 0.002}}
    estimate = estimate_run(tiny, calls, {"baseline": 0.01, "change": 0.01}, 1200.0, 0.1)
    # Shape 1: warm-up max(0.2 s, 10 x 0.003 s) = 0.2 s; blocks 4 x (5 x 0.002 + 0.1) + 4 x (5 x 0.001 + 0.1).
    first = 0.2 + 4 * (5 * 0.002 + 0.1) + 4 * (5 * 0.001 + 0.1)
    second = 0.2 + 4 * (5 * 0.004 + 0.1) + 4 * (5 * 0.002 + 0.1)
    # Requests: warm-up max(0.1 s, 5 x 0.02 s); 4 blocks of max(3, 5 // 5, 10 ms / 10 ms) = 3 per
    # arm; 0.5 s / 0.01 s = 50 share requests per arm.
    application = 0.1 + 2 * 4 * (3 * 0.01 + 0.1) + 50 * 0.02
    assert [s.seconds for s in estimate.steps] == pytest.approx([first, second, application])
    assert estimate.seconds == pytest.approx(first + second + application)
    assert estimate.load_budget_s == 2400.0


def test_a_long_run_is_announced_with_a_warning(tiny) -> None:
    keys = step_keys(tiny)
    long = estimate_run(tiny, {k: {"baseline": 10.0, "change": 10.0} for k in keys}, None, 60.0, 0.0)
    short = estimate_run(tiny, {k: {"baseline": 1e-4, "change": 1e-4} for k in keys}, None, 60.0, 0.0)
    for estimate, warned in ((long, True), (short, False)):
        out = io.StringIO()
        RunProgress(out, live=False).announce(estimate)
        lines = out.getvalue().splitlines()
        assert lines[0].startswith(f"  estimated measuring time: {duration(estimate.seconds)}")
        assert any(line.startswith("  warning: this run is long") for line in lines) == warned
    assert duration(long.seconds) == "20 min"  # per shape: 200 s warm-up, 2 x 4 x 5 calls of 10 s


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_when_not_a_terminal(tiny) -> None:
    out, clock = io.StringIO(), _Clock()
    progress = RunProgress(out, live=False, interval_s=30.0, clock=clock)
    keys = step_keys(tiny)
    progress.announce(estimate_run(tiny, {k: {"baseline": 0.5, "change": 0.5} for k in keys}, None, 0, 0))
    out.truncate(0), out.seek(0)
    hook = progress.blocks(keys[0], ("baseline", "change", "change", "baseline"))
    for _ in range(4):
        hook()  # a block starts
        clock.now += 20.0
        hook()  # and ends, 20 s later
    lines = out.getvalue().splitlines()
    assert "\r" not in out.getvalue()
    # Estimated 30 s a step (10 s warm-up, 2 arms x 4 blocks x 5 calls of 0.5 s). Lines: the first block;
    # then at most one per 30 s (blocks end at 20, 40, 60, 80 s: one at 40 s); then the last block, when the
    # step took 80 s of its 30, so the next step's 30 s is scaled to 80 s.
    assert lines == [
        "  op 64x4096: block 1/4 (baseline), 0 done, about 60 s left",
        "  op 64x4096: block 2/4 (change), 2 done, about 70 s left",
        "  op 64x4096: block 4/4 (baseline), 4 done, about 80 s left",
    ]


def test_live_view_rewrites_one_line_and_quiet_says_nothing(tiny) -> None:
    out, clock = io.StringIO(), _Clock()
    progress = RunProgress(out, live=True, clock=clock)
    hook = progress.blocks(step_key("op", "64x4096"), ("baseline", "change"))
    for _ in range(4):
        hook()
        clock.now += 1.0
    progress("writing manifest")
    text = out.getvalue()
    assert text.count("\r\x1b[K") == 5
    assert text.count("\n") == 1 and text.endswith("\r\x1b[K  writing manifest\n")
    assert "block 2/2 (change), 2 done, under 1 s left" in text
    quiet = io.StringIO()
    silent = RunProgress(quiet, quiet=True, live=False)
    silent("a step")
    silent.blocks("op 64x4096", ("baseline",))()
    assert quiet.getvalue() == ""


def _sequential_line(ratio: float, sd_log: float, needed: int | None = None) -> str:
    """The line at the 17th block of a sequential step capped at 40 pairs, after 8 pairs of 1 s
    blocks (2 s a pair), whose latest look is open at `ratio` and `sd_log`; `needed` overrides
    the pairs the look would stop at."""
    rule = StoppingRule(0.95, 0.02, 6, 40, RHO)
    out, clock = io.StringIO(), _Clock()
    progress = RunProgress(out, live=False, interval_s=0.0, clock=clock)
    hook = progress.blocks("op 64x4096", block_order(("baseline", "change"), rule.max_pairs))
    for _ in range(16):
        hook()
        clock.now += 1.0
        hook()
    current = Look(8, ratio, ratio * 0.9, ratio / 0.9, sd_log, "inconclusive", 1.0)
    progress.look("op 64x4096", current, pairs_to_decide(current, rule) if needed is None else needed)
    hook()
    return out.getvalue().splitlines()[-1]


def test_a_sequential_steps_time_left_follows_its_spread() -> None:
    """The pairs the current spread still needs, at the measured 2 s a pair: a wider spread, a
    longer wait; an estimate on the band's edge, the cap's 32 pairs; and never more than the cap's."""
    narrow, wide = _sequential_line(1.0, 0.01), _sequential_line(1.0, 0.02)
    assert narrow.startswith(
        "  op 64x4096: block 17/80 (baseline), 16 done, open after 8 pairs, interval [0.9, 1.111]"
    )
    assert narrow.endswith("; about 2 s left, if the spread holds")  # 9 pairs at this spread
    assert wide.endswith("; about 12 s left, if the spread holds")  # 14 pairs
    assert _sequential_line(1.02, 0.01).endswith("about 64 s left, if the spread holds")
    assert _sequential_line(1.0, 0.01, needed=10_000).endswith("about 64 s left, if the spread holds")


def test_calibration_times_calls_after_an_untimed_one() -> None:
    target = make_target("cpu")
    counted = []

    def slow() -> None:
        counted.append(1)
        time.sleep(0.01)

    arm = Arm("slow", (slow,))
    assert calibrate_arms(target, [arm])[0]["slow"] >= 0.01
    assert len(counted) == 4
    assert calibrate_requests({"baseline": lambda: time.sleep(0.01)})[0]["baseline"] >= 0.01


def test_a_long_load_search_is_warned_of_before_it_starts(tiny) -> None:
    # A new user's load search stepped to 12.5 rps, probes of a minute each, after 47 s of kernels.
    keys = step_keys(tiny)
    calls = {k: {"baseline": 1e-4, "change": 1e-4} for k in keys}

    def warnings(budget_s: float) -> list[str]:
        out = io.StringIO()
        requests = {"baseline": 0.01, "change": 0.01}
        RunProgress(out, live=False).announce(estimate_run(tiny, calls, requests, budget_s / 2, 0.0))
        return [line for line in out.getvalue().splitlines() if "warning: the load search may take" in line]

    (said,) = warnings(960.0)
    assert "up to 16 min" in said and "a higher lowest rate in `load`" in said
    assert warnings(120.0) == []
