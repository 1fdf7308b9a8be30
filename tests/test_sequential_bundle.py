"""A new study stops sequentially, and `evaluate` reaches the run's recorded stops from the raw samples.

One quick run of the `perfdsl new` scaffold (whose timing is `stop sequential`)
on the CPU, then `perfdsl evaluate` on its bundle, both as the real command line.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from run_support import RUN_TIMEOUT_S, environment, perfdsl_command

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.plan import Plan
from perfdsl.bundle.results import Results
from perfdsl.bundle.stopping import SEQUENTIAL
from perfdsl.stats.sequential.power import detectable

pytestmark = pytest.mark.slow  # a real quick run of a new study, then evaluate


def _perfdsl(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    command = perfdsl_command(*args)
    return subprocess.run(
        command, cwd=cwd, env=environment(), capture_output=True, text=True, timeout=RUN_TIMEOUT_S
    )


def test_evaluate_replays_the_runs_stop_bit_for_bit(tmp_path: Path) -> None:
    assert _perfdsl(tmp_path, "new", "demo").returncode == 0
    ran = _perfdsl(tmp_path, "run", "--target", "cpu", "--quick", "demo.perf")
    assert ran.returncode == 0, ran.stderr
    (bundle,) = [p for p in (tmp_path / "artifacts" / "demo").iterdir() if p.is_dir()]
    evaluated = _perfdsl(tmp_path, "evaluate", str(bundle))
    assert evaluated.returncode == 0, evaluated.stderr

    plan = Plan.read(bundle)
    assert plan.timing.stop == SEQUENTIAL and plan.timing.stopping is not None
    recorded = {(op.name, s.label): s.stop for op in Results.read(bundle).operations for s in op.shapes}
    assert recorded
    # Each shape stops by the plan's rule, held open for its operation's prediction bounds.
    rules = {op.name: plan.timing.stopping_for(op.stop_edges) for op in plan.operations}
    assert all(stop is not None and stop.rule == rules[name] for (name, _), stop in recorded.items())
    assert all(stop.rule.winsorized for stop in recorded.values() if stop is not None)
    for op in Evaluation.read(bundle).operations:
        for shape in op.shapes:
            stop = recorded[(op.name, shape.label)]
            assert shape.stop_agrees is True
            assert shape.stop is not None and stop is not None
            assert (shape.stop.pairs, shape.stop.reason) == (stop.pairs, stop.reason)
            # The verdict is the sequence's at the stop, unless Holm's adjustment over the study's
            # family did not keep it (then inconclusive, with the reason).
            c = shape.comparison
            assert c is not None
            assert c.verdict == stop.verdict or (c.family is not None and c.verdict == "inconclusive")
            # What it could detect is the sequence's at the cap, not a t interval's.
            assert c.mde == pytest.approx(detectable([(shape.stop.rule, shape.stop.sd_log, 1.0)]), rel=1e-10)
        # The total over shapes rests on the shapes' stops, not on a bootstrap after stopping, and
        # spends none of the family's error rate (it holds whenever the shapes' intervals do).
        assert op.combined is None or op.combined.sequential
    family = Evaluation.read(bundle).family
    assert family is None or not any(name.endswith("(combined)") for name in family.names)
    # The application's request blocks stop by the same rule, and replay the same way.
    application = Results.read(bundle).application
    assert application is not None and application.stop is not None
    end = Evaluation.read(bundle).end_to_end
    assert end is not None and end.stop_agrees is True
    # Each interval is labelled at the confidence it was computed at: the study's level shared
    # over its family, not the study's level ("95% interval" beside a 98.75 % one).
    report = tmp_path / "demo.md"
    built = _perfdsl(tmp_path, "build", "--md", "demo.perf", "--results", str(bundle), "-o", str(report))
    assert built.returncode == 0, built.stderr
    text = report.read_text(encoding="utf-8")
    shared = plan.timing.comparison_confidence
    assert plan.timing.family > 1 and shared > plan.timing.confidence
    label = f"{100 * shared:.4g}% interval"
    assert (
        f"Verdicts judge each {label} (the study's 95% shared by its {plan.timing.family} comparisons" in text
    )
    assert f"{100 * plan.timing.confidence:.4g}% interval [" not in text
