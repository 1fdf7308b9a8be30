"""What every rule shares: the study under check, and findings made into diagnostics."""

from __future__ import annotations

from perfdsl import codes
from perfdsl.diagnostics import Diagnostic
from perfdsl.nodes import Study
from perfdsl.source import Span


class Context:
    """The study and the diagnostics found so far; each rule reads one and adds to it."""

    def __init__(self, study: Study) -> None:
        self.study = study
        self.diagnostics: list[Diagnostic] = []

    def report(self, code: str, message: str, span: Span, label: str = "", help: str = "") -> None:
        """Record a finding; its severity is the registry's, never chosen here."""
        self.diagnostics.append(codes.diagnostic(code, message, self.study.source, span, label, help))

    def missing(self, code: str, message: str, help: str) -> None:
        """A missing link points at the study's name: the study as a whole lacks it."""
        self.report(code, message, self.study.name.span, label="link missing", help=help)

    def header(self, span: Span) -> Span:
        """The span of a section's header (`evidence correctness`), not its whole body."""
        text = self.study.source.text
        stops = [
            i for i in (text.find("{", span.start, span.end), text.find("\n", span.start, span.end)) if i >= 0
        ]
        end = min(stops, default=span.end)
        return Span(span.start, span.start + len(text[span.start : end].rstrip()))
