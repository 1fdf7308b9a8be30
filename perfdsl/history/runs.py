"""One run of a study as the cross-run views read it: its evaluation and its environment.

Both views rest on the evaluation of each bundle (the same block statistics
and verdicts `perfdsl evaluate` gives, recomputed from the raw samples, so a
bundle never evaluated, or evaluated by another version, reads the same) and
on environment.json through its record.
"""

from __future__ import annotations

from pathlib import Path

import attrs

from perfdsl.bundle.environment import EnvironmentRecord
from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.evaluate.evaluation import evaluate
from perfdsl.evaluate.inputs import EvaluateError, open_evaluated


class RunsError(Exception):
    """A bundle that cannot be read as a run (one line naming it)."""


@attrs.frozen
class Run:
    """A bundle, evaluated, with the environment it ran in."""

    path: Path
    evaluation: Evaluation
    environment: EnvironmentRecord | None
    environment_missing: str | None

    @property
    def label(self) -> str:
        """The run id and the commit, as both views name a run."""
        commit = self.environment.short_commit if self.environment else "commit unknown"
        return f"{self.evaluation.run_id} ({commit})"


def read_run(bundle: Path) -> Run:
    """Open and evaluate a bundle, with its environment (RunsError: not a bundle, or fails verification)."""
    try:
        opened = open_evaluated(Path(bundle))
        evaluation = evaluate(opened)
    except EvaluateError as error:
        raise RunsError(str(error)) from None
    return Run(opened.path, evaluation, opened.environment, opened.environment_missing)


def environment_changes(before: Run, after: Run) -> list[str]:
    """What changed around the code between two runs: the target, then every environment fact."""
    from perfdsl.bundle.environment import differences

    changes = []
    a, b = before.evaluation, after.evaluation
    if a.target != b.target:
        changes.append(f"target: {a.target} -> {b.target}")
    if a.quick != b.quick:
        changes.append(f"quick (smoke-run settings): {a.quick} -> {b.quick}")
    if before.environment is None or after.environment is None:
        missing = before.environment_missing or after.environment_missing
        changes.append(f"environment not comparable: {missing}")
        return changes
    return changes + differences(before.environment, after.environment)
