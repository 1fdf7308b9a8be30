"""Every run of a study in time order: each operation's ratio, where a regression entered, what changed.

A study's runs over commits answer "when did this get slower, and what else
changed then?". For each operation, each run contributes its workload-weighted
time ratio (change / baseline, the evaluation's own interval and verdict). A
regression **entered** at the first run whose verdict is `slower` when the run
before it was not. Beside it, the change's own time against the previous run
(the cross-run, unpaired comparison of `history.across`) shows a change that
got slower while its ratio hid it (the baseline slowed too, or the machine).
Every run's environment is compared with the previous run's, so a marked
change of driver or library sits next to the numbers it may explain. And each
operation's series of ratios is searched for steps (`history.steps`), at a
stated false-alarm rate, each named with the environment changes that
coincide with it.
"""

from __future__ import annotations

import attrs

from perfdsl.bundle.evaluation.kernels import Combined
from perfdsl.history.across import Combined as AcrossCombined
from perfdsl.history.across import compare_runs
from perfdsl.history.runs import Run, environment_changes
from perfdsl.history.steps import FALSE_ALARM, OperationSteps, operation_steps


@attrs.frozen
class Point:
    """One operation in one run."""

    combined: Combined | None
    missing: str | None
    entered: bool
    """A regression entered here: slower now, not slower in the previous run."""
    change_vs_previous: AcrossCombined | None
    """The change arm's weighted time, this run / the previous one; None for the first run or no evidence."""


@attrs.frozen
class Entry:
    """One run, what changed around the code since the previous run, and each operation's point."""

    run: Run
    changes: tuple[str, ...]
    """Environment differences from the previous run (none for the first)."""
    points: tuple[tuple[str, Point], ...]
    """(operation, point), in the operations' order."""

    def point(self, operation: str) -> Point | None:
        return dict(self.points).get(operation)


@attrs.frozen
class Timeline:
    """The runs of one study, oldest first."""

    study: str
    operations: tuple[str, ...]
    predictions: tuple[tuple[int, str], ...]
    """(line, text) of every prediction any run judged, in order of first appearance."""
    entries: tuple[Entry, ...]
    steps: tuple[OperationSteps, ...]
    """Each operation's change-point search, in the operations' order."""

    def steps_of(self, operation: str) -> OperationSteps | None:
        """The change-point search over `operation`'s runs (None when it was not made)."""
        return next((s for s in self.steps if s.operation == operation), None)

    def missing_of(self, operation: str) -> list[str | None]:
        """Why each run is not in `operation`'s series: no weighted ratio, or a run of another
        kind than the newest (quick among full runs, or full among quick); None where it is."""
        kind = self.entries[-1].run.evaluation.quick if self.entries else False
        other = (
            "a full run, left out of a series of quick runs"
            if kind
            else ("a quick (smoke) run, left out of a series of full runs")
        )
        return [
            other
            if entry.run.evaluation.quick != kind
            else point.missing
            if (point := entry.point(operation))
            else None
            for entry in self.entries
        ]

    def regressions(self) -> list[tuple[str, str]]:
        """(operation, run label) of every run where a regression entered."""
        return [
            (name, entry.run.label) for entry in self.entries for name, point in entry.points if point.entered
        ]


def build_timeline(runs: list[Run], *, false_alarm: float = FALSE_ALARM) -> Timeline:
    """The timeline of `runs` (all of one study), sorted by run id (time), with each operation's steps."""
    ordered = sorted(runs, key=lambda r: r.evaluation.run_id)
    operations = tuple(dict.fromkeys(op.name for r in ordered for op in r.evaluation.operations))
    predictions = tuple(dict.fromkeys((p.line, p.text) for r in ordered for p in r.evaluation.predictions))
    entries: list[Entry] = []
    previous: Run | None = None
    for run in ordered:
        across = compare_runs(previous, run) if previous is not None else None
        ops = {op.name: op for op in run.evaluation.operations}
        points = []
        for name in operations:
            op = ops.get(name)
            combined = op.combined if op else None
            missing = (op.combined_missing if op else "not in this run") if combined is None else None
            before = entries[-1].point(name) if entries else None
            was_slower = (
                before is not None and before.combined is not None and before.combined.verdict == "slower"
            )
            entered = (
                before is not None
                and combined is not None
                and combined.verdict == "slower"
                and not was_slower
            )
            change = None
            if across is not None:
                found = [dict(o.combined).get("change") for o in across.operations if o.name == name]
                change = found[0] if found else None
            points.append((name, Point(combined, missing, entered, change)))
        changes = tuple(environment_changes(previous, run)) if previous is not None else ()
        entries.append(Entry(run, changes, tuple(points)))
        previous = run
    steps = tuple(_steps(name, entries, false_alarm) for name in operations)
    study = ordered[0].evaluation.study if ordered else ""
    return Timeline(study, operations, predictions, tuple(entries), steps)


def _steps(operation: str, entries: list[Entry], false_alarm: float) -> OperationSteps:
    """The change-point search over the runs of the newest run's kind: a quick run's smoke
    settings (other shapes, few blocks) against full runs' would read as a step of the code."""
    points = []
    kind = entries[-1].run.evaluation.quick if entries else False
    for entry in entries:
        point = entry.point(operation)
        c = point.combined if point is not None and entry.run.evaluation.quick == kind else None
        points.append(None if c is None else (c.ratio, c.ci_low, c.ci_high, c.level))
    changes = [entry.changes for entry in entries]
    threshold = entries[-1].run.evaluation.threshold
    return operation_steps(operation, points, changes, threshold=threshold, false_alarm=false_alarm)
