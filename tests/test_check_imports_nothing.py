"""`check` is static: it never imports or runs the Python a study refers to.

The study below points every reference at a module that, if imported, writes a
marker file. Checking it, in-process and through the CLI, must leave no marker
and no module behind.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from perfdsl.commands.check import diagnose
from perfdsl.source import Source

ROOT = Path(__file__).resolve().parent.parent
MODULE = "perfdsl_import_sentinel"


def _study_with_sentinel(tmp_path: Path) -> tuple[Path, Path]:
    """A clean study whose references all name the sentinel module, and the marker path."""
    marker = tmp_path / "imported.marker"
    package = tmp_path / "modules"
    package.mkdir()
    (package / f"{MODULE}.py").write_text(
        f"from pathlib import Path\nPath({str(marker)!r}).write_text('imported')\n"
        "def run(*args):\n    return None\n",
        encoding="utf-8",
    )
    text = (ROOT / "studies" / "rmsnorm_fusion.perf").read_text(encoding="utf-8")
    for old in (
        "kernels.rmsnorm:unfused",
        "kernels.rmsnorm:fused",
        "kernels.rmsnorm:reference",
        "kernels.apps:decoder_step",
        "kernels.copy:copy",
    ):
        assert old in text
        text = text.replace(old, f"{MODULE}:run")
    study = tmp_path / "sentinel.perf"
    study.write_text(text, encoding="utf-8")
    return study, marker


def test_check_in_process_imports_nothing(tmp_path: Path, monkeypatch) -> None:
    study, marker = _study_with_sentinel(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path / "modules"))
    found = diagnose(Source.read(study))
    assert [d.code for d in found] == []
    assert not marker.exists()
    assert MODULE not in sys.modules


def test_check_cli_imports_nothing(tmp_path: Path) -> None:
    study, marker = _study_with_sentinel(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "perfdsl", "check", str(study)],
        cwd=tmp_path / "modules",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stderr == ""
    assert not marker.exists()


def test_sentinel_does_mark_an_import(tmp_path: Path) -> None:
    """The two tests above mean something only if importing the module leaves the marker."""
    _, marker = _study_with_sentinel(tmp_path)
    subprocess.run(
        [sys.executable, "-c", f"import {MODULE}"], cwd=tmp_path / "modules", check=True, timeout=60
    )
    assert marker.exists()


# What `perfdsl check` of a study that runs its own kernels must not load: the run and
# report stages' heavy dependencies, the import readers and plan records that only
# an imported study or a run needs, and Lark (a text that parses is parsed from the
# shipped plain tables; Lark is loaded for a syntax error's message).
NOT_ON_THE_CHECK_PATH = (
    "lark",
    "numpy",
    "numba",
    "scipy",
    "weasyprint",
    "matplotlib",
    "perfdsl.imports.registry",
    "perfdsl.bundle.plan",
    "perfdsl.plan",
)


def test_check_of_a_study_loads_none_of_the_heavy_modules_and_writes_nothing(tmp_path: Path) -> None:
    """The parser's tables are shipped (perfdsl/parser_tables.py): no cache is written, neither
    in the user's home nor in the temporary directory, where Lark's `cache=True` kept them."""
    probe = (
        "import contextlib, io, sys\n"
        "from perfdsl.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    status = main(['check', {str(ROOT / 'studies' / 'rmsnorm_fusion.perf')!r}])\n"
        f"print(status, [m for m in {NOT_ON_THE_CHECK_PATH!r} if m in sys.modules])"
    )
    home, temporary = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    temporary.mkdir()
    env = {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"), "TMPDIR": str(temporary)}
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    assert result.stdout.strip() == "0 []", result.stdout + result.stderr
    assert [*home.rglob("*"), *temporary.rglob("*")] == []
