"""Conclusions the evidence supports, on bundles with planted truths.

Each bundle is written through the real writer and read back through the real
reader (`evaluate_fixtures.make_bundle`); its true f, in-app operation ratio,
end-to-end ratio, roof and goodputs are known, so each case below, and its
opposite, must come out as the numbers say. B = (1 - f) + f r is the smallest
application time ratio the change can produce.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import attrs
import numpy as np
import pytest
from evaluate_fixtures import make_bundle, rendered_markdown, study_text

from perfdsl.bundle.evaluation.evaluation import Evaluation
from perfdsl.evaluate.evaluation import evaluate, write_evaluation
from perfdsl.evaluate.inputs import open_evaluated
from perfdsl.parse import parse
from perfdsl.report.markdown import render_markdown
from perfdsl.source import Source
from perfdsl.stats.paired import MIN_PAIRS
from perfdsl.stats.power import pairs_needed

AMDAHL = "app.time ratio <= amdahl"


def _run(tmp: Path, **planted: Any) -> Evaluation:
    return evaluate(open_evaluated(make_bundle(tmp, **planted)))


def _page(tmp: Path, quick: bool = False, **planted: Any) -> str:
    """The report's Markdown for a planted bundle (as a quick run that kept its shapes, if
    `quick`), rendered from its evaluation.json."""
    bundle = make_bundle(tmp, **planted)
    if quick:
        _as_quick(bundle)
    return rendered_markdown(bundle)


def _page_one(markdown: str) -> str:
    return markdown.split("## Workload")[0]


def _verdict(evaluation: Evaluation, text: str) -> str:
    return next(p.verdict for p in evaluation.predictions if p.text == text)


# ------------------------------------------------------------------ Amdahl


def test_an_application_faster_than_its_measured_split_allows_does_not_add_up(tmp_path: Path) -> None:
    # The quick rmsnorm run: the operation 10 % slower (B = 1.05) while the application got 1.57x
    # faster, and the share pass shows the rest of the request unchanged: f, r or the passes disagree.
    ev = _run(tmp_path, kernel_ratio=1.1, in_app_ratio=1.1, app_ratio=0.64, predictions=(AMDAHL,))
    amdahl = ev.end_to_end.amdahl
    assert amdahl.bound_time_ratio == pytest.approx(1.05, abs=0.01)
    assert amdahl.reconciliation.status == "accounting_broken" and amdahl.contradicted
    assert amdahl.reconciliation.rest in ("unchanged", "undetermined")
    assert _verdict(ev, AMDAHL) == "inconclusive"
    # Numbers that do not add up leave adopt unsupported; they are no evidence against it.
    assert not any("Amdahl" in f for f in ev.decision.findings)
    assert any("does not add up against Amdahl's bound" in u for u in ev.decision.unsupported)
    assert not ev.value.fleet.established and ev.value.fleet.value is None


def test_a_faster_rest_of_the_request_is_a_cross_effect_that_keeps_its_claims(tmp_path: Path) -> None:
    # f = 50 %, r = 0.5: B = 0.75; the change also made the rest 20 % faster, D = 0.65, timed 0.65.
    planted = {"kernel_ratio": 0.5, "share": 0.5, "rest_ratio": 0.8, "app_ratio": 0.65}
    ev = _run(tmp_path, predictions=(AMDAHL,), **planted)
    amdahl = ev.end_to_end.amdahl
    r = amdahl.reconciliation
    assert r.status == "cross_effect" and r.rest == "faster" and not amdahl.contradicted
    assert amdahl.decomposition.rest_ratio.value == pytest.approx(0.8, abs=0.01)
    assert _verdict(ev, AMDAHL) == "inconclusive"
    assert ev.decision.consistent and not ev.decision.unsupported
    assert ev.value.capacity is not None and ev.value.fleet.established
    # Of the saving 1 - 0.65 = 0.35, the operation explains 0.25 and the rest 0.10.
    assert ev.value.fleet.explained == pytest.approx(0.25 / 0.35, abs=0.03)
    assert ev.value.fleet.cross_effect == pytest.approx(0.10 / 0.35, abs=0.03)
    page = _page(tmp_path / "page", predictions=(AMDAHL,), **planted)
    one = _page_one(page)
    assert "impossible" not in page and "contradicts it" not in one
    assert "**An effect outside the operation.**" in one
    assert "the rest of the request (its time outside the operation) got 19." in one
    assert "the declared share does not scale" in page
    # Every threshold that decides a word on page 1 is stated there, with where it is set.
    band = "against the practical band [0.9804, 1.020] (threshold 2%, set by `threshold` in `evidence timing`"
    assert band in one


@pytest.mark.parametrize(
    ("noise", "blocks", "page_one", "table"),
    [
        # Tight: the whole interval is faster than the band allows.
        (0.01, 20, "it is **beyond it, because the change also moved", "| beyond the bound, explained by"),
        # Wide: the interval crosses the band's faster edge. Page 1 said "within it" and the
        # table "beyond the bound" of the same interval, while the prediction was inconclusive.
        (0.15, 8, "it is **neither shown within it nor beyond it (its interval crosses", "| across an edge"),
    ],
)
def test_page_one_and_the_amdahl_table_place_a_cross_effect_alike(
    tmp_path: Path, noise: float, blocks: int, page_one: str, table: str
) -> None:
    planted = {"kernel_ratio": 0.5, "share": 0.5, "rest_ratio": 0.8, "app_ratio": 0.65}
    page = _page(tmp_path, predictions=(AMDAHL,), noise=noise, blocks=blocks, **planted)
    assert page_one in _page_one(page)
    (row,) = [line for line in page.splitlines() if line.startswith("| Measured application time ratio")]
    assert table in row


def test_a_slower_rest_of_the_request_is_a_cost_that_leads_page_one(tmp_path: Path) -> None:
    # The operation 2x faster at f = 50 % (B = 0.75), but the change costs the rest 30 %: D = 0.9.
    planted = {"kernel_ratio": 0.5, "share": 0.5, "rest_ratio": 1.3, "app_ratio": 0.9}
    ev = _run(tmp_path, predictions=(AMDAHL,), **planted)
    r = ev.end_to_end.amdahl.reconciliation
    assert r.status == "cross_effect" and r.cross_effect_loss
    assert _verdict(ev, AMDAHL) == "refuted"
    assert not ev.decision.consistent
    assert any("costs time outside the operation" in f for f in ev.decision.findings)
    one = _page_one(_page(tmp_path / "page", predictions=(AMDAHL,), **planted))
    assert "**The evidence contradicts it**" in one
    warnings = one.split("> [!WARNING]")[1]
    assert warnings.lstrip("\n> ").startswith("**A cost outside the operation.**")
    assert "**slower** beyond the 2% threshold" in one
    # A smoke run's timings are evidence of nothing, and its page 1 says so where it would lead.
    smoke = _page_one(_page(tmp_path / "smoke", quick=True, predictions=(AMDAHL,), **planted))
    assert "**The evidence contradicts it**" not in smoke
    assert "**This smoke run's numbers contradict it**" in smoke and "run without `--quick`" in smoke
    # Every reason against the decision in one callout, each named once; the numbers are the
    # callout above's and the prediction's own, not repeated in it.
    assert one.count("**Decision contradicted.**") == 1
    (contradicted,) = [line for line in one.splitlines() if "**Decision contradicted.**" in line]
    assert contradicted.count("Adopt, but") == 1 and "; and the change costs time outside" in contradicted
    assert "is refuted" in contradicted and "explained by the measured split" not in contradicted


def test_the_same_effect_explained_by_the_operation_inside_the_app_is_consistent(tmp_path: Path) -> None:
    # The share pass measured the operation 0.3x inside the application: B = 0.65, measured 0.65.
    planted = {"kernel_ratio": 1.1, "in_app_ratio": 0.3, "app_ratio": 0.65, "share_requests": 200}
    ev = _run(tmp_path, **planted, predictions=(AMDAHL,))
    amdahl = ev.end_to_end.amdahl
    assert amdahl.s_source.startswith("the operation's time inside the application")
    assert amdahl.s_fallback is None
    assert amdahl.reconciliation.status == "consistent"
    assert _verdict(ev, AMDAHL) == "confirmed"
    assert ev.decision.consistent and ev.value.fleet.established


@pytest.mark.parametrize(
    ("app_ratio", "rest_ratio", "status", "verdict"),
    [
        # faster than B = 0.75 allows while the share pass shows the rest unchanged
        (0.55, 1.0, "accounting_broken", "inconclusive"),
        (0.55, 0.6, "cross_effect", "inconclusive"),  # the rest got 40 % faster: D = 0.55
        (0.75, 1.0, "consistent", "confirmed"),  # exactly the bound
        (0.90, 1.3, "cross_effect", "refuted"),  # past the allowance, the rest 30 % slower: a cost
    ],
)
def test_amdahl_prediction_is_a_two_sided_consistency_test(
    tmp_path: Path, app_ratio: float, rest_ratio: float, status: str, verdict: str
) -> None:
    # 200 requests a round: enough for the share pass to show an unchanged rest unchanged.
    ev = _run(
        tmp_path,
        kernel_ratio=0.5,
        share=0.5,
        app_ratio=app_ratio,
        rest_ratio=rest_ratio,
        share_requests=200,
        predictions=(AMDAHL,),
    )
    amdahl = ev.end_to_end.amdahl
    assert amdahl.bound_time_ratio == pytest.approx(0.75, abs=0.01)
    assert amdahl.reconciliation.status == status
    assert _verdict(ev, AMDAHL) == verdict


def test_a_throughput_prediction_is_judged_one_sided_against_the_speedup_bound(tmp_path: Path) -> None:
    # B = 0.75: 1/B = 1.33x; the goodput brackets allow [1.33, 3). Goodput under a latency SLO may
    # exceed 1/B (queueing), so only a shortfall below the band's slow edge (1 / 0.875) refutes.
    line = "app.throughput ratio >= amdahl"
    ev = _run(tmp_path, kernel_ratio=0.5, share=0.5, app_ratio=0.75, predictions=(line,))
    (prediction,) = ev.predictions
    assert prediction.bound == pytest.approx(1 / 0.75, rel=0.02)
    assert prediction.verdict == "confirmed"
    assert "beyond" not in prediction.message


def test_s_is_taken_at_the_applications_operating_point(tmp_path: Path) -> None:
    # The application runs at a shape no kernel timing covers; the share pass timed it in both arms.
    ev = _run(tmp_path, app_shape={"M": 32, "N": 128}, kernel_ratio=1.1, in_app_ratio=0.3, app_ratio=0.65)
    amdahl = ev.end_to_end.amdahl
    assert amdahl.s == pytest.approx(1 / 0.3, rel=0.03)
    assert amdahl.s_fallback is None


def test_a_borrowed_s_is_a_finding(tmp_path: Path) -> None:
    ev = _run(tmp_path, app_shape={"M": 32, "N": 128}, change_share=False, kernel_ratio=0.8)
    amdahl = ev.end_to_end.amdahl
    assert amdahl.s_source == "kernel total-time combination over shapes"
    assert amdahl.s_fallback and "not at the application's operating point" in amdahl.s_fallback
    assert "**s not at the operating point.**" in _page_one(
        _page(tmp_path / "page", app_shape={"M": 32, "N": 128}, change_share=False)
    )


def test_a_declared_share_the_measurement_contradicts_is_a_finding(tmp_path: Path) -> None:
    ev = _run(tmp_path, declared_share="8%", share=0.5)
    check = ev.end_to_end.amdahl.share_check
    assert check is not None and not check.compatible
    assert "declared production share 8%;" in ev.value.share_basis
    assert "CONTRADICTS the declared share" in ev.value.share_basis
    page = _page(tmp_path / "page", declared_share="8%", share=0.5)
    # Named by its line, as a refuted prediction is: a new user looked for the statement.
    line = next(n for n, t in enumerate(study_text([], "adopt", "8%").splitlines(), 1) if "share 8%" in t)
    assert f"**Declared share contradicted** (line {line}). " in _page_one(page)
    assert "Share of time the value extrapolates from" in page


def test_a_declared_share_inside_the_measured_interval_is_no_finding(tmp_path: Path) -> None:
    ev = _run(tmp_path, declared_share="50%", share=0.5)
    assert ev.end_to_end.amdahl.share_check.compatible
    assert "compatible with it" in ev.value.share_basis


def test_a_declared_share_compatible_only_through_the_tolerance_says_so(tmp_path: Path) -> None:
    # The new user's 55 % beside a measured 58.9 % [58.7, 59.1] read "compatible with it": the
    # 10 % tolerance that decided the word was never stated.
    ev = _run(tmp_path, declared_share="55%", share=0.589)
    f = ev.end_to_end.amdahl.f
    assert ev.end_to_end.amdahl.share_check.compatible and not f.low <= 0.55 <= f.high
    assert "only through the 10% rounding tolerance a one-figure share carries" in ev.value.share_basis
    assert "only through the 10% rounding tolerance" in _page(
        tmp_path / "page", declared_share="55%", share=0.589
    )


# ------------------------------------------------------------------ value


def test_no_value_from_an_effect_amdahl_does_not_allow(tmp_path: Path) -> None:
    # The full rmsnorm run: f = 3.6 % and the operation 0.7x allow 1.1 %; the application measured 13 %
    # while its share pass shows the rest unchanged: the numbers do not add up.
    ev = _run(tmp_path, share=0.036, kernel_ratio=0.7, app_ratio=0.87, declared_share="4%")
    assert ev.end_to_end.amdahl.reconciliation.status == "accounting_broken"
    assert not ev.value.fleet.established and "Amdahl" in (ev.value.fleet.reason or "")
    page = _page(tmp_path / "page", share=0.036, kernel_ratio=0.7, app_ratio=0.87, declared_share="4%")
    assert "**No value is claimed.**" in page
    assert "gpu_hours**" not in page


def test_no_value_capped_by_a_declared_share_the_measurement_contradicts(tmp_path: Path) -> None:
    # The quick rmsnorm run: value capped at the declared 8 % share while f measured 95 %.
    planted = {"declared_share": "8%", "share": 0.95, "kernel_ratio": 0.5, "app_ratio": 0.55}
    ev = _run(tmp_path, **planted)
    assert ev.end_to_end.amdahl.reconciliation.status == "consistent"
    for v in (ev.value.fleet, ev.value.per_unit):
        assert not v.established and v.value is None
        assert (v.reason or "").startswith("the declared share 8% is contradicted by the measured f 95.")
    page = _page(tmp_path / "page", **planted)
    assert "**No value is claimed.** The declared share 8% is contradicted" in page
    assert "gpu_hours**" not in page


def test_a_declared_share_is_quoted_as_declared(tmp_path: Path) -> None:
    # Rounded to a whole percent, a declared 13.5 % read "14%" in the one sentence that names it.
    planted = {"declared_share": "13.5%", "share": 0.054, "kernel_ratio": 0.55, "app_ratio": 0.976}
    ev = _run(tmp_path, **planted)
    assert "the declared share 13.5% is contradicted by the measured f 5.4%" in (ev.value.fleet.reason or "")


def test_value_from_a_consistent_established_effect(tmp_path: Path) -> None:
    ev = _run(tmp_path, share=0.5, kernel_ratio=0.8, app_ratio=0.9)
    assert ev.end_to_end.amdahl.reconciliation.status == "consistent"
    assert ev.value.fleet.established
    assert ev.value.fleet.value.value == pytest.approx(100, rel=0.1)


def test_no_value_from_an_inconclusive_effect(tmp_path: Path) -> None:
    ev = _run(tmp_path, app_ratio=0.95, noise=0.3, blocks=MIN_PAIRS)
    assert ev.end_to_end.comparison.verdict == "inconclusive"
    assert not ev.value.fleet.established and ev.value.fleet.value is None


def test_too_few_pairs_give_no_interval_and_nothing_built_on_one(tmp_path: Path) -> None:
    # A quick run: 4 blocks per arm make 4 pairs, below the 5 an interval needs.
    planted = {"blocks": 4, "predictions": ("op.time ratio <= 0.9", AMDAHL)}
    ev = _run(tmp_path, **planted)
    why = "too few block pairs for an interval: 4 < 5"
    c = ev.end_to_end.comparison
    assert (c.ci_low, c.ci_high, c.verdict, c.interval_missing) == (None, None, "inconclusive", why)
    assert all(s.comparison.interval_missing == why for s in ev.operations[0].shapes)
    assert ev.end_to_end.amdahl.reconciliation is None
    assert why in (ev.end_to_end.amdahl.reconciliation_missing or "")
    assert [p.verdict for p in ev.predictions] == ["inconclusive", "inconclusive"]
    assert not ev.value.fleet.established and why in (ev.value.fleet.reason or "")
    page = _page_one(_page(tmp_path / "page", **planted))
    assert "no interval (too few block pairs for an interval: 4 \\< 5): **inconclusive**" in page
    assert "Amdahl's bound on it, 0.8986: **not established**" in page
    assert "e-" not in page and "e+" not in page


# ------------------------------------------------------------------ invalid results


def test_a_result_above_the_measured_roof_is_excluded_everywhere(tmp_path: Path) -> None:
    # The copy roof as slow as the baseline: modelled bytes put every arm at 250 % of the roof.
    lines = ("op.time ratio <= 0.9", "op.bytes ratio <= 0.45")
    ev = _run(tmp_path, copy_level=1.0, predictions=lines)
    op = ev.operations[0]
    assert all(s.invalid and "PQ006" in s.invalid for s in op.shapes)
    assert op.combined is None and "every shape is invalid" in (op.combined_missing or "")
    assert {p.text: p.verdict for p in ev.predictions} == {lines[0]: "invalid", lines[1]: "invalid"}
    assert "byte model is not the traffic that was timed" in ev.predictions[1].message
    assert "a cache served some of them" in ev.predictions[1].message
    assert all(s.mechanism.explanation.status == "invalid" for s in op.shapes)
    assert ev.end_to_end.amdahl.s_fallback is None  # s comes from the in-app times, not the invalid kernels
    assert any("no valid timing" in u for u in ev.decision.unsupported)
    page = _page(tmp_path / "page", copy_level=1.0, predictions=lines)
    assert "**Invalid results excluded**" in _page_one(page)
    assert "impossible (PQ006)" in page


def test_results_under_the_roof_are_valid(tmp_path: Path) -> None:
    lines = ("op.time ratio <= 0.9", "op.bytes ratio <= 0.45")
    ev = _run(tmp_path, copy_level=0.3, predictions=lines)
    assert not any(s.invalid for s in ev.operations[0].shapes)
    assert {p.verdict for p in ev.predictions} == {"confirmed"}


def test_a_throttled_run_is_invalid(tmp_path: Path) -> None:
    # NVML reported the software power cap (0x4) during every block: the timings are not comparable.
    ev = _run(tmp_path, clock_reasons=0x4 | 0x1)
    for shape in ev.operations[0].shapes:
        assert any(f.code == "PQ005" and f.severity == "error" for f in shape.findings)
        assert shape.invalid and "PQ005" in shape.invalid
    assert ev.operations[0].combined is None


def test_locked_application_clocks_are_not_throttling(tmp_path: Path) -> None:
    # 0x2 is set whenever application clocks are locked, the setup a benchmark wants: no finding.
    ev = _run(tmp_path, clock_reasons=0x2 | 0x1)
    assert not any(f.code == "PQ005" for s in ev.operations[0].shapes for f in s.findings)
    assert all(s.invalid is None for s in ev.operations[0].shapes)


def test_a_change_that_fails_correctness_has_no_valid_timing(tmp_path: Path) -> None:
    ev = _run(tmp_path, correct=False)
    assert all(s.invalid == "the operation fails its correctness check" for s in ev.operations[0].shapes)
    assert ev.operations[0].combined is None


# ------------------------------------------------------------------ shapes and mechanism


def test_shapes_combine_by_total_time_and_a_regression_is_named(tmp_path: Path) -> None:
    # Equal baseline times, weights 0.75 / 0.25, ratios 0.5 and 1.2: total 0.675 (mean of logs: 0.622).
    ev = _run(tmp_path, kernel_ratio=(0.5, 1.2))
    op = ev.operations[0]
    assert op.combined.ratio == pytest.approx(0.675, rel=0.01)
    assert op.regressions == ("256x1024",)


def test_the_time_moving_against_the_mechanism_is_contradicted(tmp_path: Path) -> None:
    ev = _run(tmp_path, kernel_ratio=1.3)
    explanation = ev.operations[0].shapes[1].mechanism.explanation
    assert (explanation.status, explanation.flagged) == ("contradicted", True)


def test_a_wide_interval_is_no_evidence_either_way(tmp_path: Path) -> None:
    ev = _run(tmp_path, kernel_ratio=0.9, noise=0.6, blocks=MIN_PAIRS)
    explanation = ev.operations[0].shapes[0].mechanism.explanation
    assert explanation.status == "not realised"
    assert "inconclusive: no evidence either way" in explanation.message


def test_a_small_speedup_realises_a_small_fraction_of_the_mechanism(tmp_path: Path) -> None:
    # Bytes fall to 0.4; the time falls 5 %: 0.05 / 0.6 = 8 % of what the bytes allow.
    ev = _run(tmp_path, kernel_ratio=0.95, noise=0.005)
    explanation = ev.operations[0].shapes[0].mechanism.explanation
    assert explanation.status == "realised"
    assert explanation.fraction_realised.value == pytest.approx(0.05 / 0.6, abs=0.02)


# ------------------------------------------------------------------ capacity and correctness on page 1


def test_capacity_from_single_passes_is_an_unconfirmed_interval(tmp_path: Path) -> None:
    probes = {"baseline": (100.0, 200.0, 450.0), "change": (200.0, 400.0, 900.0)}
    ev = _run(tmp_path, probes=probes)
    capacity = ev.value.capacity
    assert (capacity.low, capacity.high) == (pytest.approx(400 / 450), pytest.approx(900 / 200))
    assert not capacity.confirmed
    assert "unconfirmed" in _page_one(_page(tmp_path / "page", probes=probes))


def test_page_one_names_the_failing_variant_shape_seed_and_kind(tmp_path: Path) -> None:
    page = _page_one(_page(tmp_path, failing={"unwritten": 3, "rel_l2": 0.5}))
    assert "`change` at M = 3 \N{MULTIPLICATION SIGN} N = 31, seed 1: unwritten" in page


# ------------------------------------------------------------------ power


def test_an_amdahl_effect_below_the_end_to_end_mde_is_said_to_be_invisible(tmp_path: Path) -> None:
    # f = 3.6 % and the operation 0.7x: Amdahl allows 1.1 %; 3 % block noise over 20 pairs cannot see it.
    ev = _run(tmp_path, share=0.036, kernel_ratio=0.7, app_ratio=0.99, noise=0.03, declared_share="4%")
    power = ev.end_to_end.amdahl.power
    # 1.1 % is inside the study's 2 % threshold: no number of pairs could call it.
    assert power and "cannot call the effect Amdahl allows (1.1" in power
    assert "no number of pairs would at the 0.02 threshold" in power


def test_an_amdahl_effect_above_the_mde_needs_no_warning(tmp_path: Path) -> None:
    ev = _run(tmp_path, share=0.5, kernel_ratio=0.8, app_ratio=0.9)
    assert ev.end_to_end.amdahl.power is None


# ------------------------------------------------------------------ many comparisons


def test_each_time_prediction_carries_what_the_run_could_detect(tmp_path: Path) -> None:
    # 1 % block noise over 20 pairs detects about 0.8 %: a 0.5 % prediction is below it.
    # 2.56 % is past the 2 % threshold but short of what 20 pairs of 1 % noise call (about 2.8 %).
    small, app = "op.time ratio <= 0.975", "app.time ratio <= 0.975"
    planted = {"kernel_ratio": 0.8, "app_ratio": 0.9, "predictions": (small, app)}
    ev = _run(tmp_path, **planted)
    by_text = {p.text: p for p in ev.predictions}
    combined = ev.operations[0].combined
    assert by_text[small].detectable == pytest.approx(1 / (1 + combined.mde))
    assert 0.002 < combined.mde < 0.05
    needed = pairs_needed(combined.spread_log, 1 / 0.975 - 1, combined.level, threshold=combined.theta)
    assert f"about {needed} block pairs per shape would" in by_text[small].message and needed > 20
    c = ev.end_to_end.comparison
    assert by_text[app].detectable == pytest.approx(1 / (1 + c.mde))
    per_block = ev.end_to_end.requests_per_block
    assert per_block and per_block > 1
    wanted = pairs_needed(c.sigma_log, 1 / 0.975 - 1, c.level, threshold=c.theta) * per_block
    assert f"about {wanted} requests per arm would" in by_text[app].message
    page = _page_one(_page(tmp_path / "page", **planted))
    assert [by_text[small].verdict, by_text[app].verdict] == ["confirmed", "confirmed"]
    # Both were decided: page 1 does not list them among what the run cannot detect.
    assert "| Detectable |" in page and "below what the run detects" not in page
    undecided = _page_one(_page(tmp_path / "undecided", kernel_ratio=0.975, predictions=(small,)))
    assert "Without a verdict, or below what the run detects: line" in undecided
    assert "smaller than this run can detect" in undecided


def test_a_prediction_above_the_mde_has_no_detection_note(tmp_path: Path) -> None:
    ev = _run(tmp_path, kernel_ratio=0.8, predictions=("op.time ratio <= 0.9",))
    (p,) = ev.predictions
    assert p.detectable is not None and p.detectable > 0.9
    assert "detect" not in p.message


def test_holm_covers_every_valid_time_comparison_and_names_its_family(tmp_path: Path) -> None:
    ev = _run(tmp_path, kernel_ratio=0.8, app_ratio=0.9)
    family = ev.family
    assert family is not None and "every valid kernel shape" in family.family
    assert family.names == ("op 64x4096", "op 256x1024", "op (combined)", "app")
    assert all(family.rejected)


def test_a_verdict_holm_does_not_keep_is_inconclusive_everywhere(tmp_path: Path) -> None:
    """Holm was computed and printed, and nothing read it: a shape 'slower' alone stayed slower
    on page 1 and in the regressions. Planted: the second shape 10 % slower, and a family in
    which its p-value (0.04, the third smallest of 4: adjusted 2 x 0.04 = 0.08) does not survive."""
    from perfdsl.evaluate.family import apply
    from perfdsl.stats.multiple import holm

    ev = _run(tmp_path, kernel_ratio=(0.5, 1.10), app_ratio=0.9)
    op = ev.operations[0]
    slow = op.shapes[1]
    assert slow.comparison.verdict == "slower" and op.regressions == (slow.label,)
    names = ("op 64x4096", f"op {slow.label}", "op (combined)", "app")
    family = holm("planted", names, [1e-6, 0.04, 1e-6, 0.3])
    (held,), end = apply(family, ev.operations, ev.end_to_end)
    dropped = held.shapes[1].comparison
    assert dropped.verdict == "inconclusive"
    assert dropped.family == (
        "not kept after Holm's adjustment over the family of 4 comparisons (adjusted p = 0.08)"
    )
    assert held.regressions == () and held.combined.regressions == ()
    assert held.shapes[0].comparison.verdict == op.shapes[0].comparison.verdict  # kept
    # The application's 0.3 is not kept either: its "faster" is withdrawn before value reads it.
    assert ev.end_to_end.comparison.verdict == "faster" and end.comparison.verdict == "inconclusive"


@pytest.mark.slow  # 2,400 seeded comparisons
def test_holm_keeps_an_aa_family_at_its_error_rate() -> None:
    """Twelve A/A comparisons of 10 pairs each, judged at theta = 0 (significance): a false call
    anywhere in the family in at most 5 % of 200 seeded families after Holm, against 40 % or so
    without it (the planted fault)."""
    from stats_simulation import abba_pairs

    from perfdsl.stats.multiple import holm
    from perfdsl.stats.paired import compare_paired

    adjusted = unadjusted = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        found = [compare_paired(abba_pairs(rng, 10, 1.0, 0.02), theta=0.0, resamples=400) for _ in range(12)]
        calls = [c.verdict in ("faster", "slower") for c in found]
        kept = holm("aa", [str(i) for i in range(12)], [c.p_value for c in found]).rejected
        unadjusted += any(calls)
        adjusted += any(k and call for k, call in zip(kept, calls, strict=True))
    assert adjusted / 200 <= 0.05
    assert unadjusted / 200 > 0.25


def test_a_p_value_at_the_bootstrap_floor_is_resolved_analytically(tmp_path: Path) -> None:
    from perfdsl.evaluate.family import BOOTSTRAP_FLOOR, resolved_p

    ev = _run(tmp_path, kernel_ratio=0.5, noise=0.01)
    c = ev.operations[0].shapes[0].comparison
    assert c.p_value <= BOOTSTRAP_FLOOR * 1.5  # a 2x effect in 1 % noise: every resample agrees
    assert resolved_p(c) < 1e-10


def test_holm_takes_a_sequential_stop_s_own_p_value_not_a_t_reading_of_its_interval(tmp_path: Path) -> None:
    # An anytime-valid 0.000198, under the bootstrap's floor, was replaced by 0.0113: a t interval's
    # p read off the confidence sequence's (wider) interval.
    from perfdsl.bundle.stopping import RHO, StoppingRule
    from perfdsl.evaluate.family import BOOTSTRAP_FLOOR, adjust, resolved_p
    from perfdsl.stats.sequential.rule import replay

    ev = _run(tmp_path, kernel_ratio=0.97, noise=0.02)
    rule = StoppingRule(0.9875, 0.01, 6, 100, RHO)
    stop = replay(math.log(0.97) + 0.02 * np.random.default_rng(4).standard_normal(100), rule)
    assert stop is not None and stop.p_value < BOOTSTRAP_FLOOR
    op = ev.operations[0]
    shape = attrs.evolve(
        op.shapes[0], stop=stop, comparison=attrs.evolve(op.shapes[0].comparison, p_value=stop.p_value)
    )
    ops = (attrs.evolve(op, shapes=(shape, *op.shapes[1:])),)
    family = adjust(ops, ev.end_to_end, 0.95)
    assert family is not None
    assert family.p_values[0] == stop.p_value != resolved_p(shape.usable)


def test_holm_leaves_invalid_comparisons_out_of_the_family(tmp_path: Path) -> None:
    # Both shapes above the roof: only the application is left, and one test needs no adjustment.
    assert _run(tmp_path, copy_level=1.0).family is None


REFERENCE_FAILED = {
    "rel_l2": None,
    "max_abs": None,
    "deterministic": None,
    "message": "reference `bad_shape` failed: ValueError: `y` has shape (3,), outputs() declares (3, 31)",
}


@pytest.mark.parametrize(
    ("failing", "kinds"),
    [
        ({"rel_l2": 0.5}, ("tolerance",)),
        ({"nonfinite": 2}, ("NaN",)),
        ({"deterministic": False}, ("nondeterministic",)),
        ({"unwritten": 1, "nonfinite": 1}, ("unwritten", "NaN")),
        (REFERENCE_FAILED, ("error",)),
    ],
)
def test_each_failing_case_says_what_went_wrong(
    tmp_path: Path, failing: dict[str, object], kinds: tuple[str, ...]
) -> None:
    (case,) = _run(tmp_path, failing=failing).operations[0].correctness.failing
    assert (case.variant, case.seed, case.kinds) == ("change", 1, kinds)


def test_page_one_names_a_failing_reference_not_a_tolerance(tmp_path: Path) -> None:
    """No output was compared: page 1 quotes why (a new user's reference returned the wrong
    shape, and page 1 read as both correct arms over tolerance)."""
    page = _page_one(_page(tmp_path, failing=REFERENCE_FAILED))
    assert "reference `bad_shape` failed: ValueError" in page
    assert "tolerance" not in page.split("Correctness: **FAILED**")[1].split(".")[0]


def test_value_is_capped_at_what_amdahl_allows_at_the_declared_share(tmp_path: Path) -> None:
    # f = 10 % (declared and measured), the operation at 0.5: no application can be faster than
    # B = 0.95, so the favourable end of an effect measured around 0.95 is capped there.
    ev = _run(tmp_path, share=0.1, declared_share="10%", kernel_ratio=0.5, in_app_ratio=0.5, app_ratio=0.95)
    assert ev.end_to_end.amdahl.reconciliation.status == "consistent"
    assert ev.end_to_end.comparison.ci_low < 0.95
    fleet = ev.value.fleet
    assert fleet.established and fleet.capped
    saved_at_cap = 1 - (0.9 + 0.1 * ev.end_to_end.amdahl.reconciliation.op_ratio.low)
    baseline_s = ev.end_to_end.baseline_median_ns * 1e-9
    assert fleet.saved_time.high == pytest.approx(baseline_s * saved_at_cap, rel=1e-6)


# ------------------------------------------------------------------ a failing change


def test_a_failing_change_is_not_a_result(tmp_path: Path) -> None:
    """A change that fails correctness: page 1 opened 'does not contradict it' for `investigate`,
    and a bytes prediction about the wrong change stayed 'confirmed'."""
    lines = ("op.time ratio <= 0.9", "op.bytes ratio <= 0.45")
    planted = {"failing": {"nonfinite": 3, "rel_l2": None}, "predictions": lines, "decision": "investigate"}
    ev = _run(tmp_path, **planted)
    assert {p.text: p.verdict for p in ev.predictions} == {lines[0]: "invalid", lines[1]: "invalid"}
    assert all("fails its correctness check" in p.message for p in ev.predictions)
    one = _page_one(_page(tmp_path / "page", **planted))
    assert "does not contradict it" not in one
    assert "**The change fails its correctness check**" in one


def test_the_worst_seed_of_a_shape_is_the_failing_one() -> None:
    from perfdsl.bundle.results import CorrectnessCase
    from perfdsl.report.correctness import _case_table

    def case(seed: int, passed: bool, rel_l2: float | None) -> CorrectnessCase:
        nonfinite = 0 if passed else 4
        return CorrectnessCase(
            "change", "fused", {"N": 8}, False, seed, passed, rel_l2, rel_l2, 0, nonfinite, True, ""
        )

    table = _case_table("op", [case(0, True, 1e-8), case(1, False, None)], {"rel_l2": 1e-5}, ("N",))
    row = next(line for line in table.splitlines() if line.startswith("| change"))
    assert "non-finite" in row and "1e-08" not in row and "1.000e-08" not in row


def test_bytes_removed_is_credited_only_near_the_roof(tmp_path: Path) -> None:
    """A serial chain at 16-21 % of the DRAM roof was called "mechanism realised 22 %" for bytes it
    never waited on. Planted: the copy roof 10x faster than the baseline, which then runs at 24 %."""
    far = _run(tmp_path / "far", copy_level=0.1)
    for shape in far.operations[0].shapes:
        e = shape.mechanism.explanation
        assert e.status == "not bound" and e.flagged and e.fraction_realised is None
        assert "baseline at 24%" in e.message and "not bound by memory traffic" in e.message
    page = _page(tmp_path / "page", copy_level=0.1)
    assert "**The mechanism does not explain the time change**" in page
    near = _run(tmp_path / "near", copy_level=0.3)  # the baseline at 73 % of its roof
    assert all(s.mechanism.explanation.status == "realised" for s in near.operations[0].shapes)


# ------------------------------------------------------------------ a busy machine


def test_a_busy_machine_is_seen_in_request_blocks_and_load_probes(tmp_path: Path) -> None:
    """Another process took a core during every request block and the probes that decide the
    goodputs: only kernel blocks were ever read, and page 1 printed the capacity as it came."""
    busy = {"application": (), "baseline": (300.0, 450.0), "change": (600.0,)}
    probes = {"baseline": (300.0, 300.0, 450.0), "change": (600.0, 600.0, 900.0)}
    ev = _run(tmp_path, busy=busy, probes=probes)
    assert any(f.code == "PQ009" and f.subject.startswith("app ") for f in ev.end_to_end.findings)
    assert "app" in ev.contended.shapes and ev.contended.verdicts_rest_on_contended
    contended = {g.arm: g.contended for g in ev.load.arms}
    assert contended == {"baseline": (300.0, 450.0), "change": (600.0,)}
    one = _page_one(_page(tmp_path / "page", busy=busy, probes=probes))
    assert "**The machine was busy.**" in one and "app" in one.split("**The machine was busy.**")[1]
    assert "timed blocks whose load could be read competed with other work, among them" in one
    assert "**Load probes competed with other work** (baseline at 300 rps, 450 rps; change at 600 rps)" in one
    quiet = _run(tmp_path / "quiet", probes=probes)
    assert not quiet.contended.verdicts_rest_on_contended
    assert all(g.contended == () for g in quiet.load.arms)


def test_a_capacity_that_does_not_follow_the_request_time_is_a_finding(tmp_path: Path) -> None:
    """A 3 % faster request with a capacity bracket of [1.44, 1.55): the load test measured
    something else. Planted: the request 10 % faster, the goodput tripled (bracket [2.4, 4.3))."""
    tripled = {
        "app_ratio": 0.9,
        "capacities": {"baseline": 400.0, "change": 1200.0},
        "probes": {"baseline": (300.0, 300.0, 450.0), "change": (1100.0, 1100.0, 1300.0)},
    }
    ev = _run(tmp_path, **tripled)
    assert ev.load.service_mismatch and "lies far from" in ev.load.service_mismatch
    one = _page_one(_page(tmp_path / "page", **tripled))
    assert "**Capacity does not follow the request time.**" in one
    matched = {
        "app_ratio": 0.9,
        "capacities": {"baseline": 400.0, "change": 440.0},
        "probes": {"baseline": (300.0, 300.0, 450.0), "change": (330.0, 330.0, 500.0)},
    }
    assert _run(tmp_path / "matched", **matched).load.service_mismatch is None


def test_page_one_says_when_the_mechanism_does_not_explain_the_time_change(tmp_path: Path) -> None:
    """Arms far below their roof: bytes cannot be what the time follows, and page 1 must say so."""
    page = _page_one(_page(tmp_path / "weak", copy_level=0.1))
    assert "**The mechanism does not explain the time change** of `op` at 64x4096: " in page
    assert "not bound by memory traffic" in page
    assert "does not explain the time change" not in _page_one(_page(tmp_path / "bound"))


def test_a_value_whose_whole_interval_the_cap_raised_is_called_the_cap(tmp_path: Path) -> None:
    # f 22.5 % measured, 21 % declared (compatible within the rounding tolerance), the operation at
    # 0.43: the application's whole interval lies below what 21 % allows, so the cap raises both
    # ends and the "interval" printed was [483 µs, 483 µs].
    planted = {"share": 0.225, "declared_share": "21%", "kernel_ratio": 0.43, "in_app_ratio": 0.43}
    ev = _run(tmp_path, **planted, app_ratio=0.872)
    saved = ev.value.per_unit.saved_time
    assert ev.value.fleet.capped and saved is not None and saved.low == saved.high
    page = _page(tmp_path / "page", **planted, app_ratio=0.872)
    value = page.split("## Value")[1].split("## Limitations")[0]
    assert value.count("the whole 95% interval lay past what Amdahl allows at the declared share") == 2
    assert "interval of the saving [" not in value
    # Where only the favourable end is capped, the interval stays an interval.
    partly = _page(tmp_path / "partly", share=0.1, declared_share="10%", kernel_ratio=0.5, app_ratio=0.95)
    assert "95% interval of the saving [" in partly and "the whole 95% interval" not in partly


def test_an_operation_with_every_shape_invalid_says_so_once(tmp_path: Path) -> None:
    # Page 1 read "no weighted effect (every shape is invalid (262144): no weighted effect)".
    one = _page_one(_page(tmp_path, copy_level=1.0))
    assert "Kernel `op`: no weighted effect (every shape is invalid (64x4096, 256x1024))." in one
    assert one.count("no weighted effect") == 1


def test_a_value_wholly_below_zero_is_called_a_cost(tmp_path: Path) -> None:
    # "The value may be zero or negative ... may save nothing, or cost" stood under an interval of
    # [-1.20, -0.214] cpu_hours per day: a cost at this confidence, not a maybe.
    planted = {"kernel_ratio": 1.14, "app_ratio": 1.07, "share": 0.5}
    fleet = _run(tmp_path, **planted).value.fleet.value
    assert fleet is not None and fleet.high < 0
    value = _page(tmp_path / "page", **planted).split("## Value")[1]
    assert "**The change costs.** Its whole interval lies below zero" in value
    assert "may be zero or negative" not in value


def test_a_decided_end_to_end_verdict_carries_no_power_warning(tmp_path: Path) -> None:
    # A request time decided faster at 18 pairs sat under "Underpowered end to end: the design
    # cannot call the effect Amdahl allows": the interval had called it.
    planted = {"share": 0.036, "kernel_ratio": 0.7, "app_ratio": 0.94, "noise": 0.03, "declared_share": "4%"}
    ev = _run(tmp_path, **planted)
    assert ev.end_to_end.comparison is not None and ev.end_to_end.comparison.verdict == "faster"
    assert ev.end_to_end.amdahl.power is None
    assert "Underpowered end to end" not in _page_one(_page(tmp_path / "page", **planted))


def test_requests_the_clock_cannot_resolve_are_no_end_to_end_evidence(tmp_path: Path) -> None:
    # Audit F12.b: PQ003 (samples shorter than the clock) was found on the application's requests
    # and never applied: the request time still decided "faster", and the decision leant on it.
    planted = {"app_level_ns": 300.0, "timer_resolution_ns": 500.0, "app_ratio": 0.5}
    ev = _run(tmp_path, **planted)
    assert any(f.code == "PQ003" and f.severity == "error" for f in ev.end_to_end.findings)
    assert ev.end_to_end.comparison is None
    assert "PQ003" in (ev.end_to_end.comparison_missing or "")
    (why,) = (why for why in ev.decision.unsupported if "PQ003" in why)
    assert why.endswith("a rerun whose request samples are evidence would supply it")
    assert "PQ003" in _page_one(_page(tmp_path / "page", **planted))


def test_requests_the_clock_resolves_are_end_to_end_evidence(tmp_path: Path) -> None:
    ev = _run(tmp_path, app_level_ns=4e6, timer_resolution_ns=500.0, app_ratio=0.5)
    assert not any(f.severity == "error" for f in ev.end_to_end.findings)
    assert ev.end_to_end.comparison is not None and ev.end_to_end.comparison.verdict == "faster"


def test_kernel_calls_shorter_than_the_clock_leave_the_shape_without_evidence(tmp_path: Path) -> None:
    # The change's calls planted at 0.1 ns read back as 0 ns: evaluate divided by them (a traceback).
    ev = _run(tmp_path, kernel_ratio=1e-7)
    (operation,) = ev.operations
    for shape in operation.shapes:
        assert shape.comparison is None
        assert "shorter than the clock resolves" in (shape.missing or "")
        assert any(f.code == "PQ003" for f in shape.findings)
        assert all(b.arm != "change" for b in shape.mechanism.bandwidth)


def test_a_run_with_no_timing_evidence_leaves_the_decision_unsupported_not_contradicted(
    tmp_path: Path,
) -> None:
    # A cudasim run of rmsnorm_fusion opened "Decision: adopt. The evidence contradicts it": the
    # simulator's timings are no evidence, and missing evidence was counted against the decision.
    planted = {"target": "cudasim", "valid": False}
    ev = _run(tmp_path, **planted)
    assert ev.decision.consistent and ev.decision.findings == ()
    assert any("timings on `cudasim` are not evidence" in why for why in ev.decision.unsupported)
    first = _page_one(_page(tmp_path / "page", **planted))
    assert "**The evidence does not yet support it**" in first
    assert "contradicts it" not in first


def test_the_report_says_why_the_split_and_the_verdict_use_different_estimands(tmp_path: Path) -> None:
    # f, r and the rest are ratios of means, the request-time verdict a ratio of block medians:
    # the Amdahl table named each, and never said why they differ.
    page = _page(tmp_path, kernel_ratio=0.5, share=0.5, app_ratio=0.75)
    assert "Two estimands, on purpose. The split is of mean times per request, because only means add" in page
    assert "The verdict on request time is of block medians" in page


def test_a_goodput_is_never_confirmed_above_a_rate_that_failed(tmp_path: Path) -> None:
    # Audit F3, through the bundle: the baseline's first probe at 200 rps failed, and the old rule
    # confirmed 300 rps above it (it had passed twice), for a capacity ratio printed as exact.
    planted = {"fails_at": {"baseline": (200.0,)}}
    ev = _run(tmp_path, **planted)
    (baseline,) = [g for g in ev.load.arms if g.arm == "baseline"]
    assert baseline.goodput == 100.0 and baseline.failing == 200.0
    assert not baseline.confirmed and 300.0 in baseline.passed_above
    assert not ev.value.capacity.confirmed
    assert "unconfirmed" in _page_one(_page(tmp_path / "page", **planted))


def test_an_application_slower_than_a_slower_operation_explains_is_a_cost_outside_it(tmp_path: Path) -> None:
    # Audit F9, through the bundle: the operation 20 % slower (B = 1.1) and the request 30 % slower,
    # with the share pass showing the rest 40 % slower, was "another bottleneck absorbs it".
    planted = {"kernel_ratio": 1.2, "share": 0.5, "app_ratio": 1.3, "rest_ratio": 1.4, "share_requests": 200}
    r = _run(tmp_path, **planted, predictions=(AMDAHL,)).end_to_end.amdahl.reconciliation
    assert r.status == "cross_effect" and r.rest == "slower" and r.cross_effect_loss
    assert "absorbs" not in r.message and "(its time outside the operation) got" in r.message


def test_an_application_that_ended_its_worker_is_named_wherever_its_evidence_is_missing(
    tmp_path: Path,
) -> None:
    # A new user's page 1 said "the run has no application" and "the run has no load test" of a
    # study that has both: its application's worker had died, and only the decision said so.
    import json

    import command_fuzz

    bundle = make_bundle(tmp_path, predictions=(AMDAHL,))
    results = json.loads((bundle / "results.json").read_text(encoding="utf-8"))
    died = "the measured code ended its worker during application: signal (SIGSEGV: Segmentation fault)"
    results.update(application=None, application_missing=died)
    (bundle / "results.json").write_text(json.dumps(results), encoding="utf-8")
    command_fuzz.reseal(bundle)
    ev = evaluate(open_evaluated(bundle))
    assert ev.end_to_end_missing == died and ev.load_missing == died
    assert _verdict(ev, AMDAHL) == "not evidence"
    (amdahl,) = (p for p in ev.predictions if p.text == AMDAHL)
    assert amdahl.message == f"no Amdahl bound: {died}"
    assert ev.value is None and ev.value_missing == f"no measured end-to-end effect: {died}"


def test_page_one_calls_a_ratio_inside_amdahl_s_band_consistent_only_with_the_rest_shown_unchanged(
    tmp_path: Path,
) -> None:
    # A new user's page 1 said "it is consistent" beside a table whose `<= amdahl` was
    # inconclusive: the rest of the request was left open, which the bound assumes unchanged.
    open_rest = _page_one(_page(tmp_path / "open", predictions=(AMDAHL,), share_requests=40))
    assert "it is **not contradicted**, but not yet shown consistent" in open_rest
    assert "it is **consistent**" not in open_rest
    shown = _page_one(_page(tmp_path / "shown", predictions=(AMDAHL,), share_requests=200))
    assert "it is **consistent**" in shown and "not yet shown consistent" not in shown
    # The terminal's summary words it as page 1 does.
    from perfdsl.commands.evaluate import summary

    terminal = summary(
        evaluate(open_evaluated(make_bundle(tmp_path / "cli", predictions=(AMDAHL,), share_requests=40)))
    )
    assert "not contradicted, but not yet shown consistent" in terminal
    # Table 1 asks for Amdahl's ratio within the band, not below it.
    row = next(line for line in shown.splitlines() if "ratio <= amdahl" in line and line.startswith("|"))
    assert "| ≈ 0." in row and "(Amdahl)" in row and "≤" not in row


def _as_quick(bundle: Path, app_shape: dict[str, int] | None = None) -> Path:
    """The planted bundle as a quick run that timed its application at `app_shape` (as planted
    if None)."""
    import json

    import command_fuzz

    results = json.loads((bundle / "results.json").read_text(encoding="utf-8"))
    results["quick"] = True
    if app_shape is not None:
        results["application"]["shape"] = app_shape
    (bundle / "results.json").write_text(json.dumps(results), encoding="utf-8")
    command_fuzz.reseal(bundle)
    return bundle


def test_a_quick_run_that_shrank_the_application_does_not_judge_the_declared_share(tmp_path: Path) -> None:
    # A new user's quick run measured f = 52.8 % at 16384 of the 262144 elements the share was
    # declared for, and page 1 led with "Declared share contradicted".
    planted = {"declared_share": "20%", "predictions": (AMDAHL,)}
    full = make_bundle(tmp_path / "full", **planted)
    shape = dict(evaluate(open_evaluated(full)).end_to_end.shape)
    shrunk = _as_quick(make_bundle(tmp_path / "shrunk", **planted), {k: 8 for k in shape})
    same = _as_quick(make_bundle(tmp_path / "same", **planted), shape)
    assert evaluate(open_evaluated(full)).end_to_end.amdahl.share_check.compatible is False
    assert evaluate(open_evaluated(same)).end_to_end.amdahl.share_check.compatible is False
    unjudged = evaluate(open_evaluated(shrunk))
    assert unjudged.end_to_end.amdahl.share_check is None
    # The value says why the declared share caps nothing: not that the study declares none.
    assert "declares no share" not in unjudged.value.share_basis
    assert "the declared share is not judged where a quick run shrank" in unjudged.value.share_basis


def test_simulator_timings_are_judged_for_nothing_and_the_byte_model_stays_judged(tmp_path: Path) -> None:
    # A new user's cudasim run: "error[PQ006]: achieved bandwidth ... above the measured roof" and
    # its bytes prediction "invalid", beside "timings on `cudasim` are not evidence".
    lines = ("op.time ratio <= 0.9", "op.bytes ratio <= 0.45")
    ev = _run(tmp_path, target="cudasim", valid=False, copy_level=1.0, predictions=lines)
    for shape in ev.operations[0].shapes:
        assert not any(f.code in ("PQ006", "PQ007", "PQ008") for f in shape.findings)
        assert not any(b.invalid for b in shape.mechanism.bandwidth)
    verdicts = {p.text: p.verdict for p in ev.predictions}
    assert verdicts == {lines[0]: "not evidence", lines[1]: "confirmed"}
    timed = _run(tmp_path / "timed", copy_level=1.0, predictions=lines)
    assert all(any(f.code == "PQ006" for f in s.findings) for s in timed.operations[0].shapes)


def test_a_simulator_run_s_page_one_says_its_sizes_and_no_verdict_band(tmp_path: Path) -> None:
    # A new user's cudasim page 1 said "Smoke run (`--quick`)" of a run without --quick, whose
    # adversarial 255-257 had become 63, 64, 33, and explained a practical band no verdict used.
    import json

    import command_fuzz

    bundle = make_bundle(tmp_path, target="cudasim", valid=False)
    results = json.loads((bundle / "results.json").read_text(encoding="utf-8"))
    results["quick"] = True  # as every cudasim run is
    (bundle / "results.json").write_text(json.dumps(results), encoding="utf-8")
    command_fuzz.reseal(bundle)
    markdown = rendered_markdown(bundle)
    page_one = _page_one(markdown)
    assert "**Smoke run** (the simulator's tiny sizes). Shapes, the adversarial ones included" in page_one
    assert "scaled down by the simulator" in markdown and "The simulator times few blocks" in markdown
    assert "`--quick`" not in markdown
    assert "`--quick`" not in page_one and "Verdicts judge each" not in page_one
    assert "Verdicts judge each" in _page_one(_page(tmp_path / "timed"))


def test_page_one_says_when_the_stated_mechanism_is_neither_modelled_nor_counted(tmp_path: Path) -> None:
    # A new user's page 1 warned only "Mechanism modelled, not counted" about a bytes prediction,
    # while the stated mechanism (shorter dependency chains) had no evidence at all on cpu.
    import command_fuzz

    bundle = make_bundle(tmp_path / "b", predictions=("op.time ratio <= 0.9", "op.bytes ratio <= 0.5"))
    text = (bundle / "study.perf").read_text(encoding="utf-8")
    text = text.replace("mechanism bytes_removed", "mechanism dependency_chains_shortened")
    text = text.replace("measure bytes, launches", "measure dependency_stalls, bytes")
    (bundle / "study.perf").write_text(text, encoding="utf-8")
    command_fuzz.reseal(bundle)
    opened = open_evaluated(bundle)
    write_evaluation(opened, evaluate(opened))
    study = parse(Source("study.perf", text)).study
    assert study is not None
    one = _page_one(render_markdown(study, Evaluation.read(bundle), open_evaluated(bundle))[0])
    assert "**The mechanism is not observed** in `op`: `dependency_stalls`, the quantity" in one
    assert "**Modelled, not counted** (line" in one and "Mechanism modelled" not in one
    # A study whose mechanism's quantity is modelled has no such warning.
    assert "not observed" not in _page_one(_page(tmp_path / "bytes", predictions=("op.bytes ratio <= 0.5",)))


def test_page_one_says_the_model_level_check_compares_the_arms_not_that_either_matches() -> None:
    # Both arms of a new user's application missed their float64 run by rel_l2 1.0 (the CUDA path
    # lacked a scaling), the relative check passed, and page 1 said the output "matches".
    from types import SimpleNamespace

    from perfdsl.bundle.evaluation.correctness import ModelArm, ModelLevel
    from perfdsl.report.decision import _model_level_clause

    both_off = ModelLevel(
        True, {arm: ModelArm(True, 1.0000000088, 0.5, "") for arm in ("baseline", "change")}, None
    )
    said = _model_level_clause(SimpleNamespace(evaluation=SimpleNamespace(model_level=both_off)))  # type: ignore[arg-type]
    assert "no further from its float64 run than the baseline's (rel_l2 1.0e0 against 1.0e0)" in said
    assert "matches" not in said


def _drop_arm(bundle: Path, samples: str, arm: str) -> None:
    """The bundle with `arm`'s rows left out of a sample CSV, its manifest resealed."""
    import csv

    import command_fuzz

    path = bundle / samples
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    column = rows[0].index("arm")
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows([rows[0], *(r for r in rows[1:] if r[column] != arm)])
    command_fuzz.reseal(bundle)


