"""Golden tests: one broken study per rule, beside its expected short-form output.

`tests/check_cases/PD203_no_adversarial.perf` holds a study with exactly one
defect and `PD203_no_adversarial.expected` the lines `perfdsl check
--format short` prints for it. Regenerate with `UPDATE_GOLDENS=1 pytest
tests/test_check_cases.py`, then review the diff before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import check_case_paths
import pytest

from perfdsl import codes
from perfdsl.commands.check import diagnose_file
from perfdsl.diagnostics import render_short

ROOT = Path(__file__).resolve().parent.parent
CASE_FILES = list(check_case_paths.CASES)
UPDATE = os.environ.get("UPDATE_GOLDENS") == "1"


def _code_of(case: Path) -> str:
    return case.name.split("_", 1)[0]


def _render(case: Path) -> str:
    """As `perfdsl check` reads the file from the repository's root (one that is not UTF-8 is
    its own error, PD008), with the path as the goldens name it."""
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        _, diagnostics = diagnose_file(case.relative_to(ROOT))
    finally:
        os.chdir(cwd)
    return "".join(render_short(d) + "\n" for d in diagnostics)


@pytest.mark.parametrize("case", CASE_FILES, ids=lambda p: p.stem)
def test_case_matches_golden(case: Path) -> None:
    expected_file = case.with_suffix(".expected")
    rendered = _render(case)
    if UPDATE:
        expected_file.write_text(rendered, encoding="utf-8")
    assert rendered == expected_file.read_text(encoding="utf-8")


@pytest.mark.parametrize("case", CASE_FILES, ids=lambda p: p.stem)
def test_case_reports_its_code(case: Path) -> None:
    """The golden is not just any output: the case's own code is in it."""
    code = _code_of(case)
    assert f"[{code}]: " in case.with_suffix(".expected").read_text(encoding="utf-8")


def test_every_code_has_a_case() -> None:
    covered = {_code_of(case) for case in CASE_FILES}
    assert sorted(c for c in codes.CODES if c.startswith("PD") and c not in covered) == []


def test_every_case_names_a_registered_code() -> None:
    assert sorted({_code_of(case) for case in CASE_FILES} - set(codes.CODES)) == []
