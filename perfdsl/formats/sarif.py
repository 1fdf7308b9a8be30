"""SARIF 2.1.0, the format GitHub code scanning and most CI dashboards read.

Rule ids are the diagnostic codes, which never change meaning (see
`perfdsl.codes`), so a dashboard can track a rule across runs; every code in
the registry is listed as a rule, in code order, so a rule's index is stable
too. Locations are relative to the repository root (`perfdsl.formats.paths`),
under the uriBaseId `SRCROOT`, whose absolute location the run records in
`originalUriBaseIds` for viewers that open files locally. Columns count Unicode code points, as the
terminal formats do, and say so in `columnKind`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

from perfdsl import HOMEPAGE, __version__, codes
from perfdsl.diagnostics import Diagnostic
from perfdsl.formats.paths import ci_path, repository_root

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
SOURCE_ROOT = "SRCROOT"
_LEVELS = {"error": "error", "warning": "warning"}


def rule_name(entry: codes.Code) -> str:
    """The rule's friendly name, its title in PascalCase (`KernelTimingHasNoWarmUp`), as SARIF asks.

    The Multitool's SARIF2012 takes two capitals in a row for a name that is not PascalCase, so
    an acronym is one word (`TheGpuWasThrottled`, `TheCpusClock`) and the article "a" is left
    out (`StringIsNotClosed`, not `AStringIsNotClosed`)."""
    words = [w for w in re.findall(r"[A-Za-z0-9]+", entry.title.replace("'", "")) if w.lower() != "a"]
    return "".join(w[:1].upper() + (w[1:].lower() if re.search("[A-Z]{2}", w) else w[1:]) for w in words)


def _rule(entry: codes.Code) -> dict[str, object]:
    return {
        "id": entry.code,
        "name": rule_name(entry),
        "shortDescription": {"text": entry.title},
        "fullDescription": {"text": entry.why},
        "help": {"text": codes.explain(entry)},
        "defaultConfiguration": {"level": _LEVELS[entry.severity]},
    }


def _artifact(path: str) -> dict[str, str]:
    """A file inside the repository is relative to SRCROOT; one outside it is an absolute `file:` URI.

    A relative reference that begins with `/` under a base URI does not
    combine with it (SARIF1004), so a file outside the repository takes no base.
    """
    located = ci_path(path)
    if Path(located).is_absolute():
        return {"uri": Path(located).as_uri()}
    # Bytes, not text: a file name that is not UTF-8 (`err\xff.perf`) is a surrogate in a str, which
    # quote() could not encode; its bytes are percent-encoded as any URI's are.
    return {"uri": quote(os.fsencode(located)), "uriBaseId": SOURCE_ROOT}


def _result(diagnostic: Diagnostic, rule_index: dict[str, int]) -> dict[str, object]:
    start = diagnostic.source.position(diagnostic.span.start)
    end = diagnostic.source.position(diagnostic.span.end)
    text = diagnostic.message + (f"\nhelp: {diagnostic.help}" if diagnostic.help else "")
    result: dict[str, object] = {
        "ruleId": diagnostic.code,
        "level": _LEVELS[diagnostic.severity],
        "message": {"text": text},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": _artifact(diagnostic.source.path),
                    "region": {
                        "startLine": start.line,
                        "startColumn": start.column,
                        "endLine": end.line,
                        "endColumn": end.column,
                        "snippet": {"text": diagnostic.source.snippet(diagnostic.span)},
                    },
                }
            }
        ],
    }
    if diagnostic.code in rule_index:
        result["ruleIndex"] = rule_index[diagnostic.code]
    return result


def render_sarif(diagnostics: Sequence[Diagnostic]) -> str:
    """One SARIF log with one run holding every diagnostic."""
    entries = [codes.CODES[code] for code in sorted(codes.CODES)]
    rule_index = {entry.code: index for index, entry in enumerate(entries)}
    # A base URI must end in `/` for the relative paths under it to resolve inside it.
    root = repository_root(Path.cwd().resolve()).as_uri().rstrip("/") + "/"
    log = {
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "perfdsl",
                        "version": __version__,
                        "informationUri": HOMEPAGE,
                        "rules": [_rule(entry) for entry in entries],
                    }
                },
                "originalUriBaseIds": {SOURCE_ROOT: {"uri": root}},
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, rule_index) for d in diagnostics],
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"
