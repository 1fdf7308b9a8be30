"""The sampler under a sequential rule: it stops when the verdict is decided, keeps every block,
and the evaluation's replay from the sample CSV reaches the run's recorded stop bit for bit.

The target here returns planted durations (a seeded log-normal per arm) in
place of a clock, so the verdicts are known and nothing depends on the
machine's speed.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import attrs
import numpy as np
import pytest

from perfdsl.bundle.evaluation.kernels import Finding
from perfdsl.bundle.sampling import TimingSettings
from perfdsl.bundle.stopping import CAP, DECIDED, OPEN, RHO, StoppingRule, StopRecord
from perfdsl.evaluate.compare import compare_blocks
from perfdsl.evaluate.inputs import read_samples
from perfdsl.evaluate.sequential import agrees, decided_early, judged, recompute
from perfdsl.runtime.targets import Target, Timed
from perfdsl.runtime.timing import Arm, Sampled, sample
from perfdsl.stats.sequential.rule import Look, look, pairs_to_decide

pytestmark = pytest.mark.slow  # each test samples real kernels until the rule stops them (5-15 s)

RULE = StoppingRule(0.95, 0.02, 6, 200, RHO)


class PlantedTarget(Target):
    """The CPU target, with each call's duration the number the call returns."""

    def time(self, call: Callable[[], None]) -> Timed:
        return Timed(int(call()), True)  # type: ignore[func-returns-value]

    def empty_call(self) -> Callable[[], None]:
        return lambda: 10  # type: ignore[return-value]


def planted_arm(name: str, seed: int, scale: float, noise: float, fail_at: int | None = None) -> Arm:
    """Calls that each 'take' scale * 1e5 ns times a log-normal draw; the call fail_at raises."""
    rng = np.random.default_rng(seed)
    calls = [0]

    def call() -> int:
        calls[0] += 1
        if fail_at is not None and calls[0] >= fail_at:
            raise RuntimeError(f"{name} failed")
        return round(1e5 * scale * math.exp(noise * rng.standard_normal()))

    return Arm(name, (call,))


def _settings(rule: StoppingRule | None = RULE, blocks: int = RULE.max_pairs) -> TimingSettings:
    return TimingSettings(
        warmup_calls=2,
        warmup_ms=0.0,
        warmup_cap_calls=4,
        warmup_cap_ms=1.0,
        repeats=5,
        blocks=blocks,
        stopping=rule,
    )


def _run(effect: float, noise: float = 0.01, roof: bool = False, **kwargs) -> Sampled:
    arms = [planted_arm("baseline", 1, 1.0, noise), planted_arm("change", 2, 1.0 + effect, noise)]
    if roof:
        arms.append(planted_arm("copy", 3, 0.5, noise))
    return sample(PlantedTarget(), arms, _settings(**kwargs))


