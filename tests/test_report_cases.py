"""The whole Markdown report of planted bundles, compared with golden files in tests/report_cases.

One native bundle (`evaluate_fixtures.make_bundle`, seeded, with a fixed run
id) and one imported (tests/report_cases/imported.perf over the importer
fixtures, run in-process with no code run) are evaluated and rendered as
`perfdsl build --md` does, from evaluation.json read back. A change to any
section's wording shows as a diff of the golden it touches: the two reports
share their sections, so a wording changed in one place shows in both.
Regenerate with `UPDATE_GOLDENS=1 pytest tests/test_report_cases.py` and
review the diff.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import attrs
import pytest
from evaluate_fixtures import CHECKED, make_bundle

from perfdsl.bundle.evaluation.correctness import FailingCase, ModelArm, ModelLevel
from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.bundle.evaluation.imported import ImportedEvaluation
from perfdsl.bundle.files import dumps
from perfdsl.bundle.opened import Bundle, open_bundle
from perfdsl.evaluate.evaluation import evaluate, write_evaluation
from perfdsl.evaluate.imported import evaluate_imported
from perfdsl.nodes import Study
from perfdsl.parse import parse
from perfdsl.report.imported import render_imported_markdown
from perfdsl.report.markdown import render_markdown
from perfdsl.runtime.imported import run_imported
from perfdsl.source import Source

CASES = Path(__file__).resolve().parent / "report_cases"
UPDATE = os.environ.get("UPDATE_GOLDENS") == "1"
RUN_ID = "20261129T000000Z-c0ffee"
"""Both bundles' run id as the report prints it: a run's own id holds its start time."""


DERIVED_MANIFEST_LINE = re.compile(r"^[0-9a-f]{16}  +[0-9,]+  evaluation\.json$", re.MULTILINE)
"""The manifest's line for evaluation.json. Its floats' last digits follow the CPU's SIMD path
(numpy's AVX-512 sums round a p-value of 6e-24 one unit differently in the twelfth digit),
so its hash and size are masked; every number the report prints from it stays compared."""


def _matches_golden(markdown: str, name: str) -> None:
    markdown = DERIVED_MANIFEST_LINE.sub("(hash and size of evaluation.json: CPU-dependent)", markdown)
    golden = CASES / name
    if UPDATE:
        golden.write_text(markdown, encoding="utf-8")
    assert markdown == golden.read_text(encoding="utf-8"), f"regenerate {golden} with UPDATE_GOLDENS=1"


def _native(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Study, Evaluation, Bundle]:
    """The planted native bundle, evaluated, with its study and evaluation.json read back."""
    # The plan records the study's artifacts directory resolved from the working directory, and
    # the report prints plan.json's hash: from the root, every checkout writes the same plan.
    monkeypatch.chdir("/")
    bundle = make_bundle(
        tmp_path, predictions=CHECKED["predictions"], sections=CHECKED["sections"], run_id=RUN_ID
    )
    write_evaluation(open_bundle(bundle), evaluate(open_bundle(bundle)))
    opened = open_bundle(bundle)
    study = parse(Source("study.perf", opened.study_text)).study
    assert study is not None
    return study, Evaluation.read(bundle), opened


def test_native_report_matches_its_golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study, evaluation, opened = _native(tmp_path, monkeypatch)
    markdown, _ = render_markdown(study, evaluation, opened, bundle_label=f"artifacts/{RUN_ID}")
    _matches_golden(markdown, "native.md")


def _imported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Study, ImportedEvaluation]:
    """The planted imported study, run and evaluated, its evaluation read back from JSON."""
    monkeypatch.chdir(CASES)  # the study's imports are relative to it, and its source path is printed
    study = parse(Source.read(Path("imported.perf"))).study
    assert study is not None
    bundle = run_imported(study, tmp_path)
    evaluation = attrs.evolve(evaluate_imported(bundle, study), run_id=RUN_ID)
    written = ImportedEvaluation.from_json(json.loads(dumps(evaluation.to_json())), Path("evaluation.json"))
    return study, written


def test_imported_report_matches_its_golden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    study, evaluation = _imported(tmp_path, monkeypatch)
    _matches_golden(render_imported_markdown(study, evaluation, f"artifacts/{RUN_ID}"), "imported.md")


def _edited(study: Study, old: str, new: str) -> Study:
    edited = parse(Source(study.source.path, study.source.text.replace(old, new, 1))).study
    assert edited is not None
    return edited


def _says_decision_changed(page_one: str, at_run: str, now: str, *, rechecked: bool) -> None:
    assert f"**Decision: {now}.**" in page_one
    checked = (
        f"this page checks `{now}` against the run's evidence; evaluation.json holds the check of `{at_run}`."
        if rechecked
        else f"the check against the evidence is of `{at_run}`."
    )
    assert f"**Decision changed after the run**, from `{at_run}` to `{now}`: {checked}" in page_one


def test_both_page_ones_say_a_decision_edited_after_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The study file's decision leads, and the warning names the one the evidence was checked against."""
    study, evaluation, opened = _native(tmp_path / "native", monkeypatch)
    edited = _edited(study, "decision adopt", "decision investigate")
    markdown, _ = render_markdown(edited, evaluation, opened)
    _says_decision_changed(markdown.split("## Workload")[0], "adopt", "investigate", rechecked=True)
    imported, imported_evaluation = _imported(tmp_path / "imported", monkeypatch)
    edited = _edited(imported, "decision investigate", "decision adopt")
    page_one = render_imported_markdown(edited, imported_evaluation, "b").split("## Workload")[0]
    _says_decision_changed(page_one, "investigate", "adopt", rechecked=False)


def test_a_decision_edited_after_the_run_is_checked_against_the_run_s_evidence(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Edited to `adopt` over evidence against it, page 1 read "Decision: adopt. The evidence below
    # does not contradict it": the sentence judged the run's `investigate`.
    study, evaluation, opened = _native(tmp_path / "native", monkeypatch)
    assert evaluation.decision.declared == "adopt" and not evaluation.decision.findings
    edited = _edited(study, "decision adopt", "decision reject")
    page_one = render_markdown(edited, evaluation, opened)[0].split("## Workload")[0]
    assert "**Decision: reject.** **The evidence contradicts it** (see the warning below)." in page_one
    assert "**Decision contradicted.** Reject, but " in page_one


def test_a_study_edited_after_the_run_is_named_on_page_one_with_its_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A new user changed the SLO and a byte formula after the run: page 1 quoted the new
    # objective beside a goodput judged at the old SLO, and only the last page said why.
    study, evaluation, opened = _native(tmp_path, monkeypatch)
    page_one = render_markdown(study, evaluation, opened)[0].split("## Workload")[0]
    assert "**Study edited after the run.**" not in page_one
    edited = _edited(study, "p99 latency <= 25 ms", "p99 latency <= 2 ms")
    edited = _edited(edited, "baseline 4*(5*M*N)", "baseline 4*(3*M*N)")
    page_one = render_markdown(edited, evaluation, opened)[0].split("## Workload")[0]
    objective, formula = (
        next(i for i, line in enumerate(edited.source.text.splitlines(), 1) if text in line)
        for text in ("<= 2 ms", "4*(3*M*N)")
    )
    assert f"**Study edited after the run.** Lines {objective}, {formula} of `study.perf` differ" in page_one
    # A comment is no edit of what ran; a prediction has its own warning.
    for old, new in (
        ("decision adopt", "decision adopt  # reviewed"),
        ("op.time ratio <= 0.9", "op.time ratio <= 0.8"),
    ):
        page_one = render_markdown(_edited(study, old, new), evaluation, opened)[0].split("## Workload")[0]
        assert "**Study edited after the run.**" not in page_one


def _renderer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Evaluation, Callable[[Evaluation], str]]:
    """The planted native bundle's evaluation, and its report's Markdown for any evaluation planted in
    its place: a wording is tested from the records it reads, through the real renderer."""
    study, evaluation, opened = _native(tmp_path, monkeypatch)

    def render(planted: Evaluation) -> str:
        markdown, _ = render_markdown(study, planted, opened, bundle_label=f"artifacts/{RUN_ID}")
        return markdown

    return evaluation, render


def _with_first_operation(evaluation: Evaluation, **changes: object) -> Evaluation:
    """The evaluation with its first operation's fields changed."""
    operation = attrs.evolve(evaluation.operations[0], **changes)
    return attrs.evolve(evaluation, operations=(operation, *evaluation.operations[1:]))


def _with_first_shape(evaluation: Evaluation, **changes: object) -> Evaluation:
    """The evaluation with its first operation's first shape's comparison changed."""
    operation = evaluation.operations[0]
    shape = operation.shapes[0]
    assert shape.comparison is not None
    shape = attrs.evolve(shape, comparison=attrs.evolve(shape.comparison, **changes))
    return _with_first_operation(evaluation, shapes=(shape, *operation.shapes[1:]))


def test_underpowered_is_said_only_beside_a_verdict_the_interval_left_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A shape decided faster far beyond the threshold rests on its interval, whatever the MDE:
    # "3.00% (underpowered)" beside it read as if the verdict were in doubt.
    evaluation, render = _renderer(tmp_path, monkeypatch)

    def row(verdict: str) -> str:
        markdown = render(_with_first_shape(evaluation, underpowered=True, verdict=verdict))
        return next(
            line for line in markdown.splitlines() if line.startswith("| 64x4096 | 0.75 | 998 µs | 803 µs |")
        )

    assert row("faster").endswith("| faster | 3.00% |")
    assert row("inconclusive").endswith("| **inconclusive** | 3.00% (underpowered) |")


def test_a_rank_test_that_does_not_bear_out_a_verdict_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The specification's cross-check was computed, written to evaluation.json and never printed.
    evaluation, render = _renderer(tmp_path, monkeypatch)
    assert "The rank test of the same blocks" not in render(evaluation)
    said = render(_with_first_shape(evaluation, rank_disagrees=True, rank_p_value=0.094))
    assert "more pairs would settle it: 64x4096 (faster, rank test p = 0.094)." in said
    comparison = evaluation.end_to_end.comparison
    end = attrs.evolve(evaluation.end_to_end, comparison=attrs.evolve(comparison, rank_disagrees=True))
    assert "more pairs would settle it: `app` (" in render(attrs.evolve(evaluation, end_to_end=end))


def test_page_one_names_the_arms_that_fail_their_correctness_checks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A new user's application raised in both arms, and page 1 said "The change fails".
    evaluation, render = _renderer(tmp_path, monkeypatch)

    def first_paragraph(planted: Evaluation) -> str:
        return render(planted).split("## Decision and result")[1].split("\n\n")[1]

    raised = ModelArm(False, None, None, "raised ValueError: batch too large")
    both = attrs.evolve(
        evaluation, model_level=ModelLevel(False, {"baseline": raised, "change": raised}, None)
    )
    assert "**The baseline and the change both fail their correctness checks**" in first_paragraph(both)
    correctness = evaluation.operations[0].correctness
    case = FailingCase("baseline", "unfused", {"M": 64, "N": 4096}, 0, False, None, None, "raised", ())
    baseline = attrs.evolve(correctness, passed=False, failing=(case,))
    assert "**The baseline fails its correctness check**" in first_paragraph(
        _with_first_operation(evaluation, correctness=baseline)
    )
    change = attrs.evolve(baseline, failing=(attrs.evolve(case, arm="change", variant="fused"),))
    assert "**The change fails its correctness check**" in first_paragraph(
        _with_first_operation(evaluation, correctness=change)
    )


def test_an_application_that_raised_is_said_to_have_served_no_output_not_a_wrong_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A new user's prepare() raised KeyError: page 1 said "the application's output fails its
    # model-level check", and the KeyError was in the correctness table alone.
    evaluation, render = _renderer(tmp_path, monkeypatch)
    raised = ModelArm(False, None, None, "with `unfused`: raised KeyError: 'K' (at app.py:88 in prepare)")
    served = ModelArm(True, 1e-7, 1e-6, "")
    failed = attrs.evolve(
        evaluation, model_level=ModelLevel(False, {"baseline": raised, "change": served}, None)
    )
    page_one = render(failed).split("## Workload")[0]
    said = (
        "the application served no output to its model-level check (baseline with `unfused`: raised KeyError"
    )
    assert f"Correctness: **FAILED** ({said}" in page_one
    assert "output fails its model-level check" not in page_one
    wrong = ModelArm(False, 0.5, 0.9, "`output` rel_l2 0.5 > 1e-05")
    off = attrs.evolve(evaluation, model_level=ModelLevel(False, {"baseline": served, "change": wrong}, None))
    assert "the application's output fails its model-level check" in render(off).split("## Workload")[0]


def test_the_stop_of_an_invalid_shape_says_it_is_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The stops listed "262144 after 6 pairs ...: slower" on the page that excluded 262144.
    from perfdsl.bundle.stopping import DECIDED, RHO, StoppingRule, StopRecord
    from perfdsl.report.stopping import stop_lines

    evaluation, _ = _renderer(tmp_path, monkeypatch)
    stop = StopRecord(StoppingRule(0.95, 0.01, 6, 100, RHO), 6, DECIDED, "slower", 1.3, 1.1, 1.5, 0.05)
    operation = evaluation.operations[0]
    first, second = (attrs.evolve(shape, stop=stop) for shape in operation.shapes[:2])
    invalid = attrs.evolve(first, invalid="PQ010 modelled bytes below the bytes of the kernel's own buffers")
    lines = stop_lines(attrs.evolve(operation, shapes=(invalid, second)))
    assert lines[0].startswith("64x4096 (invalid: left out of every conclusion): decided **slower** after 6")
    assert lines[1].startswith("256x1024: decided **slower**")


def test_a_goodput_held_down_by_undecided_probes_is_not_read_as_a_capacity(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "goes from 138 rps to 77.4 rps" read as a capacity loss where the change's next probe up had
    # only stayed undecided at its cap.
    evaluation, render = _renderer(tmp_path, monkeypatch)
    assert evaluation.load is not None
    assert "highest rate its probes could show" not in render(evaluation)
    arms = tuple(
        attrs.evolve(g, limited_by=("p99 undecided",)) if g.arm == "change" else g
        for g in evaluation.load.arms
    )
    said = render(attrs.evolve(evaluation, load=attrs.evolve(evaluation.load, arms=arms)))
    page_one = said.split("## Workload")[0]
    assert (
        "(the change's goodput is the highest rate its probes could show: the next rate up stayed" in page_one
    )


def test_a_significant_comparison_left_inconclusive_is_explained(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # "3 remain significant" beside a request time called inconclusive read as a contradiction.
    evaluation, render = _renderer(tmp_path, monkeypatch)
    assert evaluation.family is not None and "app" in evaluation.family.names
    assert "which is not a verdict" not in render(evaluation)
    comparison = attrs.evolve(evaluation.end_to_end.comparison, verdict="inconclusive")
    planted = attrs.evolve(evaluation, end_to_end=attrs.evolve(evaluation.end_to_end, comparison=comparison))
    said = render(planted)
    assert (
        "remain significant (a difference from ratio 1, which is not a verdict: `app` is significant yet"
        in said
    )


def test_the_kernel_sentence_says_valid_only_beside_shapes_left_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A quick run merged three shapes into one, and "over 1 valid workload shape" read as two invalid.
    from perfdsl.bundle.evaluation.kernels import Exclusion

    evaluation, render = _renderer(tmp_path, monkeypatch)
    assert "weighted total times over 2 workload shapes is" in render(evaluation)
    combined = evaluation.operations[0].combined
    excluded = attrs.evolve(combined, excluded=(Exclusion("1024x64", "PQ006 above the roof"),))
    said = render(_with_first_operation(evaluation, combined=excluded))
    assert "over 2 valid workload shapes (1 invalid shape left out: 1024x64) is" in said
