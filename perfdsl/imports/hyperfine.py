"""hyperfine's `--export-json FILE`.

Layout: `results`, one object per command: `command` (or the `--command-name`),
`mean`, `stddev`, `median`, `user`, `system`, `min`, `max`, `times` (every
run's wall time, seconds), `exit_codes` and, for parameter scans,
`parameters`. Every run is one process start, so `times` are raw samples.
hyperfine runs all of one command's runs before the next command's: nothing
is interleaved, and the runs are one block. The file carries no version and no
environment.
"""

from __future__ import annotations

from pathlib import Path

from perfdsl.imports.evidence import Entry, ImportedEvidence, Label, Statistic, coarsest
from perfdsl.imports.reading import NS_PER_UNIT, load_json

FORMAT = "hyperfine"
_STATISTICS = ("mean", "median", "min", "max")


def parse_hyperfine(path: Path) -> ImportedEvidence:
    """Read a hyperfine JSON export: each command's `times` as one block of raw samples."""
    root, digest = load_json(path)
    entries = []
    for result in root.key("results").items():
        times = result.optional("times")
        samples = tuple(t.duration() * NS_PER_UNIT["s"] for t in times.items()) if times else ()
        codes = result.optional("exit_codes")
        if codes is not None:
            for code in codes.items():
                if code.value not in (0, None):
                    raise code.fail(
                        f"exit code 0 (a failed run of `{result.key('command').string()}` is no timing)"
                    )
        entries.append(
            Entry(
                name=result.key("command").string(),
                blocks=(samples,) if samples else (),
                statistics=tuple(
                    Statistic(name, result.key(name).duration() * NS_PER_UNIT["s"])
                    for name in _STATISTICS
                    if result.has(name)
                ),
                calls_per_sample=1,
            )
        )
    label = Label(
        tool="hyperfine",
        tool_version=None,
        granularity=coarsest(tuple(entries)),
        interleaved="no",
        environment=(),
        sha256=digest,
        path=str(path),
    )
    return ImportedEvidence(FORMAT, tuple(entries), label)
