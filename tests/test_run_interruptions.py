"""Concurrent and interrupted work: two runs at once, evaluate and build killed midway,
an artifacts directory that cannot be written, and a full disk.

Nothing here may leave a half-written output: a bundle is whole or absent, and
evaluation.json and a report are the previous file or the whole new one.
Where this machine lets the test mount a file system (root), the read-only
directory and the full disk are real (a read-only tmpfs, a 1 MiB tmpfs filled
almost to the top); otherwise the disk is made full by failing the writer
in-process with ENOSPC.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from evaluate_fixtures import make_bundle
from run_support import FIXTURES, bundle_dirs, run, run_all, start

from perfdsl.bundle import files
from perfdsl.bundle.files import BundleWriter, verify_bundle
from perfdsl.cli import main

BROKEN_STUDY = FIXTURES / "broken.perf"
KILLS = 6
"""Interruptions per command and signal, at delays drawn across a whole run of it."""


@pytest.mark.slow
def test_two_runs_of_one_study_at_once_write_two_whole_bundles(tmp_path: Path) -> None:
    args = ("run", str(BROKEN_STUDY), "--target", "cpu", "--quick", "--artifacts", str(tmp_path))
    done = run_all({"first": args, "second": args}, parallel=2)
    for result in done.values():
        assert result.returncode == 0, result.stderr[-2000:]
    printed = {Path(result.stdout.strip().splitlines()[-1]) for result in done.values()}
    left = bundle_dirs(tmp_path, "broken_scale")
    assert len(printed) == 2 and set(left) == printed
    for bundle in left:
        assert verify_bundle(bundle) == []


def _mount(where: Path, options: str) -> bool:
    """Mount a tmpfs at `where`; False where this process may not."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)], capture_output=True)
    return done.returncode == 0


@contextlib.contextmanager
def _tmpfs(where: Path, options: str) -> Iterator[bool]:
    mounted = _mount(where, options)
    try:
        yield mounted
    finally:
        if mounted:
            subprocess.run(["umount", str(where)], check=True)


def _one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if "error:" in line]
    assert len(errors) == 1, stderr
    return errors[0]


@pytest.mark.slow
def test_a_read_only_artifacts_directory_is_one_line_and_no_bundle(tmp_path: Path) -> None:
    artifacts = tmp_path / "artifacts"
    with _tmpfs(artifacts, "size=1m,ro") as mounted:
        if not mounted:
            artifacts.chmod(0o555)
        done = run("run", str(BROKEN_STUDY), "--target", "cpu", "--quick", "--artifacts", str(artifacts))
        assert done.returncode == 2
        line = _one_error_line(done.stderr)
        assert "cannot write the bundle" in line and ("Read-only" in line or "Permission denied" in line)
        assert list(artifacts.iterdir()) == []


@pytest.mark.slow
def test_a_full_disk_is_one_line_and_no_bundle(tmp_path: Path) -> None:
    artifacts = tmp_path / "small"
    with _tmpfs(artifacts, "size=1m") as mounted:
        if not mounted:
            pytest.skip("cannot mount a tmpfs here; the in-process ENOSPC test covers the writer")
        # Room for the first files of the bundle, not for its compiled code.
        (artifacts / "filler").write_bytes(b"\0" * (1024 * 1024 - 96 * 1024))
        done = run("run", str(BROKEN_STUDY), "--target", "cpu", "--quick", "--artifacts", str(artifacts))
        assert done.returncode == 2
        assert "No space left on device" in _one_error_line(done.stderr)
        assert bundle_dirs(artifacts, "broken_scale") == []


def test_a_write_that_finds_the_disk_full_removes_the_whole_bundle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = BundleWriter.write_bytes
    calls = {"n": 0}

    def filling(self: BundleWriter, relpath: str, data: bytes) -> Path:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(self.tmp / relpath))
        return original(self, relpath, data)

    monkeypatch.setattr(BundleWriter, "write_bytes", filling)
    with pytest.raises(OSError, match="No space left"), BundleWriter(tmp_path, "study") as bundle:
        for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
            bundle.write_text(name, name)
    assert list((tmp_path / "study").iterdir()) == []


@pytest.fixture()
def evaluated(tmp_path: Path) -> tuple[Path, bytes]:
    """A synthetic bundle, and the bytes of its evaluation.json from one uninterrupted evaluate."""
    bundle = make_bundle(tmp_path / "bundle")
    reference = tmp_path / "reference" / bundle.name
    shutil.copytree(bundle, reference)
    assert run("evaluate", str(reference), timeout=300).returncode == 0
    return bundle, (reference / "evaluation.json").read_bytes()


