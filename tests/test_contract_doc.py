"""`docs/kernel-contract.md` is what `perfdsl.contract_doc` renders from `perfdsl/kernel.py`."""

from __future__ import annotations

from pathlib import Path

import attrs

from perfdsl import kernel
from perfdsl.contract_doc import render_contract

DOC = Path(__file__).resolve().parent.parent / "docs" / "kernel-contract.md"
RECORDS = (kernel.Reference, kernel.Variant, kernel.Application, kernel.AppContext, kernel.KernelCode)


def test_the_contract_reference_is_current() -> None:
    assert DOC.read_text(encoding="utf-8") == render_contract(), (
        "docs/kernel-contract.md is stale: run `python -m perfdsl.contract_doc docs/kernel-contract.md`"
    )


def test_every_field_of_the_contract_is_listed_with_what_it_means() -> None:
    text = render_contract()
    for record in RECORDS:
        assert f"## `{record.__name__}`" in text
        for field in attrs.fields(record):
            row = next((line for line in text.splitlines() if line.startswith(f"| `{field.name}` |")), None)
            assert row is not None, (record.__name__, field.name)
            assert not row.endswith("| — |"), f"{record.__name__}.{field.name} has no docstring"
