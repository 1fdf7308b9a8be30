"""Were the predictions registered before the results? The `predict` hash, rechecked.

The run records the SHA-256 of the study's `predict` section (with its
stopping rule, where it declares one) in registration.json before any result
exists. Two checks follow from it: the bundle's own study.perf must still
hash to it (else the bundle's study was edited after the run), and the study
a report is built from, when given, must hash to it too (else its predictions
were edited after seeing the results, which the report's first page must say).
"""

from __future__ import annotations

from pathlib import Path

import attrs

from perfdsl.bundle.evaluation.verdicts import CurrentStudy, Registration
from perfdsl.bundle.registration import RegistrationRecord
from perfdsl.nodes import Study
from perfdsl.parse import parse
from perfdsl.plan import predict_section_hash
from perfdsl.source import Source


def check_registration(registration: RegistrationRecord, bundle_study: Study) -> Registration:
    """Compare the registered hash with the bundle's study. A current study file is judged apart
    (`check_current`, `with_current`): the evaluation stays a function of the bundle alone."""
    registered = registration.predict_hash
    bundle_hash = predict_section_hash(bundle_study)
    matches = registered == bundle_hash
    message = (
        "the predictions were registered before the results"
        if matches
        else "the bundle's `predict` section or stopping rule does not match the registered hash"
    )
    return Registration(
        registered_hash=registered,
        registered_at=registration.registered,
        bundle_hash=bundle_hash,
        matches=matches,
        current=None,
        message=message,
    )


def with_current(registration: Registration, path: Path, study: Study | None = None) -> Registration:
    """The registration with the current study file at `path` judged against it, for what
    `perfdsl evaluate --study` reports (its CI files, `--fail-on`, the summary it prints)."""
    return attrs.evolve(registration, current=check_current(registration.registered_hash, path, study))


def check_current(registered: str | None, path: Path, study: Study | None = None) -> CurrentStudy:
    """Whether the `predict` section of the study at `path` is the one registered.

    `study` is that file parsed, where the caller has it (`perfdsl build` checked it): it is
    not read and parsed again.
    """
    if study is None:
        try:
            study = parse(Source.read(path)).study
        except (OSError, UnicodeDecodeError) as error:
            return CurrentStudy(str(path), None, False, f"cannot read the current study: {error}")
    if study is None:
        return CurrentStudy(str(path), None, False, "the current study does not parse")
    digest = predict_section_hash(study)
    if digest == registered:
        return CurrentStudy(str(path), digest, True, "the `predict` section is the one registered")
    return CurrentStudy(
        str(path),
        digest,
        False,
        "the `predict` section or the stopping rule was edited after the run: "
        "these predictions were not registered",
    )
