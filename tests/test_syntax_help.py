"""The help a syntax error or a unit warning gives where a byte formula is written with units."""

from __future__ import annotations

from pathlib import Path

from perfdsl.commands.check import diagnose
from perfdsl.source import Source

STUDY = (Path(__file__).resolve().parent / "check_cases" / "PD501_single_shape.perf").read_text(
    encoding="utf-8"
)
FORMULA = "baseline 4*(5*M*N + M)"


def _diagnostics(formula: str) -> list:
    assert FORMULA in STUDY
    return diagnose(Source("planted.perf", STUDY.replace(FORMULA, f"baseline {formula}")))


def test_a_unit_after_a_formula_says_units_follow_numbers_only() -> None:
    """Before, the help read "put each statement on its own line", which misleads."""
    (error,) = _diagnostics("4*(5*M*N + M) KiB")
    assert error.code == "PD001"
    assert "a unit follows a number only" in error.help and "1024*(...)" in error.help


def test_a_size_unit_on_each_element_is_warned_with_the_bytes_it_means() -> None:
    found = [d for d in _diagnostics("4 KiB*(5*M*N + M)") if d.code == "PD509"]
    assert len(found) == 1 and "4096 bytes per element" in found[0].message


def test_plain_element_sizes_and_whole_sizes_are_not_warned() -> None:
    for formula in ("4*(5*M*N + M)", "4*(5*M*N + M) + 16 KiB", "(5*M*N + M)*4 B", "2 KiB + 4*M*N"):
        assert [d.code for d in _diagnostics(formula) if d.code == "PD509"] == [], formula


def test_a_section_header_without_its_brace_says_to_open_the_block() -> None:
    """`evidence timing   warmup 10; ...` was told to separate values with `,`."""
    for header, written in (
        ("evidence timing", "evidence timing      {"),
        ("operation normalize", "operation normalize {"),
        ("workload", "workload {"),
    ):
        assert written in STUDY, written
        found = diagnose(Source("planted.perf", STUDY.replace(written, header + " ", 1)))
        first = next(d for d in found if d.code == "PD001")
        assert first.help == (
            f"the `{header}` section's body is a block: open it with `{{` after `{header}` "
            "and close it with `}`"
        ), (header, first.help)
