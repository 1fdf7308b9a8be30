"""Every study written out in the docs parses: a new user copies them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from perfdsl.parse import parse
from perfdsl.source import Source

ROOT = Path(__file__).resolve().parent.parent
BLOCKS = [
    (doc, block)
    for doc in sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
    for block in re.findall(r"```perf\n(.*?)\n```", doc.read_text(encoding="utf-8"), re.S)
]


def test_the_docs_hold_studies() -> None:
    assert any(doc.name == "imported-study-draft.md" for doc, _ in BLOCKS)


@pytest.mark.parametrize(("doc", "block"), BLOCKS, ids=[f"{d.name}-{i}" for i, (d, _) in enumerate(BLOCKS)])
def test_a_study_in_the_docs_parses(doc: Path, block: str) -> None:
    parsed = parse(Source(doc.name, block))
    errors = [d for d in parsed.diagnostics if d.is_error]
    assert parsed.study is not None and not errors, [f"{d.code}: {d.message}" for d in errors]
