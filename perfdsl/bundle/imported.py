"""imported.json as records: which copied file and entry stands for each side of each operation.

A wholly imported study's bundle holds no samples of its own: `perfdsl run`
copies every result file it names into `imports/` (hashed in the manifest like
any other file) and writes this index. The evaluation reads the copies with
the same parsers `check` used, so the bundle is all it needs, and
`perfdsl verify` catches a copy changed after the run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from perfdsl.bundle import versions

IMPORTED = "imported.json"


@attrs.frozen
class ImportedSide:
    """One implementation: the copied file, its format, and the entry chosen in it."""

    file: str
    """The copy, relative to the bundle (`imports/<sha256 prefix>/<name>`)."""
    source: str
    """The path as the study wrote it, relative to the study's directory."""
    format: str
    selector: str
    """The study's `entry`: an exact name or a regular expression."""
    entry: str
    """The entry's full name in the file, as the selector resolved at run time."""
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ImportedSide:
        return cls(**{field.name: str(data[field.name]) for field in attrs.fields(cls)})


@attrs.frozen
class ImportedOperation:
    """One operation: its workload shape, modelled quantities and both imported sides."""

    name: str
    sizes: dict[str, int]
    models: dict[str, dict[str, float]]
    """Modelled quantity -> arm -> value at `sizes`, as in results.json."""
    baseline: ImportedSide
    change: ImportedSide

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sizes": dict(self.sizes),
            "models": self.models,
            "baseline": self.baseline.to_json(),
            "change": self.change.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ImportedOperation:
        return cls(
            name=str(data["name"]),
            sizes={str(k): int(v) for k, v in (data.get("sizes") or {}).items()},
            models=dict(data.get("models") or {}),
            baseline=ImportedSide.from_json(data["baseline"]),
            change=ImportedSide.from_json(data["change"]),
        )


@attrs.frozen
class ImportedRun:
    """The whole of imported.json."""

    schema: str
    study: str
    run_id: str
    started: str
    operations: tuple[ImportedOperation, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "study": self.study,
            "run_id": self.run_id,
            "started": self.started,
            "operations": [op.to_json() for op in self.operations],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], path: Path) -> ImportedRun:
        schema = str(versions.check_version(data, path, (versions.IMPORTED,)))
        try:
            return cls(
                schema=schema,
                study=str(data["study"]),
                run_id=str(data["run_id"]),
                started=str(data.get("started", "")),
                operations=tuple(ImportedOperation.from_json(op) for op in data.get("operations") or ()),
            )
        except (KeyError, TypeError, ValueError) as error:
            raise versions.BundleFormatError(f"{path}: malformed: {error!r}") from None

    @classmethod
    def read(cls, bundle: Path) -> ImportedRun:
        """Read a bundle's imported.json (OSError, ValueError or BundleFormatError)."""
        path = Path(bundle) / IMPORTED
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")), path)


def is_imported_bundle(bundle: Path) -> bool:
    """A bundle of a wholly imported study: it has imported.json and no results.json."""
    return (Path(bundle) / IMPORTED).is_file()