def test_requests_an_arm_s_error_stopped_name_the_error_first(tmp_path: Path) -> None:
    """ "no `baseline` samples" left out the RuntimeError that stopped the baseline's requests."""
    import json

    bundle = make_bundle(tmp_path)
    results = json.loads((bundle / "results.json").read_text(encoding="utf-8"))
    app = results["application"]
    failure = {"arm": "baseline", "phase": "block", "block": 0, "position": 3}
    app["timing"]["failures"] = [{**failure, "message": "RuntimeError: request 37"}]
    (bundle / "results.json").write_text(json.dumps(results), encoding="utf-8")
    _drop_arm(bundle, app["samples"], "baseline")
    end = evaluate(open_evaluated(bundle)).end_to_end
    assert end.comparison is None
    assert (
        end.comparison_missing
        == "the baseline raised in its block: RuntimeError: request 37 (no `baseline` samples)"
    )


def test_a_shape_an_arm_s_error_stopped_names_the_error_first(tmp_path: Path) -> None:
    """ "`baseline` has fewer than 2 blocks" blamed the baseline for the change's error, which
    appeared nowhere in the report."""
    import json

    bundle = make_bundle(tmp_path)
    results = json.loads((bundle / "results.json").read_text(encoding="utf-8"))
    shape = results["operations"][0]["shapes"][0]
    failure = {"arm": "change", "phase": "warmup", "block": None, "position": None}
    failure["message"] = "RuntimeError: boom"
    shape["timing"]["failures"] = [failure]
    (bundle / "results.json").write_text(json.dumps(results), encoding="utf-8")
    _drop_arm(bundle, shape["samples"], "change")
    (first, _) = evaluate(open_evaluated(bundle)).operations[0].shapes
    assert first.missing == "the change raised in its warm-up: RuntimeError: boom (no `change` samples)"


