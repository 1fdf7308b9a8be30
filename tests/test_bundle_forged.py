"""Bundles whose files no run wrote: each is refused in one line, never a traceback or a hang.

Each forgery but the links is sealed again (`command_fuzz.reseal`), so the manifest holds and
the reader behind it is what is tested.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path

import command_fuzz as fuzz
import pytest
from evaluate_fixtures import CHECKED, make_bundle

from perfdsl.bundle.files import verify_bundle

SAMPLES = "samples/op/64x4096.csv"


def _bundle(tmp_path: Path) -> Path:
    return make_bundle(tmp_path / "forged", **CHECKED)  # type: ignore[arg-type]


def _refused(outcome: fuzz.Outcome, said: str) -> None:
    assert outcome.escaped is None, outcome.escaped
    assert fuzz.TRACEBACK not in outcome.stderr + outcome.stdout, outcome.stderr
    assert outcome.status == 2, outcome.stderr
    assert said in outcome.stderr, outcome.stderr


def _rewrite_samples(bundle: Path, change: object) -> None:
    path = bundle / SAMPLES
    with open(path, newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        change(row)  # type: ignore[operator]
    with open(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    fuzz.reseal(bundle)


@pytest.mark.parametrize(
    ("forge", "said"),
    [
        # A negative or 400-digit duration raised ValueError or OverflowError in the statistics.
        (
            lambda row: row.update(duration_ns="-5") if row["arm"] == "change" else None,
            "'-5', not a duration",
        ),
        (lambda row: row.update(duration_ns="9" * 400) if row["arm"] == "change" else None, "not a duration"),
        # Every row in one block: "block indices must be distinct across both arms".
        (lambda row: row.update(block="0"), "block 0 holds samples of both"),
    ],
)
def test_evaluate_refuses_samples_no_clock_or_sampler_wrote(tmp_path: Path, forge: object, said: str) -> None:
    bundle = _bundle(tmp_path)
    _rewrite_samples(bundle, forge)
    for command in ("evaluate", "compare"):
        argv = [command, str(bundle)] if command == "evaluate" else [command, str(bundle), str(bundle)]
        _refused(fuzz.invoke(argv, tmp_path), said)


def test_blocks_of_zero_ns_are_no_evidence_rather_than_a_traceback(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    _rewrite_samples(bundle, lambda row: row.update(duration_ns="0") if row["arm"] == "change" else None)
    outcome = fuzz.invoke(["evaluate", str(bundle)], tmp_path)
    assert outcome.escaped is None and fuzz.TRACEBACK not in outcome.stderr, outcome.escaped or outcome.stderr
    assert "`change` has blocks of 0 ns" in outcome.stdout


def test_a_manifest_nested_past_any_reader_is_unreadable_not_a_recursion_error(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    (bundle / "manifest.json").write_text("[" * 100_000 + "]" * 100_000)
    (problem,) = verify_bundle(bundle)
    assert problem == "`manifest.json` is unreadable: nested deeper than any file a run writes"
    _refused(fuzz.invoke(["evaluate", str(bundle)], tmp_path), "nested deeper than any file a run writes")


@pytest.mark.parametrize("target", ["folder", "loop", "device"])
def test_a_link_in_place_of_a_bundle_file_fails_verification_without_reading_it(
    tmp_path: Path, target: str
) -> None:
    # A link to /dev/zero was hashed forever; one to a folder or to itself raised in verify.
    bundle = _bundle(tmp_path)
    link = bundle / "results.json"
    link.unlink()
    link.symlink_to({"folder": str(tmp_path), "loop": "results.json", "device": os.devnull}[target])
    assert verify_bundle(bundle) == [
        "`results.json` is not a regular file (a link, folder or device), as no run writes one"
    ]
    outcome = fuzz.invoke(["verify", str(bundle)], tmp_path)
    assert outcome.escaped is None and outcome.status == 1 and fuzz.TRACEBACK not in outcome.stderr
