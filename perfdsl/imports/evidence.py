"""What an imported file says, as frozen records: entries of samples in ns, and the file's label.

Every importer returns an `ImportedEvidence`: the timing (or counters) per
benchmark entry, normalised to nanoseconds, and a `Label` that says how much
the numbers can carry. A harness that keeps every sample it timed gives `raw`
samples (a sample may itself average several calls, as pyperf's loops do:
`Entry.calls_per_sample` says how many); one that keeps a single mean per
repetition gives `per_block` values; one that keeps only statistics gives
`aggregate`. Whether baseline and change were
interleaved decides whether drift falls on both: an import that cannot show it
is never evidence-grade, however many samples it has.
"""

from __future__ import annotations

from typing import Literal

import attrs

Granularity = Literal["raw", "per_block", "aggregate"]
Interleaved = Literal["yes", "no", "unknown"]

_COARSENESS: dict[Granularity, int] = {"raw": 0, "per_block": 1, "aggregate": 2}


class ImportFormatError(Exception):
    """A file is not what its format promises; the message names the file, the field and what was expected.

    The CLI turns it into a one-line error (exit 2): it is the user's input, not a bug.
    """


@attrs.frozen
class Statistic:
    """One summary number the file states itself (`mean`, `median`, `min` ...), in ns."""

    name: str
    value_ns: float


@attrs.frozen
class Counter:
    """One profiler metric of an entry: a value per profiled launch, in the metric's base unit."""

    metric: str
    unit: str
    """`byte`, `nsecond`, `hz`, a rate per `second`, or the unit the profiler printed for anything else."""
    values: tuple[float | None, ...]
    """None where the profiler printed `n/a`: absent, not zero."""


@attrs.frozen
class Entry:
    """One benchmark as the file names it: its timing blocks, its stated statistics, its counters."""

    name: str
    blocks: tuple[tuple[float, ...], ...] = ()
    """Samples in ns, grouped by block (a process, a repetition, a run); empty for aggregates only."""
    statistics: tuple[Statistic, ...] = ()
    calls_per_sample: int | None = None
    """How many calls each sample averages (pyperf loops, Google Benchmark iterations); None if unknown."""
    counters: tuple[Counter, ...] = ()

    @property
    def granularity(self) -> Granularity:
        """`raw` when blocks hold several samples, `per_block` when one value per block, else `aggregate`.

        A profiler's counters are one value per launch: `raw`, though the entry has no timing.
        """
        if not self.blocks:
            return "raw" if self.counters else "aggregate"
        return "per_block" if all(len(block) == 1 for block in self.blocks) else "raw"

    @property
    def samples(self) -> tuple[float, ...]:
        """Every sample, block after block."""
        return tuple(value for block in self.blocks for value in block)

    def statistic(self, name: str) -> float | None:
        """The file's own value of statistic `name` in ns, or None when it states none."""
        return next((s.value_ns for s in self.statistics if s.name == name), None)


@attrs.frozen
class Label:
    """What an imported file's numbers are, for the report to say beside them."""

    tool: str
    tool_version: str | None
    granularity: Granularity
    """The coarsest granularity among the file's timed entries."""
    interleaved: Interleaved
    environment: tuple[tuple[str, str], ...]
    """The environment fields the file itself carries, as (field, value), in the file's order."""
    sha256: str
    path: str

    @property
    def evidence_grade(self) -> bool:
        """Samples (not aggregates), and baseline and change interleaved: what a run of perfdsl gives."""
        return self.granularity != "aggregate" and self.interleaved == "yes"

    @property
    def caveats(self) -> tuple[str, ...]:
        """Why the import is not evidence-grade, one short phrase each; empty when it is."""
        found = []
        if self.granularity == "aggregate":
            found.append("aggregates only: no samples to bootstrap")
        if self.interleaved == "no":
            found.append("baseline and change were not interleaved: drift falls on one of them")
        elif self.interleaved == "unknown":
            found.append("the file does not show whether baseline and change were interleaved")
        return tuple(found)


@attrs.frozen
class ImportedEvidence:
    """One imported file: its entries by name, in the file's order, and its label."""

    format: str
    entries: tuple[Entry, ...]
    label: Label

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(entry.name for entry in self.entries)


def coarsest(entries: tuple[Entry, ...]) -> Granularity:
    """The label's granularity: a file is only as fine as its coarsest entry."""
    if not entries:
        return "aggregate"
    return max((entry.granularity for entry in entries), key=_COARSENESS.__getitem__)
