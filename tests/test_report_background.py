"""Figures drawn in a worker while the report is laid out: the same figures, and no early wait."""

from __future__ import annotations

import functools
import threading
from concurrent.futures import Future

import pytest

from perfdsl.report import figures
from perfdsl.report.background import _Pending, drawn_beside
from perfdsl.report.context import draw_figures

DRAWINGS = {
    "roof": functools.partial(figures.roofline, [("copy", 16.4), ("fused", 13.9)], 17.1),
    "errors": functools.partial(figures.error_per_shape, [("(64, 4096)", 2e-7, 1e-5, False)]),
}


@pytest.mark.slow
def test_the_worker_draws_the_same_figures_as_drawing_here() -> None:
    here = draw_figures(DRAWINGS)
    with drawn_beside(DRAWINGS) as drawn:
        assert list(drawn) == ["roof", "errors"]
        assert {key: drawn[key] for key in drawn} == here


def test_keys_are_answered_without_waiting_for_the_drawing() -> None:
    drawn: Future[dict[str, object]] = Future()
    pending = _Pending(("roof",), drawn)  # type: ignore[arg-type]
    # Nothing has been drawn: membership, iteration and length must not wait for it.
    assert "roof" in pending and "other" not in pending
    assert list(pending) == ["roof"] and len(pending) == 1
    with pytest.raises(KeyError):
        pending["other"]
    threading.Timer(0.05, drawn.set_result, [{"roof": "svg"}]).start()
    assert pending["roof"] == "svg"  # waits for the result, then returns it


def test_a_drawing_that_fails_raises_where_the_figure_is_asked_for() -> None:
    broken = {"timing": functools.partial(figures.timing_distributions, [])}
    with drawn_beside(broken) as drawn, pytest.raises(ValueError, match="at least one panel"):
        drawn["timing"]
