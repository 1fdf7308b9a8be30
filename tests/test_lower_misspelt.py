"""One misspelt setting is one error: the lowering reads it as the setting it near-misses."""

from __future__ import annotations

from pathlib import Path

from perfdsl.commands.check import diagnose
from perfdsl.source import Source

STUDY = (Path(__file__).resolve().parent / "check_cases" / "PD501_single_shape.perf").read_text(
    encoding="utf-8"
)


def _codes(old: str, new: str) -> list[str]:
    assert old in STUDY
    return [d.code for d in diagnose(Source("planted.perf", STUDY.replace(old, new))) if d.is_error]


def test_a_near_miss_is_read_as_the_setting_it_misspells() -> None:
    # Before: PD004 and "kernel timing has no repeats; add `repeats 100`" for the same word.
    assert _codes("repeats 100", "repeat 100") == ["PD004"]


def test_its_value_is_checked_as_that_settings_value() -> None:
    assert sorted(_codes("repeats 100", "repeat 0")) == ["PD004", "PD206"]


def test_a_near_miss_beside_the_setting_itself_is_not_read_twice() -> None:
    assert _codes("repeats 100", "repeats 100; repeat 100") == ["PD004"]


def test_a_dotted_name_where_a_reference_belongs_is_told_where_the_colon_goes() -> None:
    """A new user's `roof mykernels.copy` got "write `roof` followed by a Python reference or a name"."""
    old = "measure bytes, launches; roof kernels.copy:copy"
    text = STUDY.replace(old, "measure bytes, launches; roof my_kernels.copy") if old in STUDY else None
    assert text is not None, "the case's mechanism evidence names a roof"
    (found,) = [d for d in diagnose(Source("planted.perf", text)) if d.code == "PD005"]
    assert found.help == "a Python reference puts a colon before its attribute: `roof my_kernels:copy`"
