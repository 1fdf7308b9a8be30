"""The layers import only downward: the runtime never reads evaluation or report code.

The runtime writes bundle records; evaluate and report read them. A runtime
module importing from evaluate or report would make a run depend on the code
that judges it. Checked twice: statically (every import statement, at any
depth, read with `ast`) and by what a command leaves in `sys.modules`.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest
from run_support import QuickRuns

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "perfdsl"


def imported_modules(source: str, package: str) -> set[str]:
    """Every module a source file of `package` imports, at top level or inside a function."""
    found = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*parent, base] if base else parent)
            found.add(base)
            # `from perfdsl import report` imports the package perfdsl.report.
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _violations(layer: str, forbidden: tuple[str, ...]) -> list[str]:
    return sorted(
        f"{path.relative_to(ROOT)} imports {module}"
        for path in (PACKAGE / layer).rglob("*.py")
        for module in imported_modules(
            path.read_text(encoding="utf-8"), ".".join(path.relative_to(ROOT).parts[:-1])
        )
        if module.startswith(forbidden)
    )


def test_the_runtime_imports_nothing_from_evaluate_or_report() -> None:
    assert _violations("runtime", ("perfdsl.evaluate", "perfdsl.report")) == []


def test_the_bundle_records_import_neither_scipy_nor_numba_nor_the_layers_that_use_them() -> None:
    forbidden = ("scipy", "numba", "perfdsl.runtime", "perfdsl.evaluate", "perfdsl.report")
    assert _violations("bundle", forbidden) == []


def test_the_import_reader_sees_nested_and_relative_imports() -> None:
    source = "def f():\n    from ..evaluate import load\n    import perfdsl.report.markdown\n"
    found = imported_modules(source, "perfdsl.runtime")
    assert {"perfdsl.evaluate.load", "perfdsl.report.markdown"} <= found


def _modules_after(tmp_path: Path, *argv: str) -> tuple[int, list[str]]:
    """Run the CLI in a fresh interpreter; its status and the perfdsl, numpy, scipy and numba modules it
    loaded."""
    script = (
        "import json, sys\n"
        "from perfdsl.cli import main\n"
        f"status = main({list(argv)!r})\n"
        "loaded = [m for m in sys.modules if m.startswith(('perfdsl', 'numpy', 'scipy', 'numba'))]\n"
        "print(json.dumps([status, sorted(loaded)]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    status, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return status, modules


def test_check_loads_no_runtime_module(tmp_path: Path) -> None:
    status, modules = _modules_after(tmp_path, "check", "studies/")
    assert status == 0
    assert [m for m in modules if m.startswith("perfdsl.runtime")] == []


def test_check_loads_no_other_command_nor_the_bundle_records(tmp_path: Path) -> None:
    """Declaring every command's arguments imported `evaluate` and `build`, and with them the
    bundle and evaluation records: about half of `perfdsl check`'s start."""
    status, modules = _modules_after(tmp_path, "check", "studies/")
    assert status == 0
    assert [m for m in modules if m.startswith("perfdsl.commands.") and m != "perfdsl.commands.check"] == []
    assert [m for m in modules if m.startswith("perfdsl.bundle.evaluation")] == []


def test_check_of_a_sequential_study_loads_no_numpy(tmp_path: Path) -> None:
    """`perfdsl new` writes a sequential rule, whose cap `check` sizes (PD414): that took numpy,
    about 0.1 s of every check of a new study."""
    new = [sys.executable, "-m", "perfdsl", "new", "fresh"]
    made = subprocess.run(new, cwd=tmp_path, capture_output=True)
    assert made.returncode == 0, made.stderr
    status, modules = _modules_after(tmp_path, "check", str(tmp_path / "fresh.perf"))
    assert status == 0
    assert [m for m in modules if m.startswith("numpy")] == []


@pytest.mark.slow
def test_run_loads_no_report_or_evaluate_module(tmp_path: Path) -> None:
    study = "studies/transpose_bank_conflicts.perf"
    argv = ("run", study, "--target", "cpu", "--quick", "--artifacts", str(tmp_path))
    status, modules = _modules_after(tmp_path, *argv)
    assert status == 0
    assert "perfdsl.runtime.execute" in modules
    assert [m for m in modules if m.startswith(("perfdsl.report", "perfdsl.evaluate"))] == []


@pytest.mark.slow
def test_building_an_evaluated_bundle_loads_neither_the_statistics_nor_scipy(
    tmp_path: Path, quick_runs: QuickRuns
) -> None:
    """A current evaluation.json is read into its records (`bundle.evaluation`), not recomputed."""
    study = "studies/transpose_bank_conflicts.perf"
    bundle = str(quick_runs(study).copy(tmp_path))
    evaluated = subprocess.run(
        [sys.executable, "-m", "perfdsl", "evaluate", bundle],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert evaluated.returncode == 0, evaluated.stderr[-3000:]
    out = str(tmp_path / "report.md")
    status, modules = _modules_after(tmp_path, "build", "--md", study, "--results", bundle, "-o", out)
    assert status == 0
    assert "perfdsl.bundle.evaluation.evaluation" in modules
    loaded = [
        m for m in modules if m.startswith(("scipy", "numba", "perfdsl.stats", "perfdsl.evaluate.evaluation"))
    ]
    assert loaded == []
