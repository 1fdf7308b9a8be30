"""The check cases (`tests/check_cases/`, one broken study per diagnostic code): the tests' one list.

Every case is UTF-8 text except PD008's, whose defect is a file that is not: `perfdsl
check` reads every case as it reads any file (`commands.check.diagnose_file`), and a
test that reads the cases as study text takes `TEXT_CASES`.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CASES = tuple(sorted((ROOT / "tests" / "check_cases").glob("*.perf")))
NOT_TEXT = ("PD008_",)
"""The cases whose file is not UTF-8 text: its defect, which `check` reports as PD008."""
TEXT_CASES = tuple(case for case in CASES if not case.name.startswith(NOT_TEXT))
