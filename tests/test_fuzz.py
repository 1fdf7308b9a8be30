"""Fuzzing: mutated studies end in diagnostics or a clean pass, never an exception.

Mutations copy what editing goes through: tokens and lines deleted, duplicated
and swapped, random characters (non-ASCII and control characters included)
inserted. Every diagnostic must also point inside the text it was given.
"""

from __future__ import annotations

import re

import bundled_studies
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from perfdsl.commands.check import diagnose
from perfdsl.source import Source

STUDIES = [p.read_text(encoding="utf-8") for p in bundled_studies.PATHS]
TOKEN = re.compile(r"\s+|[A-Za-z_][A-Za-z0-9_.:]*|[0-9.]+|\"[^\"\n]*\"|.", re.S)

characters = st.one_of(
    st.sampled_from([*'{}()[],;."#%<=>*+-/\n\t\r\\:', "study", "..", "1e999", "\x00", "é", "µs", "\u2028"]),
    st.characters(codec="utf-8"),
)


def _pieces(text: str, by_line: bool) -> list[str]:
    return text.splitlines(keepends=True) if by_line else TOKEN.findall(text)


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(STUDIES))
    for _ in range(draw(st.integers(1, 4))):
        pieces = _pieces(text, by_line=draw(st.booleans()))
        if not pieces:
            break
        i = draw(st.integers(0, len(pieces) - 1))
        j = draw(st.integers(0, len(pieces) - 1))
        operation = draw(st.sampled_from(["delete", "duplicate", "swap", "insert"]))
        if operation == "delete":
            del pieces[i]
        elif operation == "duplicate":
            pieces.insert(j, pieces[i])
        elif operation == "swap":
            pieces[i], pieces[j] = pieces[j], pieces[i]
        else:
            pieces.insert(i, "".join(draw(st.lists(characters, min_size=1, max_size=4))))
        text = "".join(pieces)
    return text


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_mutated_studies_never_raise(text: str) -> None:
    source = Source("fuzz.perf", text)
    for diagnostic in diagnose(source):
        assert 0 <= diagnostic.span.start <= diagnostic.span.end <= len(text), diagnostic
        assert diagnostic.message and diagnostic.code
