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

from perfdsl.parse import parse
from perfdsl.plan import plan
from perfdsl.runtime.calibration import calibrate_arms, calibrate_requests
from perfdsl.runtime.estimate import estimate_run, step_key, step_keys
from perfdsl.runtime.progress import RunProgress, duration
from perfdsl.runtime.targets import make_target
from perfdsl.runtime.timing import Arm
from perfdsl.source import Source


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
    assert "block 2/2 (change), 2 done, about 0 s left" in text
    quiet = io.StringIO()
    silent = RunProgress(quiet, quiet=True, live=False)
    silent("a step")
    silent.blocks("op 64x4096", ("baseline",))()
    assert quiet.getvalue() == ""


def test_calibration_times_calls_after_an_untimed_one() -> None:
    target = make_target("cpu")
    counted = []

    def slow() -> None:
        counted.append(1)
        time.sleep(0.01)

    arm = Arm("slow", (slow,))
    assert calibrate_arms(target, [arm])["slow"] >= 0.01
    assert len(counted) == 4
    assert calibrate_requests({"baseline": lambda: time.sleep(0.01)})["baseline"] >= 0.01
