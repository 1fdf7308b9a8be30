"""The language reference, `docs/language.md`, generated from the grammar, the schema and the words.

Every section, setting, fixed word, unit and code a study may use is listed
from the tables the parser and the checker read (`grammar/perf.lark`,
`perfdsl.schema`, `perfdsl.vocabulary`, `perfdsl.quantity`, `perfdsl.codes`),
so the reference cannot describe a language the tool does not accept: a test
fails when the file is not what this module renders. Regenerate it with

    python -m perfdsl.language_doc docs/language.md
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from perfdsl import codes
from perfdsl import vocabulary as words
from perfdsl.parser_tables import grammar_text
from perfdsl.quantity import SCALE_PERIODS, SCALE_RESOURCES, known_units, lookup_unit
from perfdsl.schema import EVIDENCE_KINDS, SCHEMAS, STUDY_SECTIONS, STUDY_SETTINGS, Spec

# How each section is opened, where it takes more than its keyword.
_OPENED = {
    "operation": "operation NAME { ... }",
    "application": "application NAME { ... }",
    "predict": "predict { ... }  or  predict TARGET { ... }",
    "target": "target TARGET { ... }",
    "limit": 'limit KIND "text" { ... }  or  limit KIND "text"',
    "rejected": 'rejected "hypothesis" { ... }',
    "evidence": "evidence KIND { ... }",
}


def _code(text: str) -> str:
    return f"`{text}`"


# What a section holds besides its settings, as the grammar's statements.
_HOLDS = {
    "operation": "Models, one a line: `MEASURE baseline EXPR, change EXPR` over the shape symbols "
    "(`bytes baseline 4*(5*M*N + 2*M + N), change 4*(2*M*N + N)`), for any measure below.",
    "predict": "Predictions, one a line: `NAME.QUANTITY ratio COMPARATOR BOUND` "
    "(`normalize.time ratio <= 0.55`, `decode_step.time ratio <= amdahl`).",
}


def _cell(text: str) -> str:
    """Text for a table cell: a `|` would end the cell."""
    return text.replace("|", "\\|")


def _list(items: Iterable[str]) -> str:
    return ", ".join(_code(item) for item in items)


def _settings_table(schema: dict[str, Spec]) -> list[str]:
    if not schema:
        return ["Statements only (see the grammar below); no settings.", ""]
    rows = ["| setting | takes | may repeat |", "| --- | --- | --- |"]
    for name, spec in schema.items():
        rows.append(f"| `{name}` | {_cell(spec.kind)} | {'yes' if spec.repeatable else ''} |")
    return [*rows, ""]


def _sections() -> list[str]:
    out = ["## Sections and settings", "", "A study is `study NAME { ... }`. At its top level:", ""]
    out += _settings_table(STUDY_SETTINGS)
    for section in STUDY_SECTIONS:
        if section == "evidence":
            for kind in EVIDENCE_KINDS:
                out += [f"### `evidence {kind} {{ ... }}`", ""]
                out += _settings_table(SCHEMAS[kind])
            continue
        out += [f"### `{_OPENED.get(section, section + ' { ... }')}`", ""]
        if section in _HOLDS:
            out += [_HOLDS[section], ""]
        out += _settings_table(SCHEMAS[section])
    return out


def _words() -> list[str]:
    mechanisms = [f"`{m}` (observed by `{q}`)" for m, q in words.MECHANISM_MEASURES.items()]
    rows = [
        ("decision", _list(words.DECISIONS)),
        ("dtype", _list(words.DTYPES)),
        ("targets", _list(words.TARGETS)),
        ("mechanism", ", ".join(mechanisms)),
        ("measure", _list(words.MEASURES)),
        ("poison", _list(words.POISONS)),
        ("load arrivals", _list(words.ARRIVALS)),
        ("limit kinds", _list(words.LIMIT_KINDS)),
        ("error metrics (`correct`)", _list(words.ERROR_METRICS)),
        ("objective metrics", _list(words.OBJECTIVE_METRICS)),
        ("statistics", _list(words.STATISTICS) + ", and percentiles `p50`, `p99`, ..."),
        ("prediction statistics", _list(words.PREDICTION_STATISTICS) + f"; bound `{words.AMDAHL}`"),
        ("operation quantities", _list(words.OPERATION_QUANTITIES)),
        ("application quantities", _list(words.APPLICATION_QUANTITIES)),
        ("`rejected` evidence", _list(words.OPERATION_EVIDENCE)),
    ]
    out = ["## Fixed words", "", "| where | words |", "| --- | --- |"]
    out += [f"| {where} | {choices} |" for where, choices in rows]
    return [*out, ""]


def _units() -> list[str]:
    by_dimension: dict[str, list[str]] = {}
    for unit in known_units():
        dimension = lookup_unit(unit).dimension
        if dimension != "scale":
            by_dimension.setdefault(dimension, []).append(unit)
    out = ["## Units", "", "| dimension | units |", "| --- | --- |"]
    out += [f"| {dimension} | {_list(units)} |" for dimension, units in by_dimension.items()]
    out.append(
        f"| scale | `RESOURCE per PERIOD`: resources {_list(SCALE_RESOURCES)}; "
        f"periods {_list(SCALE_PERIODS)} |"
    )
    return [*out, ""]


def _codes() -> list[str]:
    out = [
        "## Diagnostic codes",
        "",
        "`perfdsl explain CODE` explains one; `perfdsl explain` lists them.",
        "",
        "| code | severity | title |",
        "| --- | --- | --- |",
    ]
    for code in sorted(codes.CODES):
        entry = codes.CODES[code]
        out.append(f"| `{code}` | {entry.severity} | {_cell(entry.title)} |")
    return [*out, ""]


def render_language() -> str:
    """The whole reference as Markdown."""
    grammar = grammar_text().rstrip("\n")
    lines = [
        "# The .perf language",
        "",
        "<!-- Generated by `python -m perfdsl.language_doc docs/language.md`; do not edit. -->",
        "",
        "Every section, setting, word, unit and code `perfdsl check` accepts, from the tables it",
        "reads. Settings are one statement a line (or separated by `;`); what a section may hold",
        "beyond its settings (shapes, conditions, models, predictions, load) is in the grammar.",
        "",
        *_sections(),
        *_words(),
        *_units(),
        *_codes(),
        "## Grammar",
        "",
        "`grammar/perf.lark`, as the parser reads it:",
        "",
        "```lark",
        grammar,
        "```",
    ]
    return "\n".join(lines) + "\n"


def write_reference(text: str, argv: list[str]) -> int:
    """Write a generated reference to the path `argv` gives (stdout without one)."""
    if len(argv) > 1:
        Path(argv[1]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


def main(argv: list[str]) -> int:
    """Write the language reference to the path given (stdout without one)."""
    return write_reference(render_language(), argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
