"""Every bundled study is a complete chain of evidence: it parses and checks cleanly."""

from __future__ import annotations

from pathlib import Path

import bundled_studies
import pytest

from perfdsl.commands.check import diagnose
from perfdsl.diagnostics import render_short
from perfdsl.source import Source

STUDIES = bundled_studies.PATHS


def test_there_are_studies() -> None:
    assert len(STUDIES) >= 3
    assert all(path.is_file() for path in STUDIES)


@pytest.mark.parametrize("path", STUDIES, ids=lambda p: p.stem)
def test_study_checks_cleanly(path: Path) -> None:
    """No errors, and no warnings either: the bundled studies are the examples to copy."""
    found = diagnose(Source.read(path))
    assert [render_short(d) for d in found] == []
