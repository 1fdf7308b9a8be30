"""registration.json as a record: the `predict` section's hash, written before any result.

The run registers the hash first; the evaluation rechecks it against the
bundle's study.perf (and a current study file), so an edited prediction shows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

REGISTRATION = "registration.json"


@attrs.frozen
class RegistrationRecord:
    """What the run registered, and when."""

    predict_hash: str | None
    """SHA-256 of the study's `predict` section, as the run saw it."""
    study_hash: str | None
    registered: str | None
    """UTC time of the registration, `YYYY-MM-DDTHH:MM:SSZ`."""

    def to_json(self) -> dict[str, Any]:
        return {
            "predict_hash": self.predict_hash,
            "study_hash": self.study_hash,
            "registered": self.registered,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RegistrationRecord:
        def text(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        return cls(text("predict_hash"), text("study_hash"), text("registered"))

    @classmethod
    def read(cls, bundle: Path) -> RegistrationRecord:
        """Read a bundle's registration.json (OSError or ValueError)."""
        return cls.from_json(json.loads((Path(bundle) / REGISTRATION).read_text(encoding="utf-8")))
