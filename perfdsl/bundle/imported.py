"""imported.json as records: which copied file and entry stands for each side of each operation.

A wholly imported study's bundle holds no samples of its own: `perfdsl run`
copies every result file it names into `imports/` (hashed in the manifest like
any other file) and writes this index: the timing files of each operation's
arms, the Nsight Compute profile its counters come from where it has one, and
the request-time files of each imported application. `counters` and
`applications` are optional, so a bundle written before they existed reads
as it did. The evaluation reads the copies with
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
class CounterSide:
    """One implementation's rows of an imported Nsight Compute profile."""

    file: str
    source: str
    selector: str
    """The study's `entry`: a kernel name, or a regular expression matching every kernel of the arm."""
    kernels: tuple[str, ...]
    """The kernel names the selector matched at run time, in the file's order."""
    sha256: str

    def to_json(self) -> dict[str, Any]:
        return {**attrs.asdict(self), "kernels": list(self.kernels)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CounterSide:
        return cls(
            file=str(data["file"]),
            source=str(data["source"]),
            selector=str(data["selector"]),
            kernels=tuple(str(k) for k in data["kernels"]),
            sha256=str(data["sha256"]),
        )


@attrs.frozen
class ImportedOperation:
    """One operation: its workload shape, modelled quantities and both imported sides."""

    name: str
    sizes: dict[str, int]
    models: dict[str, dict[str, float]]
    """Modelled quantity -> arm -> value at `sizes`, as in results.json."""
    baseline: ImportedSide
    change: ImportedSide
    counters: tuple[CounterSide, CounterSide] | None = None
    """The baseline's and the change's profiled launches, where the study imports counters."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "sizes": dict(self.sizes),
            "models": self.models,
            "baseline": self.baseline.to_json(),
            "change": self.change.to_json(),
            "counters": [side.to_json() for side in self.counters] if self.counters else None,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ImportedOperation:
        counters = data.get("counters")
        return cls(
            name=str(data["name"]),
            sizes={str(k): int(v) for k, v in (data.get("sizes") or {}).items()},
            # quantity -> arm -> the modelled amount, numbers throughout: the evaluation divides them.
            models={
                str(quantity): {str(arm): float(amount) for arm, amount in arms.items()}
                for quantity, arms in (data.get("models") or {}).items()
            },
            baseline=ImportedSide.from_json(data["baseline"]),
            change=ImportedSide.from_json(data["change"]),
            counters=(CounterSide.from_json(counters[0]), CounterSide.from_json(counters[1]))
            if counters
            else None,
        )


@attrs.frozen
class ImportedApplication:
    """An application timed by imported request times: both arms, and what the study declares of it."""

    name: str
    uses: tuple[str, ...]
    share: float | None
    """The study's declared share of critical time (a claim: an imported file cannot measure f)."""
    baseline: ImportedSide
    change: ImportedSide

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "uses": list(self.uses),
            "share": self.share,
            "baseline": self.baseline.to_json(),
            "change": self.change.to_json(),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ImportedApplication:
        share = data.get("share")
        return cls(
            name=str(data["name"]),
            uses=tuple(str(u) for u in data.get("uses") or ()),
            share=None if share is None else float(share),
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
    applications: tuple[ImportedApplication, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "study": self.study,
            "run_id": self.run_id,
            "started": self.started,
            "operations": [op.to_json() for op in self.operations],
            "applications": [app.to_json() for app in self.applications],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], path: Path) -> ImportedRun:
        schema = str(versions.check_version(data, path, versions.READABLE_IMPORTED))
        try:
            return cls(
                schema=schema,
                study=str(data["study"]),
                run_id=str(data["run_id"]),
                started=str(data.get("started", "")),
                operations=tuple(ImportedOperation.from_json(op) for op in data.get("operations") or ()),
                applications=tuple(
                    ImportedApplication.from_json(app) for app in data.get("applications") or ()
                ),
            )
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise versions.BundleFormatError(f"{path}: malformed: {error!r}") from None

    @classmethod
    def read(cls, bundle: Path) -> ImportedRun:
        """Read a bundle's imported.json (OSError, ValueError or BundleFormatError)."""
        path = Path(bundle) / IMPORTED
        return cls.from_json(json.loads(path.read_text(encoding="utf-8")), path)


def is_imported_bundle(bundle: Path) -> bool:
    """A bundle of a wholly imported study: it has imported.json and no results.json."""
    return (Path(bundle) / IMPORTED).is_file()
