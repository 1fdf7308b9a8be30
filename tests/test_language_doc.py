"""`docs/language.md` is what `perfdsl.language_doc` renders from the grammar, schema and words."""

from __future__ import annotations

from pathlib import Path

from perfdsl import codes
from perfdsl.language_doc import render_language
from perfdsl.schema import SCHEMAS, STUDY_SETTINGS

DOC = Path(__file__).resolve().parent.parent / "docs" / "language.md"


def test_the_language_reference_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render_language(), (
        "docs/language.md is stale: run `python -m perfdsl.language_doc docs/language.md`"
    )


def test_every_setting_and_code_is_in_the_reference() -> None:
    text = render_language()
    settings = {*STUDY_SETTINGS, *(name for schema in SCHEMAS.values() for name in schema)}
    assert [name for name in sorted(settings) if f"| `{name}` |" not in text] == []
    assert [code for code in sorted(codes.CODES) if f"| `{code}` |" not in text] == []
