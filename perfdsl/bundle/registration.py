"""registration.json as a record: the `predict` section's hash, written before any result.

The run registers the hash first; the evaluation rechecks it against the
bundle's study.perf (and a current study file), so an edited prediction shows.
"""

from __future__ import annotations

import attrs

from perfdsl.bundle.plain import Plain, field

REGISTRATION = "registration.json"


@attrs.frozen
class RegistrationRecord(Plain):
    """What the run registered, and when; a key the file lacks reads as None."""

    FILE = REGISTRATION

    predict_hash: str | None = field(absent=None)
    """SHA-256 of the study's `predict` section, as the run saw it."""
    study_hash: str | None = field(absent=None)
    registered: str | None = field(absent=None)
    """UTC time of the registration, `YYYY-MM-DDTHH:MM:SSZ`."""
