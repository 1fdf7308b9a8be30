"""GitHub Actions workflow commands: each diagnostic becomes an annotation on the pull request.

`::error file=F,line=L,col=C,endLine=L,endColumn=C2,title=CODE::message`, one
line each; warnings use `::warning`. A span over several lines gives `line` and
`endLine` without columns, as the toolkit's `AnnotationProperties` requires.
The file is relative to the repository root (`perfdsl.formats.paths`), which
is what GitHub matches against the diff. Values are escaped as the Actions
toolkit escapes them: `%`, CR and LF everywhere, and `:` and `,` inside
properties, so a message cannot end the command early or forge another one;
any other control character is drawn as a symbol (`diagnostics.visible`), so
that a study's ESC cannot colour or rewrite the log.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfdsl.diagnostics import Diagnostic, visible
from perfdsl.formats.paths import ci_path


def _escape_data(text: str) -> str:
    escaped = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return visible(escaped)


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def annotation(diagnostic: Diagnostic) -> str:
    """One workflow command for one diagnostic."""
    start = diagnostic.source.position(diagnostic.span.start)
    end = diagnostic.source.position(diagnostic.span.end)
    properties: dict[str, object] = {"file": ci_path(diagnostic.source.path), "line": start.line}
    # The toolkit and the Checks API take columns only for a span on one line;
    # a span over several lines is annotated by its lines alone.
    if start.line == end.line:
        properties.update(col=start.column, endLine=end.line, endColumn=end.column)
    else:
        properties["endLine"] = end.line
    properties["title"] = diagnostic.code
    fields = ",".join(f"{key}={_escape_property(str(value))}" for key, value in properties.items())
    message = diagnostic.message + (f"\nhelp: {diagnostic.help}" if diagnostic.help else "")
    return f"::{diagnostic.severity} {fields}::{_escape_data(message)}"


def render_github(diagnostics: Sequence[Diagnostic]) -> str:
    """Every annotation, one per line."""
    return "".join(annotation(d) + "\n" for d in diagnostics)
