"""Amdahl's bound when the operation is the whole application and no time is predicted."""

from __future__ import annotations

from pathlib import Path

from perfdsl.commands.check import diagnose
from perfdsl.source import Source

ROOT = Path(__file__).resolve().parent.parent


def test_a_throughput_prediction_on_a_whole_application_op_checks() -> None:
    """share 100% and no time prediction read the operation as infinitely fast: no bound, no crash."""
    text = (ROOT / "tests" / "check_cases" / "PD505_no_time_prediction.perf").read_text(encoding="utf-8")
    text = text.replace("share 8%", "share 100%")
    assert "share 100%" in text
    text = text.replace("predict {", "predict {\n    decode_step.throughput ratio >= 2", 1)
    found = diagnose(Source("whole.perf", text))
    assert [d.code for d in found] == ["PD505"]