def _replayed(record: Sampled, tmp_path: Path) -> StopRecord | None:
    """Write the record's CSV as the bundle does and replay the rule from it as `evaluate` does."""
    header, rows = record.rows()
    with open(tmp_path / "samples.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    samples = read_samples(SimpleNamespace(path=tmp_path), "samples.csv")  # type: ignore[arg-type]
    return recompute(samples, RULE)


@pytest.mark.parametrize(
    ("effect", "verdict"), [(0.10, "slower"), (-0.10, "faster"), (0.0, "no meaningful change")]
)
def test_the_rounds_stop_when_the_verdict_is_decided(effect: float, verdict: str, tmp_path: Path) -> None:
    record = _run(effect, roof=True)
    stop = record.timing.stop
    assert stop is not None and (stop.reason, stop.verdict) == (DECIDED, verdict)
    assert RULE.min_pairs <= stop.pairs < RULE.max_pairs
    # Every block of every arm that ran is kept: whole rounds, up to the stop.
    assert len(record.timing.blocks) == len(record.timing.order) == 3 * stop.pairs
    assert len(record.samples) == 3 * stop.pairs * 5
    replayed = _replayed(record, tmp_path)
    assert agrees(replayed, stop)


def test_an_undecided_comparison_runs_to_the_cap(tmp_path: Path) -> None:
    rule = StoppingRule(0.95, 0.02, 6, 12, RHO)
    record = _run(0.02, noise=0.05, rule=rule, blocks=12)
    stop = record.timing.stop
    assert stop is not None and (stop.reason, stop.pairs) == (CAP, 12)
    assert stop.verdict == "inconclusive" and len(record.timing.blocks) == 24


def test_a_failed_arm_ends_the_rounds_open(tmp_path: Path) -> None:
    arms = [planted_arm("baseline", 1, 1.0, 0.05), planted_arm("change", 2, 1.02, 0.05, fail_at=23)]
    record = sample(PlantedTarget(), arms, _settings())
    assert record.timing.stop is not None and record.timing.stop.reason == OPEN
    assert record.timing.stop.pairs < RULE.min_pairs
    assert record.timing.failures and len(record.timing.blocks) < 2 * RULE.max_pairs
    assert agrees(_replayed(record, tmp_path), record.timing.stop)


def test_each_open_look_and_the_pairs_it_needs_are_said() -> None:
    """Until the rule decides, after every round the display hears the look and the pairs it would
    stop at at that spread, `pairs_to_decide` of the look: fewer than the cap once the spread is known."""
    heard: list[tuple[Look, int]] = []
    arms = [planted_arm("baseline", 1, 1.0, 0.01), planted_arm("change", 2, 1.0, 0.01)]
    record = sample(
        PlantedTarget(), arms, _settings(), on_look=lambda current, needed: heard.append((current, needed))
    )
    stop = record.timing.stop
    assert stop is not None and stop.reason == DECIDED
    assert [current.pairs for current, _ in heard] == list(range(1, stop.pairs))
    medians: dict[str, list[float]] = {"baseline": [], "change": []}
    for block in record.timing.blocks:
        medians[block.arm].append(
            np.median([s.duration_ns for s in record.samples if s.block == block.index])
        )
    d = np.log(medians["change"]) - np.log(medians["baseline"])
    for current, needed in heard:
        expected = look(d[: current.pairs], RULE)
        assert (current.ratio, current.low, current.high) == pytest.approx(
            (expected.ratio, expected.low, expected.high)
        )
        assert needed == pairs_to_decide(current, RULE)
    assert heard[0][1] == RULE.max_pairs and all(needed < RULE.max_pairs for _, needed in heard[1:])


def test_the_fixed_design_runs_every_block_and_records_no_stop() -> None:
    record = _run(0.10, rule=None, blocks=8)
    assert record.timing.stop is None and len(record.timing.blocks) == 16


def test_a_changed_sample_changes_the_replayed_stop(tmp_path: Path) -> None:
    """The check can fail: one block slowed in the CSV gives another stop than the recorded one."""
    record = _run(0.0)
    first_change = next(s for s in record.samples if s.arm == "change")
    slowed = [
        attrs.evolve(s, duration_ns=s.duration_ns * 3)
        if s.arm == "change" and s.block == first_change.block
        else s
        for s in record.samples
    ]
    tampered = attrs.evolve(record, samples=tuple(slowed))
    assert not agrees(_replayed(tampered, tmp_path), record.timing.stop)


def test_a_decided_comparison_is_not_warned_for_its_few_blocks() -> None:
    few = [
        Finding("PQ007", "warning", "6 blocks, fewer than 10", f"op 64 {arm}") for arm in ("baseline", "copy")
    ]
    spread = Finding("PQ001", "warning", "spread", "op 64 baseline")
    kept = decided_early((*few, spread), "op 64")
    assert kept == (few[1], spread)


def test_the_comparison_takes_the_sequences_interval_and_verdict() -> None:
    rng = np.random.default_rng(21)
    b, c = 1e5 * np.exp(0.05 * rng.standard_normal(6)), 1e5 * np.exp(0.05 * rng.standard_normal(6))
    fixed, _ = compare_blocks(b, tuple(range(0, 12, 2)), c, tuple(range(1, 12, 2)), min_effect=0.02)
    assert fixed.underpowered
    stop = StopRecord(RULE, 6, DECIDED, "no meaningful change", 1.001, 0.99, 1.01, 0.003)
    judged_ = judged(fixed, stop)
    assert (judged_.verdict, judged_.ci_low, judged_.ci_high, judged_.ratio) == (
        "no meaningful change",
        0.99,
        1.01,
        1.001,
    )
    assert not judged_.underpowered and not judged_.rank_disagrees
