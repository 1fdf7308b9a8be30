"""perfdsl.stats is pure statistics: it imports no bundle, evaluation, report or runtime code.

Except evaluation.json's records (`perfdsl.bundle.evaluation`), which it builds:
plain attrs classes that import nothing but each other and the format versions.
"""

import ast
from pathlib import Path

import perfdsl.stats

ALLOWED = {"attrs", "numpy", "scipy", "perfdsl"}
STDLIB = {"__future__", "collections", "math", "typing"}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
    return found


def test_stats_imports_only_numerics_and_itself():
    root = Path(perfdsl.stats.__file__).parent
    for path in sorted(root.glob("*.py")):
        for name in _imports(path):
            top = name.split(".")[0]
            assert top in ALLOWED | STDLIB, f"{path.name} imports {name}"
            if top == "perfdsl":
                assert name.startswith(("perfdsl.stats", "perfdsl.bundle.evaluation.")), (
                    f"{path.name} imports {name}"
                )
