"""Source to typed study: the first stage, `parse(Source) -> Study`."""

from __future__ import annotations

import attrs

from perfdsl.diagnostics import Diagnostic
from perfdsl.lower import lower
from perfdsl.nodes import Study
from perfdsl.source import Source
from perfdsl.syntax import parse_statements


@attrs.frozen
class Parsed:
    """The study, when the text could be read as one, and what was wrong with it."""

    study: Study | None
    diagnostics: tuple[Diagnostic, ...]


def parse(source: Source) -> Parsed:
    """Parse and lower a study; syntax errors leave `study` as None."""
    root, diagnostics = parse_statements(source)
    if root is None:
        return Parsed(None, tuple(diagnostics))
    study, structural = lower(root, source)
    return Parsed(study, tuple(diagnostics + structural))
