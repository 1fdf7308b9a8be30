"""JUnit XML: one test case per checked file, one failure holding every error in it.

CI systems that know nothing of perfdsl (Jenkins, GitLab, Azure Pipelines)
show JUnit results: a study that checks is a passing test, one with errors a
failing test listing each error. A test case has one `<failure>`, as JUnit
runners write it: readers that show one failure per case (junit2html shows
the last) would hide the others, so a file's errors are joined in one, its
body listing them all. The document keeps to Jenkins' `junit-10.xsd`, which
has no `file` attribute (the case's name is the path). Warnings do not fail a
check, so they go to the test case's `system-out`. A suite's `failures`
counts failing test cases, as JUnit runners count them.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from perfdsl.diagnostics import Diagnostic, render_short
from perfdsl.formats.paths import ci_path
from perfdsl.formats.xml_text import xml_document

SUITE = "perfdsl check"


def _detail(diagnostic: Diagnostic) -> str:
    return render_short(diagnostic) + (f"\nhelp: {diagnostic.help}" if diagnostic.help else "")


def _failure_attributes(errors: Sequence[Diagnostic]) -> dict[str, str]:
    """One error keeps its code and message; several are counted, their codes listed in order."""
    if len(errors) == 1:
        return {"type": errors[0].code, "message": errors[0].message}
    codes = ", ".join(d.code for d in errors)
    return {"type": codes, "message": f"{len(errors)} errors: {codes}"}


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
        case = ET.SubElement(suite, "testcase", {"classname": "perfdsl.check", "name": name})
        errors = [d for d in found if d.is_error]
        if errors:
            ET.SubElement(case, "failure", _failure_attributes(errors)).text = "\n".join(map(_detail, errors))
        warnings = [_detail(d) for d in found if not d.is_error]
        if warnings:
            ET.SubElement(case, "system-out").text = "\n".join(warnings)
    return xml_document(root)
