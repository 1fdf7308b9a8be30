"""A bundle's records as the evaluation reads them: nothing else is read but the sample and probe CSVs.

`open_evaluated` opens a bundle for `perfdsl evaluate` and the cross-run views
(`bundle.opened.open_bundle`: verified once, a tampered or unfinished bundle is
refused, its numbers not being what was measured), with the evaluation's own
one-line refusals. `inputs_of` adds the parsed study the run used.
`read_samples` turns one sample CSV into each arm's block medians, the
statistical unit (a block's median is one observation).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import attrs
import numpy as np

from perfdsl.bundle.arms import EMPTY_ARM
from perfdsl.bundle.files import not_a_bundle
from perfdsl.bundle.opened import STUDY_FILE, Bundle, BundleRefused, open_bundle
from perfdsl.bundle.plan import Plan
from perfdsl.bundle.registration import RegistrationRecord
from perfdsl.bundle.results import Results
from perfdsl.bundle.sampling import read_sample_columns
from perfdsl.bundle.versions import BundleFormatError
from perfdsl.nodes import Study
from perfdsl.parse import parse
from perfdsl.source import Source


class EvaluateError(Exception):
    """The bundle cannot be evaluated: not a bundle, tampered, or unreadable (one line)."""


@attrs.frozen
class BundleInputs:
    """An opened bundle's records the evaluation reads, with the study it ran parsed."""

    path: Path
    study: Study
    plan: Plan
    results: Results
    registration: RegistrationRecord


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


def open_evaluated(path: Path) -> Bundle:
    """Open a bundle to evaluate; EvaluateError (one line) when it is not one, fails its manifest
    (evaluation.json apart: it is what is rewritten) or has a file that does not read."""
    try:
        return open_bundle(path)
    except BundleRefused as refused:
        why = not_a_bundle(Path(path))
        if why:
            raise EvaluateError(f"{path}: {why}") from None
        problems = refused.problems
        shown = "; ".join(problems[:3]) + ("; ..." if len(problems) > 3 else "")
        raise EvaluateError(
            f"{path}: the bundle fails verification ({shown}): not evaluated; "
            f"`perfdsl verify {path}` lists every file that changed"
        ) from None
    except BundleFormatError as error:
        raise EvaluateError(str(error)) from None
    except (OSError, ValueError, KeyError) as error:
        raise EvaluateError(f"{path}: unreadable bundle file: {error}") from None


def inputs_of(bundle: Bundle, study: Study | None = None) -> BundleInputs:
    """The evaluation's inputs: the bundle's records and its study, parsed here unless `study`
    is it already (parsed from the same text, as `perfdsl build` has it)."""
    if study is None or study.source.text != bundle.study_text:
        study = parse(Source(STUDY_FILE, bundle.study_text)).study
    if study is None:
        raise EvaluateError(f"{bundle.path}: the bundle's study.perf does not parse")
    return BundleInputs(bundle.path, study, bundle.plan, bundle.results, bundle.registration)


def _one_arm_a_block(path: Path, blocks: dict[str, dict[int, list[int]]]) -> None:
    """BundleFormatError where one block index holds samples of two timed arms: the sampler numbers
    their blocks across arms, so such a file was not written by a run (its pairing raised
    ValueError). The empty call's two overhead blocks are numbered apart, 0 and 1."""
    owner: dict[int, str] = {}
    for arm, indices in blocks.items():
        if arm == EMPTY_ARM:
            continue
        for index in indices:
            other = owner.setdefault(index, arm)
            if other != arm:
                raise BundleFormatError(
                    f"{path}: block {index} holds samples of both `{other}` and `{arm}`; "
                    "the file is not the one the run wrote: run the study again"
                )


def read_samples(inputs: BundleInputs, relpath: str) -> dict[str, ArmSamples]:
    """Each arm's samples and block medians from a sample CSV (`bundle.sampling.Sample` rows)."""
    columns = read_sample_columns(inputs.path / relpath)
    durations: dict[str, list[int]] = defaultdict(list)
    blocks: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    invalid: dict[str, int] = defaultdict(int)
    for arm, block, duration, valid in zip(
        columns["arm"], columns["block"], columns["duration_ns"], columns["valid"], strict=True
    ):
        durations[arm].append(duration)
        blocks[arm][block].append(duration)
        invalid[arm] += not valid
    _one_arm_a_block(inputs.path / relpath, blocks)
    return {
        arm: ArmSamples(
            durations_ns=np.asarray(values, dtype=float),
            block_medians_ns=np.array([np.median(b) for _, b in sorted(blocks[arm].items())]),
            block_indices=tuple(sorted(blocks[arm])),
            invalid=invalid[arm],
        )
        for arm, values in durations.items()
    }
