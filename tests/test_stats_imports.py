"""perfdsl.stats is pure statistics: it imports no bundle, evaluation, report or runtime code.

Except evaluation.json's records (`perfdsl.bundle.evaluation`), which it builds,
and the stopping rules (`perfdsl.bundle.stopping`), which it takes as parameters:
plain attrs records that import nothing but each other, the plain walker and the
format versions. Every module under stats/ is walked, its subpackages too.
"""

import ast
from pathlib import Path

import perfdsl.stats

ALLOWED = {"attrs", "numpy", "scipy", "perfdsl"}
STDLIB = {"__future__", "collections", "math", "typing"}
PERFDSL = ("perfdsl.stats", "perfdsl.bundle.evaluation.", "perfdsl.bundle.stopping")
"""What of perfdsl the statistics may import."""


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
    paths = sorted(root.rglob("*.py"))
    assert root / "sequential" / "proportion.py" in paths
    for path in paths:
        where = path.relative_to(root).as_posix()
        for name in _imports(path):
            top = name.split(".")[0]
            assert top in ALLOWED | STDLIB, f"{where} imports {name}"
            if top == "perfdsl":
                assert name.startswith(PERFDSL), f"{where} imports {name}"
