"""The bundle and export references state the formats the code writes (docs/bundle.md, docs/export.md).

A client following the documentation read `perfdsl.evaluation/19` beside files that said
`/20`, and an example `results.json` of `/6`: every format named in these pages must be
the one `perfdsl.bundle.versions` (and the export) writes now.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from perfdsl.bundle import versions
from perfdsl.formats.export import SCHEMA as EXPORT

DOCS = Path(__file__).resolve().parent.parent / "docs"
WRITTEN = (
    versions.RESULTS,
    versions.PLAN,
    versions.EVALUATION,
    versions.IMPORTED,
    versions.IMPORTED_EVALUATION,
    EXPORT,
)
_FORMAT = re.compile(r"perfdsl\.[a-z-]+/[0-9]+")


def stale_formats(text: str) -> list[str]:
    """The formats the text names at a version other than the one written now."""
    current = {written.split("/")[0]: written for written in WRITTEN}
    return [f for f in _FORMAT.findall(text) if f.split("/")[0] in current and f != current[f.split("/")[0]]]


@pytest.mark.parametrize("page", ["bundle.md", "export.md"])
def test_the_reference_names_the_formats_written_now(page: str) -> None:
    assert stale_formats((DOCS / page).read_text(encoding="utf-8")) == []


def test_a_format_a_version_behind_is_found() -> None:
    assert stale_formats(f"schema `{versions.EVALUATION}`, then `perfdsl.evaluation/1`") == [
        "perfdsl.evaluation/1"
    ]
