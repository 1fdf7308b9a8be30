"""Renderings of `check`'s diagnostics for CI systems: SARIF, GitHub annotations and JUnit XML.

Each module renders the same `Diagnostic` values the terminal formats do, for
every file that was checked (a clean file is a passing test case in JUnit), so
CI shows exactly what `perfdsl check` would print.
"""

from __future__ import annotations

from collections.abc import Sequence

from perfdsl.diagnostics import Diagnostic

FORMATS = ("sarif", "github", "junit")


def render(format_name: str, checked: Sequence[str], diagnostics: Sequence[Diagnostic]) -> str:
    """The whole output of `perfdsl check --format NAME` over the files in `checked`."""
    if format_name == "sarif":
        from perfdsl.formats.sarif import render_sarif

        return render_sarif(diagnostics)
    if format_name == "github":
        from perfdsl.formats.github import render_github

        return render_github(diagnostics)
    from perfdsl.formats.junit import render_junit

    return render_junit(checked, diagnostics)
