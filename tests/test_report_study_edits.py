"""Which lines of a study file differ in meaning from the study that ran (perfdsl/report/study_edits.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfdsl.parse import parse
from perfdsl.report.study_edits import edited_lines, line_ranges
from perfdsl.source import Source

RAN = (Path(__file__).resolve().parent.parent / "studies" / "rmsnorm_cpu.perf").read_text(encoding="utf-8")


def _edited_lines(text: str) -> tuple[int, ...]:
    study = parse(Source("study.perf", text)).study
    assert study is not None
    return edited_lines(study, RAN)


def _line_of(text: str, needle: str) -> int:
    return next(number for number, line in enumerate(text.splitlines(), 1) if needle in line)


def test_the_study_that_ran_has_no_edited_line() -> None:
    assert _edited_lines(RAN) == ()


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("requests 1000;", "requests  1000;"),  # spacing
        ("decision adopt", "decision adopt   # after review"),  # a comment
        ("launches  baseline 3, change 1", "launches  baseline 3, change 1\n\n"),  # blank lines
    ],
)
def test_layout_and_comments_are_no_edit(old: str, new: str) -> None:
    assert old in RAN
    assert _edited_lines(RAN.replace(old, new, 1)) == ()


def test_a_changed_slo_and_a_removed_line_are_named_where_they_stand_now() -> None:
    text = RAN.replace("slo p99 <= 25 ms", "slo p99 <= 2 ms", 1)
    assert _edited_lines(text) == (_line_of(text, "slo p99 <= 2 ms"),)
    removed = RAN.replace('  limit unsupported "float16 and bfloat16 inputs"\n', "", 1)
    assert _edited_lines(removed) == (_line_of(removed, "limit sensitivity"),)


def test_a_hash_inside_a_string_is_text_not_a_comment() -> None:
    text = RAN.replace('"float16 and bfloat16 inputs"', '"float16 and bfloat16 inputs #2"', 1)
    assert _edited_lines(text) == (_line_of(text, "inputs #2"),)


def test_line_ranges_join_consecutive_lines() -> None:
    assert line_ranges((3, 12, 13, 14, 20)) == "3, 12-14, 20"
