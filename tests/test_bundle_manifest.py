"""manifest.json read back as the record the report lists from."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from perfdsl.bundle.files import MANIFEST, BundleWriter
from perfdsl.bundle.manifest import Manifest, ManifestEntry


def test_every_file_the_writer_listed_is_read_in_path_order(tmp_path: Path):
    with BundleWriter(tmp_path, "demo") as bundle:
        bundle.write_text("study.perf", "study s {}\n")
        bundle.write_bytes("samples/op/64x4096.csv", b"arm,block\n")
    manifest = Manifest.read(bundle.path)
    assert manifest.run_id == bundle.run_id
    assert [e.path for e in manifest.files] == ["samples/op/64x4096.csv", "study.perf"]
    study = manifest.files[1]
    assert study.size == len(b"study s {}\n")
    assert study.sha256 == hashlib.sha256(b"study s {}\n").hexdigest()


def test_an_entry_without_a_size_reads_as_none_and_a_list_is_refused(tmp_path: Path):
    manifest = Manifest.from_json({"run_id": "r", "files": {"a.json": {"sha256": "ab"}}})
    assert manifest.files == (ManifestEntry("a.json", "ab", None),)
    (tmp_path / MANIFEST).write_text(json.dumps([1, 2]))
    with pytest.raises(ValueError, match="not a JSON object"):
        Manifest.read(tmp_path)


@pytest.mark.parametrize("number", ["1e999", "-Infinity", "NaN"])
def test_a_manifest_holding_a_number_json_cannot_write_back_fails_verification(tmp_path: Path, number: str):
    """Found by the command fuzzer: a manifest with `-1e999` in it verified, and rewriting it for
    evaluation.json raised ValueError after evaluation.json had been replaced."""
    from perfdsl.bundle.files import BundleError, replace_file, verify_bundle

    with BundleWriter(tmp_path, "demo") as bundle:
        bundle.write_text("study.perf", "study s {}\n")
    text = (bundle.path / MANIFEST).read_text(encoding="utf-8")
    planted = text.replace('"run_id":', f'"created_s": {number},\n  "run_id":', 1)
    (bundle.path / MANIFEST).write_text(planted, encoding="utf-8")
    (problem,) = verify_bundle(bundle.path)
    assert problem.startswith(f"`{MANIFEST}` is unreadable: ")
    with pytest.raises(BundleError):
        replace_file(bundle.path, "evaluation.json", b"{}\n")
    assert not (bundle.path / "evaluation.json").exists()
    assert (bundle.path / MANIFEST).read_text(encoding="utf-8") == planted
