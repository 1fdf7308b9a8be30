"""Baseline and change take turns on each other's buffer allocations (`runtime.timing.Arm.allocation_of`).

Each arm's arrays land somewhere in memory once for the whole run; if each arm
ran only on its own, where they landed would be that arm's for every block, a
bias of its ratio that no interval sees. Here two pure-NumPy variants log which
output array each timed call wrote, and the blocks are read back from the log.
"""

from __future__ import annotations

import itertools

import numpy as np
import runtime_fixtures as fx

from perfdsl.bundle.sampling import TimingSettings
from perfdsl.kernel import Variant
from perfdsl.runtime.targets import Target
from perfdsl.runtime.timing import prepare_arms, sample

SETS = 2
SETTINGS = TimingSettings(warmup_calls=SETS, warmup_ms=0.0, repeats=3, blocks=4)


class _TwoSets(Target):
    """The CPU target with a cache target that two buffer sets of the tiny shape exceed."""

    def rotation_bytes(self) -> int:
        return 100


def _logging(name: str, log: list[tuple[str, int]]) -> Variant:
    def cpu(x, w, out):
        fx.good_cpu(x, w, out)
        log.append((name, id(out)))

    return Variant(name=name, cpu=cpu)


def _sampled() -> tuple[list[tuple[str, int]], object, list[tuple[str, set[int]]]]:
    """The call log, the sampler's record, and each timed block's arm and the output arrays it wrote."""
    log: list[tuple[str, int]] = []
    target = _TwoSets()
    arms = prepare_arms(
        target, fx.reference, [_logging("A", log), _logging("B", log)], {"M": 2, "N": 4}, np.float32, SETS
    )
    assert [len(arm.calls) for arm in arms] == [SETS, SETS]
    record = sample(target, arms, SETTINGS)
    warm = sum(w.calls for w in record.timing.warmup)
    timed = log[warm:]
    blocks = [
        (arm, {out for _, out in timed[i * SETTINGS.repeats : (i + 1) * SETTINGS.repeats]})
        for i, arm in enumerate(record.timing.order)
    ]
    return log[:warm], record, blocks


def test_each_arm_spends_as_many_blocks_on_either_allocation_and_never_follows_itself():
    warm_log, record, blocks = _sampled()
    # The warm-up runs each arm on its own sets: that is how the two allocations are told apart.
    own = {arm: {out for name, out in warm_log if name == arm} for arm in ("A", "B")}
    assert len(own["A"]) == len(own["B"]) == SETS and not own["A"] & own["B"]
    which = [(arm, next(name for name, outs in own.items() if written <= outs)) for arm, written in blocks]
    assert which == [
        ("A", "A"),
        ("B", "B"),  # round 1: each arm on a different allocation
        ("B", "A"),
        ("A", "B"),  # round 2: the other way round
        ("A", "A"),
        ("B", "B"),
        ("B", "A"),
        ("A", "B"),
    ]
    # Consecutive blocks never run on one allocation: none starts in the lines the last one left.
    assert all(before[1] != after[1] for before, after in itertools.pairwise(which))
    assert {r.arm: r.allocations for r in record.timing.rotation} == {"A": 2, "B": 2}


def test_a_sample_numbers_its_set_among_all_the_allocations():
    _, record, _ = _sampled()
    by_block: dict[tuple[str, int], set[int]] = {}
    for s in record.samples:
        by_block.setdefault((s.arm, s.block), set()).add(s.buffer_set)
    # Set s of allocation a is a * SETS + s: the change's own sets are 2 and 3.
    assert by_block[("A", 0)] <= {0, 1} and by_block[("B", 1)] <= {2, 3}
    assert by_block[("B", 2)] <= {0, 1} and by_block[("A", 3)] <= {2, 3}


def test_an_arm_prepared_alone_runs_on_its_own_sets_only():
    log: list[tuple[str, int]] = []
    target = _TwoSets()
    (arm,) = prepare_arms(target, fx.reference, [_logging("A", log)], {"M": 2, "N": 4}, np.float32, SETS)
    record = sample(target, [arm], SETTINGS)
    assert {out for _, out in log} == {out for _, out in log[:SETS]}
    assert record.timing.rotation[0].allocations == 1
    assert {s.buffer_set for s in record.samples} == {0, 1}
