"""A study reads the same however an editor saved it: BOM, CRLF, tabs, non-ASCII text."""

from __future__ import annotations

from pathlib import Path

import pytest

from perfdsl.commands.check import diagnose, read_source
from perfdsl.source import Source

ROOT = Path(__file__).resolve().parent.parent
STUDY = (ROOT / "studies" / "rmsnorm_fusion.perf").read_text(encoding="utf-8")

FORMS = {
    "byte-order mark": "\ufeff" + STUDY,
    "CRLF line ends": STUDY.replace("\n", "\r\n"),
    "tabs for indentation": STUDY.replace("  ", "\t"),
    "non-ASCII strings": STUDY.replace("Fuse RMSNorm's", "Fusionner la RMSNorm — 3 µs → 1 µs ✓"),
    "all at once": "\ufeff" + STUDY.replace("  ", "\t").replace("Fuse", "Füse").replace("\n", "\r\n"),
}


@pytest.mark.parametrize("form", FORMS, ids=list(FORMS))
def test_a_valid_study_stays_valid(form: str) -> None:
    assert diagnose(Source("study.perf", FORMS[form])) == []


def test_a_study_saved_with_a_bom_reads_from_disk(tmp_path: Path) -> None:
    path = tmp_path / "study.perf"
    path.write_bytes(FORMS["all at once"].encode("utf-8"))
    assert diagnose(read_source(path)) == []


def test_an_error_after_a_bom_points_at_its_own_line() -> None:
    broken = "\ufeff" + STUDY.replace("decision adopt", "decision adopt adopt")
    (diagnostic,) = diagnose(Source("study.perf", broken))
    assert diagnostic.source.position(diagnostic.span.start).line == 3


def test_a_bom_is_no_column_of_the_first_line() -> None:
    """Every position on line 1 was one column right of the character it named."""
    broken = STUDY.replace("study rmsnorm_fusion {", "study rmsnorm_fusion { {", 1)
    (plain,) = diagnose(Source("study.perf", broken))
    (marked,) = diagnose(Source("study.perf", "\ufeff" + broken))
    where = plain.source.position(plain.span.start)
    assert where.line == 1
    assert marked.source.position(marked.span.start) == where
    assert marked.source.line_text(1) == plain.source.line_text(1)
