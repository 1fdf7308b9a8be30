"""Every plain-text reader of an evaluation heads its intervals with the level they hold."""

from __future__ import annotations

from pathlib import Path

import attrs
from evaluate_fixtures import make_bundle

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.commands.evaluate import summary
from perfdsl.evaluate.evaluation import evaluate
from perfdsl.evaluate.inputs import open_evaluated
from perfdsl.formats.predictions import render_summary

SHARED = "98.75% intervals (the study's 95% shared over its comparisons)"


def _at(evaluation: Evaluation, level: float) -> Evaluation:
    """The evaluation with every comparison's interval said to hold `level`, as a sequential
    rule's family of 4 at 95 % holds each (evaluation/20)."""
    ops = tuple(
        attrs.evolve(
            op,
            combined=attrs.evolve(op.combined, level=level) if op.combined else None,
            shapes=tuple(
                attrs.evolve(s, comparison=attrs.evolve(s.comparison, level=level) if s.comparison else None)
                for s in op.shapes
            ),
        )
        for op in evaluation.operations
    )
    end = evaluation.end_to_end
    if end is not None and end.comparison is not None:
        end = attrs.evolve(end, comparison=attrs.evolve(end.comparison, level=level))
    return attrs.evolve(evaluation, operations=ops, end_to_end=end)


def test_the_summaries_head_a_family_s_intervals_with_their_own_level(tmp_path: Path) -> None:
    # `evaluate` printed "(95% intervals, threshold 2.0%)" above 98.75 % intervals.
    fixed = evaluate(open_evaluated(make_bundle(tmp_path)))
    assert fixed.interval_level == 0.95
    assert "(95% intervals, threshold" in summary(fixed).splitlines()[0]
    assert "faster), 95% intervals, practical" in render_summary(fixed)
    shared = _at(fixed, 0.9875)
    assert shared.interval_level == 0.9875
    assert f"({SHARED}, threshold" in summary(shared).splitlines()[0]
    assert f"faster), {SHARED}, practical" in render_summary(shared)
