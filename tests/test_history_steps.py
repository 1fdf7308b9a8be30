"""`perfdsl history`'s change points: planted steps found at their commit, none beyond the stated rate.

The calibration test is a seeded simulation (pure numpy, no runs): 200 series
with no step, of 4 to 30 runs, each run's standard error drawn from a range
and, in two thirds of them, a spread between runs larger than the within-run
error. At a 5 % false-alarm rate about 10 of them may show a step; more than
15 would reject that rate (one-sided binomial test at 5 %). The bundle test
plants a 5 % step in the change's time at one commit of ten, with a newer
numba at that commit, through the real bundle writer.
"""

from __future__ import annotations

import math
from pathlib import Path

import attrs
import numpy as np
import pytest
from evaluate_fixtures import make_bundle, planted_environment

from perfdsl.history.runs import read_run
from perfdsl.history.steps import describe, operation_steps
from perfdsl.history.timeline import build_timeline
from perfdsl.stats.change_points import find_steps

SERIES = 200
MOST_FALSE_ALARMS = 15
"""The largest count of 200 that a one-sided binomial test at 5 % does not call above a 5 % rate."""


def _null_series(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    runs = 4 + seed % 27
    tau = (0.0, 0.005, 0.02)[seed % 3]
    se = rng.uniform(0.002, 0.008, runs)
    return np.log(0.8) + rng.standard_normal(runs) * np.sqrt(se**2 + tau**2), se


@pytest.mark.slow  # calibrates: 200 seeded series
def test_series_without_a_step_show_one_at_most_at_the_stated_rate() -> None:
    alarms = sum(bool(find_steps(*_null_series(seed), seed=seed).steps) for seed in range(SERIES))
    assert alarms <= MOST_FALSE_ALARMS, f"{alarms} of {SERIES} series without a step showed one"


@pytest.mark.parametrize("at", [1, 4, 6, 11])
def test_a_planted_five_percent_step_is_found_at_its_run(at: int) -> None:
    rng = np.random.default_rng(at)
    se = rng.uniform(0.002, 0.004, 12)
    y = np.log(0.8) + rng.standard_normal(12) * se
    y[at:] += math.log(1.05)
    (step,) = find_steps(y, se).steps
    assert step.index == at
    assert 0.04 < step.relative < 0.06
    assert step.p_value <= 0.05


def test_runs_without_a_ratio_are_left_out_and_the_step_keeps_its_neighbours() -> None:
    # Run 3 (index 2) has no ratio; the step between runs 2 and 4 names every change between them.
    points = [(0.80, 0.795, 0.805, 0.95)] * 2 + [None] + [(0.84, 0.835, 0.845, 0.95)] * 5
    changes = [(), (), ("package numba: 0.68.1 -> 0.69.0",), ("GPU driver: 550.54 -> 560.28",)] + [()] * 4
    result = operation_steps("op", points, changes, threshold=0.01)
    (step,) = result.steps
    assert (step.previous, step.run) == (1, 3)
    assert step.changes == ("package numba: 0.68.1 -> 0.69.0", "GPU driver: 550.54 -> 560.28")
    assert result.left_out == (2,)
    (line,) = describe(result, [f"r{i}" for i in range(8)])
    assert "step +5.0%" in line and "between run 2 r1 and run 4 r3" in line
    assert line.endswith("coincides with: package numba: 0.68.1 -> 0.69.0; GPU driver: 550.54 -> 560.28")


def test_a_step_below_the_practical_threshold_says_so() -> None:
    points = [(0.800, 0.799, 0.801, 0.95)] * 5 + [(0.804, 0.803, 0.805, 0.95)] * 5
    result = operation_steps("op", points, [()] * 10, threshold=0.01)
    assert len(result.steps) == 1
    (line,) = describe(result, [f"r{i}" for i in range(10)])
    assert "step +0.5%" in line and line.endswith("smaller than the practical threshold (1.0%)")


def test_too_few_runs_say_so() -> None:
    result = operation_steps("op", [(0.8, 0.79, 0.81, 0.95), None], [(), ()], threshold=0.01)
    assert result.steps == ()
    assert describe(result, ["a", "b"], [None, "every shape is invalid"]) == [
        "`op`: 1 run with a ratio (run 2 b: every shape is invalid): a step needs 3 to be searched for"
    ]


def _series(root: Path, name: str, ratios: list[float], numba_from: int) -> list[Path]:
    paths = []
    for i, ratio in enumerate(ratios):
        commit = "0123456789"[i]
        numba = "0.69.0" if i >= numba_from else "0.68.1"
        paths.append(
            make_bundle(
                root / name / commit,
                seed=100 + i,
                kernel_ratio=ratio,
                environment=planted_environment(numba, commit),
                run_id=f"20261201T{i:02d}0000Z-{commit * 6}",
            )
        )
    return paths


@pytest.mark.slow  # twenty planted bundles, each evaluated from its raw samples
def test_history_finds_a_planted_step_at_its_commit_and_names_the_change(tmp_path: Path) -> None:
    from datetime import UTC, datetime

    from perfdsl.history.page import render_page

    stepped = build_timeline([read_run(p) for p in _series(tmp_path, "step", [0.8] * 6 + [0.84] * 4, 6)])
    (found,) = stepped.steps
    (step,) = found.steps
    assert (step.previous, step.run) == (5, 6)
    assert stepped.entries[step.run].run.environment.short_commit == "6666666666"
    assert step.changes == ("package numba: 0.68.1 -> 0.69.0",)
    assert 0.04 < step.relative < 0.06
    page = render_page(stepped, "planted", datetime.now(UTC))
    assert page.count(f"step {step.relative:+.1%}") >= 3  # the figure's marker, the note and the table
    assert "coincides with: package numba: 0.68.1 -&gt; 0.69.0" in page

    flat = build_timeline([read_run(p) for p in _series(tmp_path, "flat", [0.8] * 10, 10)])
    assert flat.steps[0].steps == ()
    assert describe(flat.steps[0], [e.run.label for e in flat.entries]) == [
        "`op`: no step over 10 runs (5% false-alarm rate over the series)"
    ]


def test_the_false_alarm_rate_option_reads_a_rate_and_refuses_others() -> None:
    import argparse

    from perfdsl.commands.history import _rate

    assert (_rate("5%"), _rate("0.01")) == (0.05, 0.01)
    for bad in ("0", "0.9", "often", "-1%"):
        with pytest.raises(argparse.ArgumentTypeError, match="rate"):
            _rate(bad)


def test_a_quick_run_is_left_out_of_a_series_of_full_runs(tmp_path: Path) -> None:
    """Its smoke settings (other shapes, few blocks) against full runs' would read as a step."""
    full = [
        read_run(make_bundle(tmp_path / f"f{i}", seed=i, run_id=f"20261201T0{i}0000Z-aaaaa{i}"))
        for i in (1, 2)
    ]
    quick = read_run(make_bundle(tmp_path / "q", seed=3, run_id="20261201T000000Z-cccccc"))
    quick = attrs.evolve(quick, evaluation=attrs.evolve(quick.evaluation, quick=True))
    timeline = build_timeline([quick, *full])
    (steps,) = timeline.steps
    assert steps.left_out == (0,)
    assert timeline.missing_of("op")[0] == "a quick (smoke) run, left out of a series of full runs"
    (line,) = describe(steps, [e.run.label for e in timeline.entries], timeline.missing_of("op"))
    assert "left out of a series of full runs" in line
