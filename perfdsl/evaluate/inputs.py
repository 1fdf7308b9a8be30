"""A bundle's files as plain values: the evaluation reads nothing else.

`read_bundle` verifies the bundle against its manifest first (a tampered or
unfinished bundle is refused: its numbers are not what was measured), then
re-parses the study text the run used, and loads plan.json, results.json and
registration.json. `read_samples` turns one sample CSV into each arm's block
medians, the statistical unit (a block's median is one observation).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import attrs
import numpy as np

from perfdsl.bundle import versions
from perfdsl.bundle.files import verify_bundle
from perfdsl.bundle.plan import Plan
from perfdsl.bundle.registration import RegistrationRecord
from perfdsl.bundle.results import Results
from perfdsl.bundle.sampling import read_sample_csv
from perfdsl.bundle.versions import BundleFormatError, read_bundle_text, read_record
from perfdsl.nodes import Study
from perfdsl.parse import parse
from perfdsl.source import Source


class EvaluateError(Exception):
    """The bundle cannot be evaluated: not a bundle, tampered, or unreadable (one line)."""


@attrs.frozen
class BundleInputs:
    """Everything a bundle holds that the evaluation reads."""

    path: Path
    study: Study
    plan: Plan
    results: Results
    registration: RegistrationRecord

    def read_text(self, relpath: str) -> str:
        """A file of the bundle as text."""
        return (self.path / relpath).read_text(encoding="utf-8")


@attrs.frozen
class ArmSamples:
    """One arm's samples from a sample CSV, grouped into blocks in their order."""

    durations_ns: np.ndarray = attrs.field(eq=False)
    """Every sample, in file order."""
    block_medians_ns: np.ndarray = attrs.field(eq=False)
    """One median per block (blocks in the order they ran)."""
    block_indices: tuple[int, ...]
    """Each median's block index in the interleaved order (results.json's `blocks`)."""
    invalid: int
    """Samples the target marked invalid (the simulator's): not evidence."""


def read_bundle(path: Path) -> BundleInputs:
    """Verify a bundle and read its study, plan, results and registration.

    evaluation.json is left out of the verification: it is derived from the
    other files and is rewritten by every evaluation (see `replace_file`).
    """
    path = Path(path)
    if not path.is_dir():
        raise EvaluateError(f"{path}: no such bundle directory")
    problems = [p for p in verify_bundle(path) if f"`{versions.EVALUATION_FILE}`" not in p]
    if problems:
        shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
        raise EvaluateError(f"{path}: the bundle fails verification ({shown}): not evaluated")
    try:
        text = read_bundle_text(path, "study.perf")
        registration = read_record(path, "registration.json", lambda: RegistrationRecord.read(path))
        planned = read_record(path, "plan.json", lambda: Plan.read(path))
        results = read_record(path, "results.json", lambda: Results.read(path))
    except BundleFormatError as error:
        raise EvaluateError(str(error)) from None
    study = parse(Source("study.perf", text)).study
    if study is None:
        raise EvaluateError(f"{path}: the bundle's study.perf does not parse")
    return BundleInputs(path, study, planned, results, registration)


def read_samples(inputs: BundleInputs, relpath: str) -> dict[str, ArmSamples]:
    """Each arm's samples and block medians from a sample CSV (`bundle.sampling.Sample` rows)."""
    durations: dict[str, list[int]] = defaultdict(list)
    blocks: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    invalid: dict[str, int] = defaultdict(int)
    for sample in read_sample_csv(inputs.path / relpath):
        durations[sample.arm].append(sample.duration_ns)
        blocks[sample.arm][sample.block].append(sample.duration_ns)
        invalid[sample.arm] += not sample.valid
    return {
        arm: ArmSamples(
            durations_ns=np.asarray(values, dtype=float),
            block_medians_ns=np.array([np.median(b) for _, b in sorted(blocks[arm].items())]),
            block_indices=tuple(sorted(blocks[arm])),
            invalid=invalid[arm],
        )
        for arm, values in durations.items()
    }
