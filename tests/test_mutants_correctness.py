"""Correctness error that is blind to neither direction: `max_abs` is the largest |got - expected|.

A signed maximum (`(got - expected).max()`) passed the existing suite: it sees an
output that overshoots the answer and misses one that falls short of it. These
tests plant an error on each side and one of each size.
"""

from __future__ import annotations

import numpy as np
import pytest

from perfdsl.runtime.correctness import measure

EXPECTED = np.linspace(1.0, 2.0, 64)


@pytest.mark.parametrize("offset", [-0.5, 0.5], ids=["below the answer", "above the answer"])
def test_max_abs_sees_an_error_on_either_side(offset: float) -> None:
    got = EXPECTED.copy()
    got[7] += offset
    error = measure("y", got.astype(np.float32), EXPECTED, poisoned=False)
    assert error.max_abs == pytest.approx(0.5, rel=1e-6)


def test_max_abs_is_the_larger_error_whichever_side_it_is_on() -> None:
    got = EXPECTED.copy()
    got[3] += 0.25
    got[40] -= 0.75
    error = measure("y", got, EXPECTED, poisoned=False)
    assert error.max_abs == pytest.approx(0.75)
    assert error.rel_l2 == pytest.approx(np.hypot(0.25, 0.75) / np.linalg.norm(EXPECTED))


def test_an_output_everywhere_below_the_answer_fails_max_abs() -> None:
    error = measure("y", EXPECTED - 1e-3, EXPECTED, poisoned=False)
    assert error.max_abs == pytest.approx(1e-3)
    assert error.max_abs > 1e-5
