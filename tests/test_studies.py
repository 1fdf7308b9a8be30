"""Every bundled study is a complete chain of evidence: it parses and checks cleanly."""

from __future__ import annotations

from pathlib import Path

import bundled_studies
import pytest

from perfdsl.commands.check import diagnose
from perfdsl.diagnostics import render_short
from perfdsl.source import Source

STUDIES = bundled_studies.PATHS
EXPECTED_WARNINGS = {"batchnorm_imported": ("PD508", "PD508")}


def test_there_are_studies() -> None:
    assert len(STUDIES) >= 3
    assert all(path.is_file() for path in STUDIES)


@pytest.mark.parametrize("path", STUDIES, ids=lambda p: p.stem)
def test_study_checks_cleanly(path: Path) -> None:
    """No errors, and no warnings either: the bundled studies are the examples to copy.

    Except the one warning an imported study cannot fix in its text: its pyperf
    file was not interleaved, and saying so is the point of the example.
    """
    found = diagnose(Source.read(path))
    expected = EXPECTED_WARNINGS.get(path.stem, ())
    assert [d.code for d in found] == list(expected), [render_short(d) for d in found]
