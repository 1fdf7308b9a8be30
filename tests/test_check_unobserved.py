"""PD407's help sends a prediction of an unobserved quantity where the study's targets can observe it."""

from __future__ import annotations

from pathlib import Path

from perfdsl.commands.check import diagnose
from perfdsl.source import Source

CASE = Path(__file__).parent / "check_cases" / "PD407_unobserved_prediction.perf"


def _help(targets: str) -> str:
    text = CASE.read_text(encoding="utf-8").replace("targets   cuda, cpu", f"targets   {targets}")
    (found,) = [d for d in diagnose(Source("case.perf", text)) if d.code == "PD407"]
    assert found.message == "`normalize.bank_conflicts` is neither measured nor modelled"
    return found.help


def test_on_a_target_that_counts_nothing_the_help_says_to_model_it_not_to_measure_it() -> None:
    # A new user added `measure bank_conflicts` as told, and was then told cpu counts nothing.
    assert _help("cpu") == (
        "model it in `operation normalize` (`bank_conflicts baseline <formula>, change <formula>`): "
        "`cpu` counts nothing, so `measure` would not observe it"
    )
    assert _help("cuda, cpu").startswith(
        "add `bank_conflicts` to `evidence mechanism { measure ... }`, or model"
    )
