"""`open_bundle(path) -> Bundle`: a finished bundle, verified once, every file a record.

A command opens the bundle it was given once and hands the records on: the
evaluation, the report and the cross-run views read the `Bundle`, never the
directory again, so one command hashes the files once (`verify_bundle`) and
reads plan.json, results.json and the rest once each.

evaluation.json is left out of the verification: it is derived from the other
files and rewritten by every evaluation (`replace_file`), so a stale one is
something to rewrite, not a reason to refuse the bundle (`evaluation_current`
says which). Each command words a refusal its own way (`BundleRefused` carries
the problems), and a file of a version this code cannot read raises
`BundleFormatError` naming it.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from perfdsl.bundle import versions
from perfdsl.bundle.environment import ENVIRONMENT, EnvironmentRecord
from perfdsl.bundle.files import verify_bundle
from perfdsl.bundle.manifest import Manifest
from perfdsl.bundle.plan import Plan
from perfdsl.bundle.registration import RegistrationRecord
from perfdsl.bundle.results import Results

STUDY_FILE = "study.perf"
"""The study text the run used, as the bundle keeps it."""


class BundleRefused(Exception):
    """Not a bundle directory, or one that no longer matches its manifest."""

    def __init__(self, path: Path, problems: list[str]) -> None:
        super().__init__(f"{path}: {problems[0]}")
        self.path = path
        self.problems = problems


@attrs.frozen
class Bundle:
    """A verified bundle's files as records (evaluation.json apart: `Evaluation.read` reads it)."""

    path: Path
    study_text: str
    plan: Plan
    results: Results
    registration: RegistrationRecord
    manifest: Manifest
    environment: EnvironmentRecord | None
    environment_missing: str | None
    """Why `environment` is None: the bundle has no environment.json, or it does not read."""
    evaluation_current: bool
    """Whether evaluation.json is there and matches the manifest (else it is due)."""

    def file(self, relpath: str) -> Path:
        """Where one of the bundle's files is (a sample or probe CSV, say)."""
        return self.path / relpath


def open_bundle(path: Path) -> Bundle:
    """Verify a bundle once and read every file it holds as a record.

    BundleRefused when it is not a directory or fails its manifest;
    BundleFormatError, naming the file, for one of a version this code cannot
    read or one that does not read (missing, not UTF-8, a value of the wrong
    kind: `versions.read_record`).
    """
    path = Path(path)
    if not path.is_dir():
        raise BundleRefused(path, ["no such bundle directory"])
    problems = verify_bundle(path)
    stale = [p for p in problems if p.startswith(f"`{versions.EVALUATION_FILE}`")]
    problems = [p for p in problems if p not in stale]
    if problems:
        raise BundleRefused(path, problems)
    environment, missing = None, "the bundle has no environment.json"
    if (path / ENVIRONMENT).is_file():
        try:
            environment, missing = EnvironmentRecord.read(path), None
        except (OSError, ValueError) as error:
            missing = f"environment.json unreadable: {error}"
    study_text = versions.read_bundle_text(path, STUDY_FILE)
    return Bundle(
        path=path,
        study_text=study_text,
        registration=versions.read_record(path, "registration.json", lambda: RegistrationRecord.read(path)),
        plan=versions.read_record(path, "plan.json", lambda: Plan.read(path, study_text)),
        results=versions.read_record(path, "results.json", lambda: Results.read(path)),
        manifest=versions.read_record(path, "manifest.json", lambda: Manifest.read(path)),
        environment=environment,
        environment_missing=missing,
        evaluation_current=(path / versions.EVALUATION_FILE).is_file() and not stale,
    )
