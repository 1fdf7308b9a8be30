"""`evaluate(bundle)` on synthetic bundles with planted answers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from evaluate_fixtures import make_bundle, study_text

from perfdsl.bundle import versions
from perfdsl.bundle.files import BundleError, verify_bundle
from perfdsl.evaluate.evaluation import evaluate, write_evaluation
from perfdsl.evaluate.inputs import EvaluateError, open_evaluated
from perfdsl.evaluate.registration import with_current


def _verdicts(evaluation) -> dict[str, str]:
    return {p.text: p.verdict for p in evaluation.predictions}


def test_same_bundle_gives_byte_identical_evaluation_json(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path)
    first = write_evaluation(open_evaluated(bundle), evaluate(open_evaluated(bundle))).read_bytes()
    second = write_evaluation(open_evaluated(bundle), evaluate(open_evaluated(bundle))).read_bytes()
    assert first == second
    assert verify_bundle(bundle) == []
    data = json.loads(first)
    assert data["schema"] == versions.EVALUATION
    assert "replicates" not in first.decode()


def test_a_tampered_bundle_is_refused(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path)
    csv = bundle / "samples/op/64x4096.csv"
    csv.write_text(csv.read_text().replace("baseline,0,0", "baseline,0,0 ", 1))
    with pytest.raises(EvaluateError, match="fails verification"):
        evaluate(open_evaluated(bundle))


def test_an_unfinished_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EvaluateError, match="no such bundle"):
        evaluate(open_evaluated(tmp_path / "nothing"))


def test_evaluation_json_may_be_replaced_but_not_other_files(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path)
    write_evaluation(open_evaluated(bundle), evaluate(open_evaluated(bundle)))
    (bundle / "evaluation.json").write_text("{}")  # a stale or broken derived file is rewritten
    opened = open_evaluated(bundle)
    evaluation = evaluate(opened)
    write_evaluation(opened, evaluation)
    assert verify_bundle(bundle) == []
    (bundle / "plan.json").write_text("{}")  # changed after the bundle was opened
    with pytest.raises(BundleError, match="fails verification"):
        write_evaluation(opened, evaluation)


@pytest.mark.parametrize(
    ("bound", "verdict"), [("0.9", "confirmed"), ("0.5", "refuted"), ("0.8", "inconclusive")]
)
def test_time_prediction_verdicts_on_a_planted_speedup(tmp_path: Path, bound: str, verdict: str) -> None:
    # A study states each target once, so each bound gets its own (identically seeded) bundle.
    lines = (f"op.time ratio <= {bound}",)
    evaluation = evaluate(
        open_evaluated(make_bundle(tmp_path, predictions=lines, kernel_ratio=0.8, noise=0.03))
    )
    combined = evaluation.operations[0].combined
    assert combined is not None and combined.verdict == "faster"
    assert combined.ci_low < 0.8 < combined.ci_high
    (prediction,) = evaluation.predictions
    assert prediction.verdict == verdict
    assert prediction.ci == (combined.ci_low, combined.ci_high) and prediction.basis == "measured"


@pytest.mark.parametrize(("bound", "verdict"), [("0.45", "confirmed"), ("0.3", "refuted")])
def test_modelled_predictions_confirm_or_refute(tmp_path: Path, bound: str, verdict: str) -> None:
    lines = (f"op.bytes ratio <= {bound}", "op.launches ratio <= 0.5")
    evaluation = evaluate(open_evaluated(make_bundle(tmp_path, predictions=lines)))
    assert _verdicts(evaluation) == {lines[0]: verdict, lines[1]: "confirmed"}
    assert evaluation.predictions[0].basis == "modelled"
    assert evaluation.predictions[0].value == pytest.approx(0.4)


def test_counted_quantities_decide_at_their_shape_only(tmp_path: Path) -> None:
    # Counted at the first shape (weight 0.75): 0.6 of the modelled baseline's 20 bytes per element;
    # the second keeps its modelled 0.4. Weighted totals: (0.75 x 12 + 0.25 x 8) / 20 = 0.55, a mix.
    mn = 64 * 4096
    counters = {"bytes": {"baseline": 20.0 * mn, "change": 12.0 * mn}}
    evaluation = evaluate(
        open_evaluated(make_bundle(tmp_path, predictions=("op.bytes ratio <= 0.45",), counters=counters))
    )
    (prediction,) = evaluation.predictions
    assert (prediction.basis, prediction.verdict) == ("mixed", "refuted")
    assert prediction.value == pytest.approx(0.55)
    assert "mixed: counted where counters ran" in prediction.message
    first, second = evaluation.operations[0].shapes
    assert first.mechanism.counters_missing is None and second.mechanism.counters_missing


def test_a_against_a_is_no_meaningful_change(tmp_path: Path) -> None:
    evaluation = evaluate(open_evaluated(make_bundle(tmp_path, kernel_ratio=1.0, app_ratio=1.0, noise=0.005)))
    op = evaluation.operations[0]
    assert [s.comparison.verdict for s in op.shapes if s.comparison] == ["no meaningful change"] * 2
    assert op.combined is not None and op.combined.verdict == "no meaningful change"
    assert evaluation.end_to_end is not None
    assert evaluation.end_to_end.comparison.verdict == "no meaningful change"


def test_mechanism_explains_the_time_change_or_flags_it(tmp_path: Path) -> None:
    explained = evaluate(open_evaluated(make_bundle(tmp_path / "a", kernel_ratio=0.42)))
    assert {s.mechanism.explanation.status for s in explained.operations[0].shapes} == {"realised"}
    against = evaluate(open_evaluated(make_bundle(tmp_path / "b", kernel_ratio=1.3)))
    assert {s.mechanism.explanation.status for s in against.operations[0].shapes} == {"contradicted"}
    assert all(s.mechanism.explanation.flagged for s in against.operations[0].shapes)
    shape = explained.operations[0].shapes[0]
    assert shape.mechanism.roof_bytes_per_s is not None
    assert all(0 < b.roof_fraction < 1 for b in shape.mechanism.bandwidth)


def test_decision_check(tmp_path: Path) -> None:
    good = evaluate(open_evaluated(make_bundle(tmp_path / "good")))
    assert good.decision.consistent
    broken = evaluate(open_evaluated(make_bundle(tmp_path / "broken", correct=False)))
    assert not broken.decision.consistent
    assert any("correctness" in f for f in broken.decision.findings)
    assert broken.operations[0].correctness.failing[0].seed == 1
    flat = evaluate(open_evaluated(make_bundle(tmp_path / "flat", app_ratio=1.0, noise=0.005)))
    assert any("end-to-end verdict is 'no meaningful change'" in f for f in flat.decision.findings)
    refuted = evaluate(
        open_evaluated(make_bundle(tmp_path / "refuted", predictions=("op.time ratio <= 0.5",)))
    )
    assert any("refuted" in f for f in refuted.decision.findings)
    rejected = evaluate(open_evaluated(make_bundle(tmp_path / "reject", decision="reject")))
    assert rejected.decision.findings == (
        "reject, but the change is correct and faster for every operation and end to end",
    )
    investigate = evaluate(
        open_evaluated(make_bundle(tmp_path / "inv", decision="investigate", correct=False))
    )
    assert investigate.decision.consistent


def test_goodput_is_recomputed_from_the_raw_load_records(tmp_path: Path) -> None:
    evaluation = evaluate(open_evaluated(make_bundle(tmp_path, predictions=("app.throughput ratio >= 1.5",))))
    load = evaluation.load
    goodput = {g.arm: g for g in load.arms}
    assert goodput["baseline"].goodput == 300.0 and goodput["baseline"].confirmed
    assert goodput["change"].goodput == 600.0 and goodput["change"].confirmed
    assert load.capacity.change == pytest.approx(2.0)
    curve = goodput["baseline"].curve
    assert [p.rate for p in curve] == [100.0, 200.0, 300.0, 300.0, 450.0, 450.0]
    assert [p.passed for p in curve] == [True, True, True, True, False, False]
    assert goodput["baseline"].failing == 450.0
    assert curve[-1].result.p99 > curve[0].result.p99
    # Brackets [300, 450) and [600, 900): the ratio lies in [1.333, 3), which straddles 1.5.
    assert _verdicts(evaluation) == {"app.throughput ratio >= 1.5": "inconclusive"}
    capacity = evaluation.value.capacity
    assert (capacity.low, capacity.high) == (pytest.approx(600 / 450), pytest.approx(3.0))
    assert capacity.confirmed


def test_an_unconfirmed_goodput_is_labelled(tmp_path: Path) -> None:
    probes = {"baseline": (100.0, 200.0, 450.0), "change": (200.0, 900.0)}
    evaluation = evaluate(open_evaluated(make_bundle(tmp_path, probes=probes)))
    goodput = {g.arm: g for g in evaluation.load.arms}
    assert goodput["baseline"].goodput == 200.0 and not goodput["baseline"].confirmed


def test_invalid_timings_never_produce_a_verdict(tmp_path: Path) -> None:
    lines = ("op.time ratio <= 0.9", "op.bytes ratio <= 0.45", "app.time ratio <= amdahl")
    evaluation = evaluate(
        open_evaluated(make_bundle(tmp_path, valid=False, target="cudasim", predictions=lines))
    )
    assert evaluation.timings_note and "not evidence" in evaluation.timings_note
    op = evaluation.operations[0]
    assert all(s.comparison is None and "not evidence" in s.missing for s in op.shapes)
    assert op.combined is None
    assert evaluation.end_to_end.comparison is None and evaluation.end_to_end.amdahl is None
    assert evaluation.value is None and evaluation.load is None
    assert _verdicts(evaluation) == {
        "op.time ratio <= 0.9": "not evidence",
        "op.bytes ratio <= 0.45": "confirmed",  # modelled: exact, needs no timing
        "app.time ratio <= amdahl": "not evidence",
    }
    assert "verdict" not in json.dumps([s.missing for s in op.shapes])


def test_invalid_samples_on_a_valid_target_are_not_evidence(tmp_path: Path) -> None:
    evaluation = evaluate(open_evaluated(make_bundle(tmp_path, valid=False, target="cpu")))
    assert all(s.comparison is None and "invalid" in s.missing for s in evaluation.operations[0].shapes)


def test_value_comes_from_the_end_to_end_effect(tmp_path: Path) -> None:
    # The operation 0.8x at a 50 % share: B = 0.9, which the request measures; the kernel alone
    # would claim 1000 x (1 - 0.8).
    evaluation = evaluate(open_evaluated(make_bundle(tmp_path, app_ratio=0.9, kernel_ratio=0.8)))
    worth = evaluation.value
    assert worth.basis == "app"
    assert worth.fleet.established and worth.per_unit.established
    assert worth.fleet.value.value == pytest.approx(1000 * 0.1, rel=0.05)  # scale x (1 - end-to-end ratio)
    assert worth.per_unit.value.value == pytest.approx(2 * 4e-3 * 0.1, rel=0.05)  # frequency x saved time
    assert worth.per_unit.unit == "s per request"


def test_registration_against_the_bundle_and_a_current_study(tmp_path: Path) -> None:
    bundle = make_bundle(tmp_path)
    current = tmp_path / "current.perf"
    current.write_text(study_text(["op.time ratio <= 0.9"]))
    registration = evaluate(open_evaluated(bundle)).registration
    assert registration.matches and registration.current is None  # the bundle's alone
    same = with_current(registration, current)
    assert same.matches and same.current.matches
    current.write_text(study_text(["op.time ratio <= 0.95"]))
    edited = with_current(registration, current)
    assert edited.matches and not edited.current.matches
    assert "edited after the run" in edited.current.message


def test_quality_findings_are_coded(tmp_path: Path) -> None:
    evaluation = evaluate(open_evaluated(make_bundle(tmp_path, blocks=6, noise=0.2)))
    codes = {f.code for f in evaluation.quality}
    assert {"PQ001", "PQ007"} <= codes
    assert all(f.subject.startswith(("op ", "app ")) for f in evaluation.quality)
