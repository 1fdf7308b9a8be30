"""A run directory this user may not look into is named and left out, never a traceback."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from evaluate_fixtures import CHECKED, make_bundle
from unprivileged import without_file_overrides

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow  # the CLI started case by case, as another user


def _perfdsl(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*without_file_overrides(), sys.executable, "-m", "perfdsl", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )


def test_history_and_build_name_a_run_they_cannot_read(tmp_path: Path) -> None:
    # An unreadable older run in artifacts/<study>/ crashed `history` and `build` with
    # PermissionError, and `build --results` of it too.
    bundle = make_bundle(tmp_path / "made", **CHECKED)  # type: ignore[arg-type]
    study = tmp_path / "planted.perf"
    shutil.copy(bundle / "study.perf", study)
    artifacts = bundle.parent.parent
    closed = bundle.parent / "20200101T000000Z-aaaaaa"
    closed.mkdir()
    closed.chmod(0)
    try:
        history = _perfdsl("history", "--artifacts", str(artifacts), "-o", "h.html", str(study), cwd=tmp_path)
        built = _perfdsl("build", "--md", "--results", str(closed), "-o", "r.md", str(study), cwd=tmp_path)
    finally:
        closed.chmod(0o755)
    said = f"{closed}: cannot be read: Permission denied (this user may not look into it)"
    assert history.returncode == 0 and f"warning: left out {said}" in history.stderr, history.stderr
    assert built.returncode == 2 and built.stderr.strip() == f"perfdsl build: error: {said}", built.stderr


def test_a_read_only_bundle_is_reported_from_an_evaluation_in_memory(tmp_path: Path) -> None:
    # An archived, read-only bundle without evaluation.json was refused, naming the temporary
    # file the write had tried: ".evaluation.json.1c57613763ce.tmp: cannot write".
    bundle = make_bundle(tmp_path / "made", **CHECKED)  # type: ignore[arg-type]
    study = tmp_path / "planted.perf"
    shutil.copy(bundle / "study.perf", study)
    (bundle / "evaluation.json").unlink(missing_ok=True)
    for path in (bundle, *bundle.rglob("*")):
        path.chmod(0o555 if path.is_dir() else 0o444)
    try:
        built = _perfdsl("build", "--md", "--results", str(bundle), "-o", "r.md", str(study), cwd=tmp_path)
    finally:
        for path in (bundle, *bundle.rglob("*")):
            path.chmod(0o755 if path.is_dir() else 0o644)
    assert built.returncode == 0, built.stderr
    assert "could not keep its evaluation.json there (Permission denied)" in built.stderr
    assert not (bundle / "evaluation.json").exists()
    assert "## Decision and result" in (tmp_path / "r.md").read_text(encoding="utf-8")
