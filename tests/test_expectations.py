"""Expectations per target: which statements judge a run, in the plan, the evaluation and the hash."""

from __future__ import annotations

from pathlib import Path

from evaluate_fixtures import make_bundle, study_text

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.evaluate.evaluation import evaluate, write_evaluation
from perfdsl.evaluate.inputs import open_evaluated
from perfdsl.expectations import expectations
from perfdsl.nodes import Study
from perfdsl.parse import parse
from perfdsl.plan import plan, predict_section_hash
from perfdsl.report.markdown import render_markdown
from perfdsl.source import Source

ROOT = Path(__file__).resolve().parent.parent

CUDA_ONLY = """
  predict cuda {
    op.time  ratio <= 0.5
    op.bytes ratio <= 0.45
  }
"""

PER_TARGET = """
  predict cuda {
    op.time ratio <= 0.5
  }
  predict cpu {
    op.time ratio <= 0.9
  }
  target cpu {
    objective   p99 latency <= 40 ms at 20 rps
    slo         p99 <= 40 ms
    load        poisson 5..40 step 5 rps
    application (M, N) in [(16, 1024)]
  }
"""


def _study(predictions: list[str], sections: str) -> Study:
    text = study_text(predictions, sections=sections)
    study = parse(Source(str(ROOT / "studies" / "planted.perf"), text)).study
    assert study is not None
    return study


def _texts(study: Study, target: str) -> list[str]:
    return [" ".join(study.source.snippet(p.span).split()) for p in expectations(study, target).predictions]


def test_a_target_own_prediction_replaces_the_one_for_every_target() -> None:
    study = _study(["op.time ratio <= 0.7", "op.bytes ratio <= 0.45"], PER_TARGET)
    assert _texts(study, "cpu") == ["op.bytes ratio <= 0.45", "op.time ratio <= 0.9"]
    assert _texts(study, "cuda") == ["op.bytes ratio <= 0.45", "op.time ratio <= 0.5"]


def test_a_simulator_run_is_held_to_cuda() -> None:
    study = _study(["op.bytes ratio <= 0.45"], PER_TARGET)
    chosen = expectations(study, "cudasim")
    assert chosen.target == "cuda"
    assert _texts(study, "cudasim") == _texts(study, "cuda")


def test_a_target_without_predictions_says_so() -> None:
    study = _study([], CUDA_ONLY)
    assert expectations(study, "cpu").predictions == ()
    assert expectations(study, "cpu").missing == "no expectations exist for target cpu"
    assert expectations(study, "cuda").missing is None


def test_the_target_section_replaces_objective_slo_load_and_shape() -> None:
    study = _study(["op.time ratio <= 0.7"], PER_TARGET)
    cpu, cuda = expectations(study, "cpu"), expectations(study, "cuda")
    assert cpu.objective is not None and cpu.objective.bound.quantity.base == 0.040
    assert cuda.objective is not None and cuda.objective.bound.quantity.base == 0.025

    cpu_plan, cuda_plan = plan(study, "cpu", quick=False), plan(study, "cuda", quick=False)
    assert cpu_plan.application is not None and cuda_plan.application is not None
    assert cpu_plan.application.shape == {"M": 16, "N": 1024}
    assert cuda_plan.application.shape == {"M": 64, "N": 4096}  # the heaviest workload shape
    assert cpu_plan.load is not None and cuda_plan.load is not None
    assert cpu_plan.load.rates == (5.0, 10.0, 15.0, 20.0, 25.0, 30.0, 35.0, 40.0)
    assert cpu_plan.load.slo_seconds == 0.040
    assert cuda_plan.load.rates[0] == 100.0 and cuda_plan.load.slo_seconds == 0.025


def test_the_registered_hash_covers_every_target_predictions() -> None:
    edited = PER_TARGET.replace("op.time ratio <= 0.9", "op.time ratio <= 0.95")
    before = predict_section_hash(_study(["op.bytes ratio <= 0.45"], PER_TARGET))
    assert before != predict_section_hash(_study(["op.bytes ratio <= 0.45"], edited))
    # A change outside every `predict` section is not a change of the predictions.
    moved = PER_TARGET.replace("at 20 rps", "at 25 rps")
    assert before == predict_section_hash(_study(["op.bytes ratio <= 0.45"], moved))


def _page_one(bundle: Path) -> str:
    """The report's first page (decision, warnings, predictions) as `perfdsl build --md` renders it."""
    write_evaluation(open_evaluated(bundle), evaluate(open_evaluated(bundle)))
    study = parse(Source("study.perf", (bundle / "study.perf").read_text())).study
    assert study is not None
    markdown, _ = render_markdown(study, Evaluation.read(bundle), open_evaluated(bundle))
    return markdown.split("## Workload")[0]


def test_a_gpu_only_expectation_set_is_not_applied_to_a_cpu_run(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path, predictions=(), sections=CUDA_ONLY, kernel_ratio=0.8)
    evaluation = evaluate(open_evaluated(bundle))
    assert evaluation.target == "cpu"
    assert evaluation.expectations_target == "cpu"
    assert evaluation.predictions == ()
    assert evaluation.expectations_missing == "no expectations exist for target cpu"
    page = _page_one(bundle)
    assert "**No expectations for this target.** No expectations exist for target cpu" in page
    assert "The study's predictions are stated for `cuda`" in page
    assert "registers no predictions" not in page


def test_a_cpu_expectation_is_applied_to_a_cpu_run(tmp_path: Path) -> None:
    bundle = make_bundle(
        tmp_path, predictions=("op.bytes ratio <= 0.45",), sections=PER_TARGET, kernel_ratio=0.8
    )
    evaluation = evaluate(open_evaluated(bundle))
    assert evaluation.expectations_target == "cpu"
    assert evaluation.expectations_missing is None
    verdicts = {p.text: p.verdict for p in evaluation.predictions}
    # cuda's `op.time ratio <= 0.5` would be refuted by a 0.8 ratio; cpu's own 0.9 is confirmed.
    assert verdicts == {"op.bytes ratio <= 0.45": "confirmed", "op.time ratio <= 0.9": "confirmed"}
    assert evaluation.registration.matches
    page = _page_one(bundle)
    assert "Judged against the expectations for target `cpu`." in page
    assert "No expectations for this target" not in page
