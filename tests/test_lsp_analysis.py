"""The language server's answers as functions, where positions are easy to vary."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types

from perfdsl.lsp.analysis import (
    completions,
    declarations,
    definition,
    enclosing_section,
    hover,
    lsp_diagnostics,
)

ROOT = Path(__file__).resolve().parent.parent
STUDY = (ROOT / "studies" / "rmsnorm_fusion.perf").read_text(encoding="utf-8")
BROKEN = (ROOT / "tests" / "check_cases" / "PD004_unknown_setting.perf").read_text(encoding="utf-8")


@pytest.mark.slow
def test_every_position_of_a_study_answers_without_error() -> None:
    """Hover, completion and definition are asked at arbitrary places while typing."""
    for line, text in enumerate(STUDY.splitlines()):
        for character in range(len(text) + 1):
            position = types.Position(line=line, character=character)
            completions(STUDY, position)
            definition(STUDY, "file:///s.perf", position)
            hover(STUDY, position, [])


def test_columns_count_utf16_code_units() -> None:
    """A character outside the BMP before a diagnostic is two UTF-16 units wide, as LSP counts."""
    text = BROKEN.replace('title    "A minimal complete study"', 'title "\U0001f600"; titel "x"')
    (typo,) = [d for d in lsp_diagnostics("s.perf", text) if "`titel`" in d.message]
    line = text.splitlines()[typo.range.start.line]
    assert typo.range.start.character == line.index("titel") + 1
    assert typo.range.end.character == line.index("titel") + 1 + len("titel")


def test_sections_are_found_through_strings_and_comments() -> None:
    text = 'study s {\n  limit regression "a { b" {  # not a block {\n    sha'
    assert enclosing_section(text, len(text)) == "limit"
    assert enclosing_section(text, text.index("limit")) == "study"
    assert enclosing_section("", 0) is None
    assert enclosing_section("study s {\n  evidence timing { war", 33) == "timing"


def test_names_are_found_in_a_study_that_does_not_parse() -> None:
    half_written = STUDY.replace("decision adopt", "decision adopt {{{")
    assert set(declarations(half_written)) == {"normalize", "decode_step"}
    labels = {item.label for item in completions(half_written, types.Position(line=3, character=0))}
    assert {"normalize", "decode_step"} <= labels


def test_definition_is_none_off_a_name() -> None:
    assert definition(STUDY, "file:///s.perf", types.Position(line=0, character=1)) is None


def test_hover_over_a_setting_says_what_it_takes() -> None:
    line = next(i for i, text in enumerate(STUDY.splitlines()) if "evidence timing" in text)
    character = STUDY.splitlines()[line].index("repeats") + 1
    answer = hover(STUDY, types.Position(line=line, character=character), [])
    assert answer is not None
    assert answer.contents.value == "`repeats` in `evidence timing` takes a whole number"
    misplaced = "study s {\n  workload { seeds 5 }\n}\n"
    assert hover(misplaced, types.Position(line=1, character=15), []) is None
