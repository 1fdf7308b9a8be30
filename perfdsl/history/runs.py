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
from perfdsl.bundle.imported import is_imported_bundle
from perfdsl.evaluate.evaluation import evaluate
from perfdsl.evaluate.inputs import BundleInputs, EvaluateError, inputs_of, open_evaluated, read_samples


class RunsError(Exception):
    """A bundle that cannot be read as a run (one line naming it)."""


@attrs.frozen
class Run:
    """A bundle, evaluated, with the environment it ran in."""

    path: Path
    evaluation: Evaluation
    environment: EnvironmentRecord | None
    environment_missing: str | None
    study_hash: str
    """The SHA-256 of the study source the run ran (plan.json): two runs of one study name may
    have run two different files."""
    application_blocks: dict[str, tuple[float, ...]] = attrs.field(factory=dict)
    """Each arm's request-time block medians (ns), for the application's cross-run ratio."""

    @property
    def label(self) -> str:
        """The run id and the commit, as both views name a run."""
        commit = self.environment.short_commit if self.environment else "commit unknown"
        return f"{self.evaluation.run_id} ({commit})"


def read_run(bundle: Path) -> Run:
    """Open and evaluate a bundle, with its environment (RunsError: not a bundle, or fails verification,
    or an imported study's, which holds no run to compare)."""
    if is_imported_bundle(bundle):
        raise RunsError(
            f"{bundle}: an imported study's bundle (its timings are another harness's files): runs are "
            f"compared from the bundles `perfdsl run` measures; `perfdsl evaluate {bundle}` judges this one"
        )
    try:
        opened = open_evaluated(Path(bundle))
        inputs = inputs_of(opened)  # the study parsed once, for the evaluation and the samples
        evaluation = evaluate(opened, study=inputs.study)
        application = _application_blocks(inputs)
    except EvaluateError as error:
        raise RunsError(str(error)) from None
    environment, missing = opened.environment, opened.environment_missing
    return Run(opened.path, evaluation, environment, missing, opened.plan.study_hash, application)


def _application_blocks(inputs: BundleInputs) -> dict[str, tuple[float, ...]]:
    """The application's block medians per arm, from its sample CSV (none without one)."""
    app = inputs.results.application
    if app is None or not app.samples:
        return {}
    samples = read_samples(inputs, app.samples)
    return {
        arm: tuple(float(x) for x in arm_samples.block_medians_ns) for arm, arm_samples in samples.items()
    }


def environment_changes(before: Run, after: Run) -> list[str]:
    """What changed around the code between two runs: the target, then every environment fact."""
    from perfdsl.bundle.environment import differences

    changes = []
    a, b = before.evaluation, after.evaluation
    if before.study_hash != after.study_hash:
        changes.append(
            f"study source (SHA-256): {before.study_hash[:12]} -> {after.study_hash[:12]}: "
            f"the runs ran different `{a.study}` files"
        )
    if a.target != b.target:
        changes.append(f"target: {a.target} -> {b.target}")
    if a.quick != b.quick:
        changes.append(f"quick (smoke-run settings): {a.quick} -> {b.quick}")
    if before.environment is None or after.environment is None:
        missing = before.environment_missing or after.environment_missing
        changes.append(f"environment not comparable: {missing}")
        return changes
    return changes + differences(before.environment, after.environment)
