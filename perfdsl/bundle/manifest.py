"""manifest.json as a record: every file of a bundle with its SHA-256 and size.

`perfdsl.bundle.files` writes the manifest (last, when a run ends, and again when
the evaluation replaces a file) and rechecks a bundle against it; this is the
record the report lists from, so the report names no key of the file.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from perfdsl.bundle.files import MANIFEST


@attrs.frozen
class ManifestEntry:
    """One file of the bundle, by its path relative to the bundle."""

    path: str
    sha256: str
    """Hex digest of the file's bytes."""
    size: int | None
    """Bytes; None where the manifest did not give a number."""

    @classmethod
    def from_json(cls, path: str, data: Any) -> ManifestEntry:
        entry: Mapping[str, Any] = data if isinstance(data, Mapping) else {}
        size = entry.get("size")
        return cls(
            path=path,
            sha256=str(entry.get("sha256", "")),
            size=size if isinstance(size, int) else None,
        )


@attrs.frozen
class Manifest:
    """The whole of manifest.json: the run it belongs to and its files, sorted by path."""

    run_id: str | None
    files: tuple[ManifestEntry, ...]

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Manifest:
        run_id = data.get("run_id")
        files = data.get("files")
        listed = files if isinstance(files, Mapping) else {}
        return cls(
            run_id=None if run_id is None else str(run_id),
            files=tuple(ManifestEntry.from_json(str(path), entry) for path, entry in sorted(listed.items())),
        )

    @classmethod
    def read(cls, bundle: Path) -> Manifest:
        """Read a bundle's manifest.json (OSError or ValueError)."""
        path = Path(bundle) / MANIFEST
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, Mapping):
            raise ValueError(f"{path}: not a JSON object")
        return cls.from_json(data)