@pytest.mark.parametrize(("change_error", "suspect"), [(0.0201, True), (0.05, False)])
def test_both_arms_missing_the_reference_alike_point_at_the_reference(
    tmp_path: Path, change_error: float, suspect: bool
) -> None:
    """A reference off by 0.001 read as both correct arms failing, with nothing pointing at it."""
    import json

    import command_fuzz

    bundle = make_bundle(tmp_path)
    results = json.loads((bundle / "results.json").read_text(encoding="utf-8"))
    correctness = results["operations"][0]["correctness"]
    for case, error in zip(correctness["cases"], (0.02, change_error), strict=True):
        case.update(passed=False, rel_l2=error, message=f"`y` rel_l2 {error:.3g} > 1e-05")
    correctness["passed"] = False
    (bundle / "results.json").write_text(json.dumps(results), encoding="utf-8")
    command_fuzz.reseal(bundle)
    one = _page_one(rendered_markdown(bundle))
    assert "Correctness: **FAILED**" in one
    assert ("the reference may be the one that is wrong" in one) is suspect


def test_an_application_that_never_calls_the_operation_compares_nothing(tmp_path: Path) -> None:
    # A new user's application called its kernel directly, not through ctx.op: both arms ran the
    # same code, and the report said f = 0 % and Amdahl "not contradicted", with no word of why.
    ev = _run(tmp_path, share=0.0, predictions=(AMDAHL,))
    end = ev.end_to_end
    assert end is not None and end.comparison is None
    said = "`app` never called `op` through `ctx.op` in the 80 requests the share pass timed"
    assert end.comparison_missing.startswith(said)
    assert end.amdahl is None and end.amdahl_missing.startswith(said)
    # Its load probes served the same code in both arms too: no capacity change to claim.
    assert ev.load is None and ev.load_missing.startswith(said)
    assert _verdict(ev, AMDAHL) == "not evidence"
    page = _page_one(_page(tmp_path / "page", share=0.0))
    assert said in page
