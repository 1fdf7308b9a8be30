"""An operation's combination over shapes, from the block pairs the shapes' comparisons rest on."""

import attrs
import numpy as np
import pytest

from perfdsl.evaluate.combination import ShapeInput, combine
from perfdsl.evaluate.compare import compare_blocks

ORDER = [0, 1, 1, 0] * 5
"""ABBA over 10 rounds: 10 blocks per arm, 10 adjacent pairs."""


def _shape(label: str, seed: int, level: float, ratio: float, order: list[int] = ORDER) -> ShapeInput:
    rng = np.random.default_rng(seed)
    arm = np.array(order)
    times = level * np.where(arm == 1, ratio, 1.0) * np.exp(rng.normal(0.0, 0.01, arm.size))
    base = tuple(i for i, a in enumerate(order) if a == 0)
    change = tuple(i for i, a in enumerate(order) if a == 1)
    comparison, pairs = compare_blocks(times[list(base)], base, times[list(change)], change, min_effect=0.01)
    return ShapeInput(label, 1.0, comparison, None, None, pairs)


def test_one_shape_combined_is_its_own_paired_comparison() -> None:
    one = _shape("only", 1, 50e-6, 1.03)
    combined, missing = combine([one], 0.95)
    assert missing is None and combined is not None and one.comparison is not None
    assert (combined.ratio, combined.ci_low, combined.ci_high, combined.verdict) == pytest.approx(
        (one.comparison.ratio, one.comparison.ci_low, one.comparison.ci_high, one.comparison.verdict)
    )


def test_a_regressing_shape_is_named_when_the_total_is_faster() -> None:
    combined, _ = combine([_shape("long", 2, 1e-3, 0.8), _shape("short", 3, 1e-5, 1.3)], 0.95)
    assert combined is not None
    assert (combined.verdict, combined.regressions) == ("faster", ("short",))
    assert [s.shape for s in combined.shares] == ["long", "short"]


def test_a_regression_is_named_by_the_verdict_the_page_shows() -> None:
    """A sequential stop judges a shape by its confidence sequence (`evaluate.sequential.judged`):
    where that leaves it inconclusive, the fixed interval's "slower" over the same, optionally
    stopped, pairs is no regression to name."""
    short = _shape("short", 3, 1e-5, 1.3)
    assert short.comparison is not None and short.comparison.verdict == "slower"
    judged = attrs.evolve(short, comparison=attrs.evolve(short.comparison, verdict="inconclusive"))
    combined, _ = combine([_shape("long", 2, 1e-3, 0.8), judged], 0.95)
    assert combined is not None and combined.regressions == ()


def test_a_shape_with_no_paired_interval_keeps_the_operation_uncombined() -> None:
    # Arms that never meet: the comparison falls back to the independent analysis, with no pairs.
    apart = _shape("apart", 4, 1e-4, 1.0, [0] * 10 + [1] * 10)
    assert apart.comparison is not None and apart.comparison.analysis == "independent"
    combined, missing = combine([_shape("met", 5, 1e-4, 1.0), apart], 0.95)
    assert combined is None
    assert missing == "shape apart has too few adjacent block pairs to combine by total time"


def test_a_sequential_stop_and_its_total_state_the_level_their_intervals_hold() -> None:
    # The confidence sequence stops each comparison at the study's 95 % shared over its family
    # (98.75 % over 4), and the record said 0.95: the export, `evaluate`'s summary, `compare` and
    # `history` all printed the wider interval as a 95 % one.
    from perfdsl.bundle.stopping import RHO, StoppingRule
    from perfdsl.evaluate.sequential import judged
    from perfdsl.stats.sequential.rule import replay

    rule = StoppingRule(0.9875, 0.01, 6, 100, RHO)
    shapes = []
    for label, seed in (("long", 2), ("short", 3)):
        shape = _shape(label, seed, 1e-4, 0.8)
        assert shape.comparison is not None and shape.comparison.level == 0.95
        stop = replay(np.log(0.8) + 0.01 * np.random.default_rng(seed).standard_normal(100), rule)
        assert stop is not None
        shapes.append(attrs.evolve(shape, comparison=judged(shape.comparison, stop), stop=stop))
    assert [s.comparison.level for s in shapes if s.comparison] == [0.9875, 0.9875]
    combined, _ = combine(shapes, 0.95)
    assert combined is not None and combined.sequential and combined.level == 0.9875
