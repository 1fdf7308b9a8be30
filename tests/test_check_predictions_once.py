"""The predictions' time ratios are found once per target, not once per prediction.

Amdahl's bound reads every operation's predicted time ratio; finding them anew
for each prediction made checking a study of N predictions take N^2 steps
(minutes for 10,000 of them). Counted, not timed: the search runs once for the
study-wide predictions and once per target with predictions of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from perfdsl.check import predictions
from perfdsl.commands.check import diagnose
from perfdsl.source import Source

STUDY = Path(__file__).resolve().parent.parent / "studies" / "rmsnorm_fusion.perf"


def _many_predictions(count: int) -> str:
    """The bundled study with `count` more operations, each predicted in the study-wide section."""
    text = STUDY.read_text(encoding="utf-8")
    head, _, tail = text.rpartition("\n}")
    before, marker, after = head.partition("  predict {")
    rest_of_line, _, after = after.partition("\n")
    lines = [f"    p_{i}.time ratio <= 0.6" for i in range(count)]
    operations = [
        f"  operation p_{i} {{ baseline kernels.rmsnorm:unfused; change kernels.rmsnorm:fused; "
        f"reference kernels.rmsnorm:reference; bytes baseline 4*M*N, change 2*M*N }}"
        for i in range(count)
    ]
    return (
        before
        + marker
        + rest_of_line
        + "\n"
        + "\n".join(lines)
        + "\n"
        + after
        + "\n"
        + "\n".join(operations)
        + "\n}"
        + tail
    )


def test_time_ratios_are_found_once_per_target(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[object] = []
    search = predictions._predicted_time_ratios

    def counted(study, on):
        calls.append(on.id if on is not None else None)
        return search(study, on)

    monkeypatch.setattr(predictions, "_predicted_time_ratios", counted)
    found = diagnose(Source("many.perf", _many_predictions(200)))
    assert [d.code for d in found if d.is_error] == []
    # The bundled study predicts for every target, for cuda and for cpu.
    assert sorted(calls, key=str) == sorted([None, "cuda", "cpu"], key=str)