def _interrupt(args: tuple[str, ...], delay_s: float, sig: signal.Signals) -> int:
    process = start(*args)
    time.sleep(delay_s)
    process.send_signal(sig)
    process.communicate(timeout=300)
    return process.returncode


def _timed(args: tuple[str, ...]) -> float:
    began = time.monotonic()
    assert run(*args, timeout=300).returncode == 0
    return time.monotonic() - began


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_evaluate_interrupted_anywhere_keeps_a_whole_evaluation(
    evaluated: tuple[Path, bytes], sig: signal.Signals
) -> None:
    bundle, whole = evaluated
    spare = bundle.parent / "spare"
    shutil.copytree(bundle, spare)
    duration = _timed(("evaluate", str(spare)))
    assert (spare / "evaluation.json").read_bytes() == whole
    rng = np.random.default_rng(14)
    for delay in rng.uniform(0.0, duration, KILLS):
        _interrupt(("evaluate", str(bundle)), float(delay), sig)
        path = bundle / "evaluation.json"
        assert not path.exists() or path.read_bytes() == whole
        # Every file the run wrote still matches the manifest; only the derived file may lag.
        assert [p for p in verify_bundle(bundle) if not p.startswith("`evaluation.json`")] == []
    assert run("evaluate", str(bundle), timeout=300).returncode == 0
    assert verify_bundle(bundle) == [] and (bundle / "evaluation.json").read_bytes() == whole


@pytest.fixture(scope="module")
def broken_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real run's bundle (the broken study's, the quickest), evaluated."""
    artifacts = tmp_path_factory.mktemp("broken")
    done = run("run", str(BROKEN_STUDY), "--target", "cpu", "--quick", "--artifacts", str(artifacts))
    assert done.returncode == 0, done.stderr[-2000:]
    bundle = Path(done.stdout.strip().splitlines()[-1])
    assert run("evaluate", str(bundle), timeout=300).returncode == 0
    return bundle


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGINT])
def test_build_interrupted_anywhere_keeps_the_previous_report(
    broken_bundle: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    report = tmp_path / "report.md"
    args = ("build", "--md", str(BROKEN_STUDY), "--results", str(broken_bundle), "-o", str(report))
    duration = _timed(args)
    whole = report.read_bytes()
    previous = b"the previous report\n"
    report.write_bytes(previous)
    rng = np.random.default_rng(7)
    for delay in rng.uniform(0.0, duration, KILLS):
        _interrupt(args, float(delay), sig)
        assert report.read_bytes() in (previous, whole)
        report.write_bytes(previous)


@pytest.mark.slow
def test_a_full_disk_during_evaluate_is_one_line_and_keeps_the_previous_evaluation(
    evaluated: tuple[Path, bytes], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bundle, _ = evaluated
    (bundle / "evaluation.json").write_bytes(b"{}")
    before = {p.name: p.read_bytes() for p in bundle.iterdir() if p.is_file()}

    @contextlib.contextmanager
    def full(path: Path) -> Iterator[None]:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        yield

    monkeypatch.setattr(files, "replacing", full)
    assert main(["evaluate", str(bundle)]) == 2
    assert "No space left on device" in _one_error_line(capsys.readouterr().err)
    assert {p.name: p.read_bytes() for p in bundle.iterdir() if p.is_file()} == before


@pytest.mark.slow
def test_a_killed_replacement_leaves_nothing_that_stops_the_bundle(evaluated: tuple[Path, bytes]) -> None:
    bundle, _ = evaluated
    leftover = bundle / ".evaluation.json.0123456789ab.tmp"
    leftover.write_bytes(b'{"half": ')
    assert verify_bundle(bundle) == []
    assert run("evaluate", str(bundle), timeout=300).returncode == 0
    assert not leftover.exists() and verify_bundle(bundle) == []


@pytest.mark.slow
def test_ctrl_c_to_the_process_group_prints_one_line_and_no_worker_traceback(tmp_path: Path) -> None:
    # A terminal's Ctrl-C reaches the workers too: each printed a KeyboardInterrupt traceback
    # above the run's own "interrupted; nothing half-written was kept".
    args = ("run", str(BROKEN_STUDY), "--target", "cpu", "--quick", "--artifacts", str(tmp_path))
    child = start(*args, new_session=True)
    assert child.stderr is not None
    seen = []
    for line in child.stderr:  # the workers are up once calibration starts
        seen.append(line)
        if "calibrating" in line:
            break
    time.sleep(1.0)
    os.killpg(child.pid, signal.SIGINT)
    rest = child.stderr.read()
    assert child.wait(timeout=60) == 130, "".join(seen) + rest
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest, rest
    assert rest.strip().splitlines()[-1] == "perfdsl run: interrupted; nothing half-written was kept"
    assert bundle_dirs(tmp_path, "broken_scale") == []
