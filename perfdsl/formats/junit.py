"""JUnit XML: one test case per checked file, one failure per error in it.

CI systems that know nothing of perfdsl (Jenkins, GitLab, Azure Pipelines)
show JUnit results: a study that checks is a passing test, one with errors a
failing test listing each error. Warnings do not fail a check, so they go to
the test case's `system-out` rather than becoming failures. A suite's
`failures` counts failing test cases, as JUnit runners count them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from perfdsl.diagnostics import Diagnostic, render_short
from perfdsl.formats.paths import ci_path

SUITE = "perfdsl check"


def _detail(diagnostic: Diagnostic) -> str:
    return render_short(diagnostic) + (f"\nhelp: {diagnostic.help}" if diagnostic.help else "")


def render_junit(checked: Sequence[str], diagnostics: Sequence[Diagnostic]) -> str:
    """A `testsuites` document with one suite; `checked` lists the files in order."""
    by_file: dict[str, list[Diagnostic]] = {path: [] for path in checked}
    for diagnostic in diagnostics:
        by_file.setdefault(diagnostic.source.path, []).append(diagnostic)
    failing = sum(1 for found in by_file.values() if any(d.is_error for d in found))
    counts = {"tests": str(len(by_file)), "failures": str(failing), "errors": "0"}
    root = ET.Element("testsuites", {"name": SUITE, **counts})
    suite = ET.SubElement(root, "testsuite", {"name": SUITE, **counts, "skipped": "0"})
    for path, found in by_file.items():
        name = ci_path(path)
        case = ET.SubElement(suite, "testcase", {"classname": "perfdsl.check", "name": name, "file": name})
        for diagnostic in (d for d in found if d.is_error):
            failure = ET.SubElement(case, "failure", {"type": diagnostic.code, "message": diagnostic.message})
            failure.text = _detail(diagnostic)
        warnings = [_detail(d) for d in found if not d.is_error]
        if warnings:
            ET.SubElement(case, "system-out").text = "\n".join(warnings)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
