"""An imported Nsight Compute profile as mechanism evidence: one arm's launches, counted in the study's words.

A study names the rows of an `ncu --csv` file (either page) that are one
implementation's by kernel name: the exact name, or a regular expression that
fully matches every kernel of that implementation (an unfused baseline is
several kernels, each its own entry of the parsed file). Every launch of every
matched kernel belongs to the arm, so the profile should hold one call of
each implementation, as perfdsl's own counting profiles one call.

The arm's metrics are aggregated as perfdsl's own counters are (`.sum`
counters add up over launches; ratios and percentages are averaged weighted by
each launch's duration) and turned into the study's measures by the same
mapping (`runtime.counters.metrics`), so "bytes" means DRAM bytes read plus
written whichever tool ran ncu.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import attrs

from perfdsl.counter_metrics import MEASURE_METRICS, TIME_METRIC, quantities
from perfdsl.imports.evidence import Entry, ImportedEvidence, ImportFormatError
from perfdsl.imports.select import EntryNotFound

COUNTER_FORMAT = "ncu-raw"
"""The one import format that holds counters per launch."""


@attrs.frozen
class CountedArm:
    """What the selected rows count for one implementation."""

    kernels: tuple[str, ...]
    """The matched kernel names, in the file's order."""
    launches: int
    quantities: dict[str, float | None]
    """Measure -> its number (None where the file lacks a metric it needs)."""


def select_kernels(evidence: ImportedEvidence, selector: str) -> tuple[Entry, ...]:
    """The kernel named exactly `selector`, else every kernel whose name `selector` fully matches.

    EntryNotFound (naming the file and the kernels it holds) when nothing matches.
    """
    exact = tuple(entry for entry in evidence.entries if entry.name == selector)
    if exact:
        return exact
    try:
        pattern = re.compile(selector)
    except re.error as error:
        raise EntryNotFound(
            f"{evidence.label.path}: no kernel named `{selector}`, and it is not a valid regular expression "
            f"({error})"
        ) from None
    found = tuple(entry for entry in evidence.entries if pattern.fullmatch(entry.name))
    if not found:
        names = ", ".join(f"`{name}`" for name in evidence.names[:12])
        raise EntryNotFound(f"{evidence.label.path}: no kernel matches `{selector}`; kernels: {names}")
    return found


def missing_metrics(entries: tuple[Entry, ...], measure: str) -> tuple[str, ...]:
    """The metrics `measure` needs that no launch of the entries reports (absent, or `n/a` throughout)."""
    return tuple(
        metric
        for metric in MEASURE_METRICS.get(measure, ())
        if not any(v is not None for e in entries for c in e.counters if c.metric == metric for v in c.values)
    )


def count_arm(entries: tuple[Entry, ...], measures: Iterable[str]) -> CountedArm:
    """The arm's launches and one number per measure, from its matched kernels."""
    launches = [_launch(entry, i) for entry in entries for i in range(_launch_count(entry))]
    metrics: dict[str, float | None] = {}
    names = {metric for launch in launches for metric in launch}
    times = [launch.get(TIME_METRIC) for launch in launches]
    weights = [t if t is not None and t > 0 else 0.0 for t in times]
    if 0.0 in weights:
        weights = [1.0] * len(launches)
    for metric in names:
        pairs = [
            (v, w)
            for launch, w in zip(launches, weights, strict=True)
            if (v := launch.get(metric)) is not None
        ]
        if not pairs:
            metrics[metric] = None
        elif metric.endswith(".sum"):
            metrics[metric] = sum(v for v, _ in pairs)
        else:
            metrics[metric] = sum(v * w for v, w in pairs) / sum(w for _, w in pairs)
    wanted = [m for m in measures if m in MEASURE_METRICS]
    counted = quantities(wanted, metrics, len(launches))
    return CountedArm(tuple(entry.name for entry in entries), len(launches), counted)


def _launch_count(entry: Entry) -> int:
    counts = {len(counter.values) for counter in entry.counters}
    if len(counts) > 1:
        raise ImportFormatError(f"`{entry.name}`: its metrics have different numbers of launches")
    return counts.pop() if counts else 0


def _launch(entry: Entry, index: int) -> dict[str, float | None]:
    return {counter.metric: counter.values[index] for counter in entry.counters}
