"""The results bundle: atomic, verifiable, and never half-written."""

from __future__ import annotations

import datetime as dt
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import attrs
import numpy as np
import pytest
import runtime_fixtures as fx
from run_support import interruptible

from perfdsl.bundle.files import (
    MANIFEST,
    STALE_AFTER_S,
    BundleError,
    BundleWriter,
    bundles,
    latest_bundle,
    new_run_id,
    remove_stale,
    verify_bundle,
)
from perfdsl.bundle.sampling import TimingSettings
from perfdsl.runtime.correctness import check_variant
from perfdsl.runtime.targets import Target
from perfdsl.runtime.timing import prepare_arms, sample


@attrs.frozen
class Point:
    z: int
    a: str


def write_sample_bundle(artifacts: Path) -> Path:
    with BundleWriter(artifacts, "demo") as bundle:
        bundle.write_json("results.json", {"b": 1, "a": [Point(2, "x")]})
        bundle.write_csv("samples/raw.csv", ["arm", "ns"], [("A", 10), ("B", 12)])
        bundle.write_text("study.perf", "study demo {}\n")
    return bundle.path


def test_successful_bundle_has_manifest_and_verifies(tmp_path):
    path = write_sample_bundle(tmp_path)
    assert path.parent == tmp_path / "demo" and path.is_dir()
    assert [p.name for p in (tmp_path / "demo").iterdir()] == [path.name]
    manifest = json.loads((path / MANIFEST).read_text())
    assert sorted(manifest["files"]) == ["results.json", "samples/raw.csv", "study.perf"]
    entry = manifest["files"]["study.perf"]
    assert entry["size"] == len("study demo {}\n") and len(entry["sha256"]) == 64
    text = (path / "results.json").read_text()
    assert text.index('"a"') < text.index('"b"')  # sorted keys
    assert json.loads(text)["a"] == [{"a": "x", "z": 2}]
    assert (path / "samples/raw.csv").read_text() == "arm,ns\nA,10\nB,12\n"
    assert verify_bundle(path) == []
    assert latest_bundle(tmp_path, "demo") == path


def test_exception_inside_writer_leaves_nothing(tmp_path):
    with pytest.raises(RuntimeError), BundleWriter(tmp_path, "demo") as bundle:
        bundle.write_text("a.txt", "half")
        raise RuntimeError("kernel crashed")
    assert list((tmp_path / "demo").iterdir()) == []
    assert latest_bundle(tmp_path, "demo") is None


def test_an_interrupt_while_the_writer_opens_leaves_nothing(tmp_path, monkeypatch):
    # Between the temporary directory and the `with` body no __exit__ runs: a SIGINT sent as soon
    # as the directory appeared left it behind.
    def interrupted(self, text, *args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Path, "write_text", interrupted)
    with pytest.raises(KeyboardInterrupt), BundleWriter(tmp_path, "demo"):
        pass
    assert list((tmp_path / "demo").iterdir()) == []


@pytest.mark.parametrize("bad", ["../escape.txt", "/tmp/abs.txt", "a/../../b", MANIFEST, "."])
def test_writes_outside_the_bundle_are_refused(tmp_path, bad):
    with pytest.raises(BundleError), BundleWriter(tmp_path / "art", "demo") as bundle:
        bundle.write_text(bad, "x")
    assert not (tmp_path / "escape.txt").exists()
    assert list((tmp_path / "art" / "demo").iterdir()) == []


def test_duplicate_write_refused(tmp_path):
    with pytest.raises(BundleError, match="already written"), BundleWriter(tmp_path, "d") as b:
        b.write_text("a.txt", "1")
        b.write_text("a.txt", "2")


def test_verify_detects_modified_deleted_and_added_files(tmp_path):
    path = write_sample_bundle(tmp_path)
    (path / "study.perf").write_text("study demo { edited }\n")
    (path / "samples/raw.csv").unlink()
    (path / "extra.txt").write_text("sneaked in")
    assert verify_bundle(path) == [
        "`samples/raw.csv` is missing",
        "`study.perf` has changed since the run",
        "`extra.txt` is not in the manifest",
    ]
    (path / MANIFEST).unlink()
    assert verify_bundle(path) == [f"`{MANIFEST}` is missing"]


