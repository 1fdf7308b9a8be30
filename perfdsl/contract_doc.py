"""The kernel contract's reference, `docs/kernel-contract.md`, generated from `perfdsl/kernel.py`.

A new user who wrote a study from scratch had to read the source for the
contract: Python's `help()` lists the records' fields without the docstrings
written under them. This renders every record of the contract, each field with
its type and its docstring, from the source itself, so the reference cannot
describe a field the code does not have: a test fails when the file is not what
this module renders. Regenerate it with

    python -m perfdsl.contract_doc docs/kernel-contract.md
"""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path

from perfdsl import kernel
from perfdsl.language_doc import write_reference

_HEADER = """# The kernel contract

What `perfdsl run` expects of the Python a study names (`module:attribute`): the
records of `perfdsl/kernel.py`, each field with its type and what it means. Generated
from the source by `python -m perfdsl.contract_doc docs/kernel-contract.md`; the
calling conventions below are the module's own words. `docs/writing-kernels.md`
says how to use them.
"""


def _fields(node: ast.ClassDef, source: str) -> list[tuple[str, str, str]]:
    """(name, annotation, docstring) of each annotated field, in the order declared."""
    fields = []
    body = node.body
    for index, statement in enumerate(body):
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        following = body[index + 1] if index + 1 < len(body) else None
        doc = (
            following.value.value
            if isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
            and isinstance(following.value.value, str)
            else ""
        )
        annotation = ast.get_source_segment(source, statement.annotation) or ""
        fields.append((statement.target.id, annotation, inspect.cleandoc(doc)))
    return fields


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def render_contract() -> str:
    """The reference as Markdown."""
    source = Path(inspect.getfile(kernel)).read_text(encoding="utf-8")
    tree = ast.parse(source)
    lines = [_HEADER, "## Calling conventions", "", inspect.cleandoc(kernel.__doc__ or ""), ""]
    for node in tree.body:
        if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
            continue
        lines += [f"## `{node.name}`", "", inspect.cleandoc(ast.get_docstring(node) or ""), ""]
        fields = _fields(node, source)
        if fields:
            lines += ["| Field | Type | Meaning |", "| --- | --- | --- |"]
            lines += [f"| `{name}` | `{_cell(kind)}` | {_cell(doc) or '—'} |" for name, kind, doc in fields]
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def main(argv: list[str]) -> int:
    """Write the contract's reference to the path given (stdout without one)."""
    return write_reference(render_contract(), argv)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
