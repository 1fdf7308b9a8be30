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

from pathlib import Path

import attrs

from perfdsl.bundle import versions
from perfdsl.bundle.plain import EMPTY, Plain, field

IMPORTED = "imported.json"


@attrs.frozen
class ImportedSide(Plain):
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


@attrs.frozen
class CounterSide(Plain):
    """One implementation's rows of an imported Nsight Compute profile."""

    file: str
    source: str
    selector: str
    """The study's `entry`: a kernel name, or a regular expression matching every kernel of the arm."""
    kernels: tuple[str, ...]
    """The kernel names the selector matched at run time, in the file's order."""
    sha256: str


@attrs.frozen
class ImportedOperation(Plain):
    """One operation: its workload shape, modelled quantities and both imported sides."""

    name: str
    sizes: dict[str, int] = field(absent=EMPTY)
    models: dict[str, dict[str, float]] = field(absent=EMPTY)
    """Modelled quantity -> arm -> value at `sizes`, as in results.json."""
    baseline: ImportedSide
    change: ImportedSide
    counters: tuple[CounterSide, CounterSide] | None = None
    """The baseline's and the change's profiled launches, where the study imports counters."""


@attrs.frozen
class ImportedApplication(Plain):
    """An application timed by imported request times: both arms, and what the study declares of it."""

    name: str
    uses: tuple[str, ...] = field(absent=EMPTY)
    share: float | None
    """The study's declared share of critical time (a claim: an imported file cannot measure f)."""
    baseline: ImportedSide
    change: ImportedSide


@attrs.frozen
class ImportedRun(Plain):
    """The whole of imported.json."""

    VERSIONS = versions.READABLE_IMPORTED
    FILE = IMPORTED

    schema: str
    study: str
    run_id: str
    started: str = field(absent=EMPTY)
    operations: tuple[ImportedOperation, ...] = field(absent=EMPTY)
    applications: tuple[ImportedApplication, ...] = ()


def is_imported_bundle(bundle: Path) -> bool:
    """A bundle of a wholly imported study: it has imported.json and no results.json."""
    try:
        return (Path(bundle) / IMPORTED).is_file()
    except PermissionError:
        return False  # a folder this user may not look into: the reader of a native bundle says so