def test_same_size_edit_detected(tmp_path):
    path = write_sample_bundle(tmp_path)
    (path / "samples/raw.csv").write_text("arm,ns\nA,10\nB,13\n")
    assert verify_bundle(path) == ["`samples/raw.csv` has changed since the run"]


def test_run_ids_sort_by_time():
    early = new_run_id(dt.datetime(2026, 11, 29, 11, 30, tzinfo=dt.UTC))
    late = new_run_id(dt.datetime(2026, 11, 29, 11, 31, tzinfo=dt.UTC))
    assert early.startswith("20261129T113000Z-") and len(early) == 23
    assert sorted([late, early]) == [early, late]
    with pytest.raises(BundleError):
        BundleWriter(Path("x"), "demo", run_id="latest")


WRITER = r"""
import sys, time
from pathlib import Path
from perfdsl.bundle.files import BundleWriter
try:
    with BundleWriter(Path(sys.argv[1]), "demo") as bundle:
        bundle.write_text("samples.csv", "arm,ns\n")
        print("writing", flush=True)
        time.sleep(60)
        bundle.write_text("late.txt", "never")
except KeyboardInterrupt:
    sys.exit(130)
"""


def start_writer(artifacts: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])}
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(artifacts)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
        preexec_fn=interruptible,
    )
    assert child.stdout is not None and child.stdout.readline() == "writing\n"
    return child


def test_sigkill_midway_leaves_no_bundle_only_ignorable_temp(tmp_path):
    child = start_writer(tmp_path)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=30)
    (leftover,) = (tmp_path / "demo").iterdir()
    assert leftover.name.startswith(".tmp-")
    assert bundles(tmp_path, "demo") == [] and latest_bundle(tmp_path, "demo") is None
    assert "not a bundle" in verify_bundle(leftover)[0]
    # The next run notices the writer is dead and removes its temporary directory.
    path = write_sample_bundle(tmp_path)
    assert [p.name for p in (tmp_path / "demo").iterdir()] == [path.name]


def test_sigint_stops_cleanly(tmp_path):
    child = start_writer(tmp_path)
    child.send_signal(signal.SIGINT)
    assert child.wait(timeout=30) == 130
    assert list((tmp_path / "demo").iterdir()) == []


def test_stale_temp_dirs_by_owner_and_age(tmp_path):
    study = tmp_path / "demo"
    live, orphan, old, fresh = (study / f".tmp-{n}" for n in ("live", "orphan", "old", "fresh"))
    for d in (live, orphan, old, fresh):
        d.mkdir(parents=True)
    (live / ".owner").write_text(f"{socket.gethostname()} {os.getpid()}\n")
    (orphan / ".owner").write_text(f"{socket.gethostname()} {2**22 + 12345}\n")
    past = time.time() - STALE_AFTER_S - 60
    os.utime(old, (past, past))
    assert remove_stale(study) == [old, orphan]
    assert sorted(p.name for p in study.iterdir()) == [".tmp-fresh", ".tmp-live"]


@pytest.mark.slow
def test_runtime_records_round_trip_through_a_bundle(tmp_path):
    target = Target()
    shape = {"M": 2, "N": 4}
    arms = prepare_arms(target, fx.reference, [fx.good, fx.off_by_one], shape, np.float32, 2)
    record = sample(target, arms, TimingSettings(warmup_calls=1, warmup_ms=0, repeats=2, blocks=2))
    checked = check_variant(
        fx.reference, fx.off_by_one, target, [shape], [], [0], np.float32, {"rel_l2": 1e-6}
    )
    with BundleWriter(tmp_path, "demo") as bundle:
        bundle.write_json("timing.json", record.timing.to_json())
        bundle.write_json("correctness.json", checked)
        bundle.write_csv("samples.csv", *record.rows())
    timing = json.loads((bundle.path / "timing.json").read_text())
    assert len(record.samples) == 8 and len(timing["blocks"]) == 4
    assert timing["order"] == ["good", "off_by_one", "off_by_one", "good"]
    cases = json.loads((bundle.path / "correctness.json").read_text())["cases"]
    assert cases[0]["message"] == "1 element(s) of `out` never written"
    assert cases[0]["outputs"][0]["rel_l2"] is None
    rows = (bundle.path / "samples.csv").read_text().splitlines()
    assert rows[0] == "arm,block,position,buffer_set,duration_ns,valid" and len(rows) == 1 + 8 + 4
    assert verify_bundle(bundle.path) == []
