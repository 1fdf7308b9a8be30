"""The value of an imported application's effect: only from an evidence-grade effect beyond the threshold,
capped at the declared share, and only from the application the study's `value` names.

No importer yields interleaved blocks of request times (hyperfine, pyperf and
the rest run one command after the other; an Nsight Systems trace keeps a
kernel's launches as one block), so the evidence-grade application is
planted. The first tests plant its timing as numbers chosen so that every
expected value is worked out by hand in the comment beside it. The last ones
plant the parse of the application's file, blocks interleaved, and run the
bundled study through the real run, paired comparison, value and report.
"""

from __future__ import annotations

import json
import shutil
import statistics
from pathlib import Path

import pytest
from run_support import REPO

from perfdsl.bundle.evaluation.imported import ImportedEndToEnd, ImportedEvaluation
from perfdsl.bundle.files import dumps
from perfdsl.bundle.imported import ImportedApplication, ImportedSide
from perfdsl.evaluate import imported
from perfdsl.evaluate.imported import ImportedTiming, SideResult, evaluate_imported
from perfdsl.evaluate.imported_end_to_end import evaluate_applications
from perfdsl.imports.evidence import Entry, ImportedEvidence, Label
from perfdsl.nodes import Study
from perfdsl.parse import parse
from perfdsl.report import formatting as fmt
from perfdsl.report.imported import render_imported_markdown
from perfdsl.runtime.imported import run_imported
from perfdsl.source import Source

STUDY = REPO / "studies" / "batchnorm_imported.perf"
BASELINE_NS = 2e9
"""The planted baseline request time: 2 s, so the saving per request is 2 x (1 - ratio) s."""
OPERATION = (0.6, 0.5, 0.7)
"""`normalize`'s planted ratio: with the study's share of 30 % the cap is 0.7 + 0.3 x 0.5 = 0.85."""


def _study(*edits: tuple[str, str]) -> Study:
    text = STUDY.read_text(encoding="utf-8")
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    study = parse(Source("s.perf", text)).study
    assert study is not None
    return study


def _side_result(entry: str, median_ns: float) -> SideResult:
    return SideResult(
        entry=entry,
        file=f"imports/planted/{entry}.json",
        source=f"imported/{entry}.json",
        format="planted",
        tool="planted harness",
        tool_version=None,
        granularity="raw",
        interleaved="yes",
        environment=(),
        sha256="0" * 64,
        blocks=12,
        samples=36,
        calls_per_sample=1,
        median_ns=median_ns,
    )


NOT_INTERLEAVED = "baseline and change were not interleaved: drift falls on one of them"


def _timing(
    name: str, ratio: float, low: float, high: float, indicated: str, *, paired: bool = True
) -> ImportedTiming:
    """A comparison with the given ratio and call: evidence-grade when paired, else of unpaired blocks."""
    return ImportedTiming(
        operation=name,
        method="paired" if paired else "unpaired",
        ratio=ratio,
        low=low,
        high=high,
        indicated=indicated,
        evidence_grade=paired,
        caveats=() if paired else (NOT_INTERLEAVED,),
        verdict=indicated if paired else f"not evidence-grade: {NOT_INTERLEAVED}",
        baseline=_side_result("baseline", BASELINE_NS),
        change=_side_result("change", BASELINE_NS * ratio),
    )


def _head(
    ratio: float, low: float, high: float, indicated: str, study: Study | None = None, *, paired: bool = True
) -> ImportedEndToEnd:
    side = ImportedSide(
        "imports/planted/head.json", "imported/head.json", "planted", "head", "head", "0" * 64
    )
    app = ImportedApplication(name="head", uses=("normalize",), share=0.3, baseline=side, change=side)
    (found,) = evaluate_applications(
        lambda name, baseline, change: _timing(name, ratio, low, high, indicated, paired=paired),
        (app,),
        (_timing("normalize", *OPERATION, "faster"),),
        study or _study(),
        0.95,
    )
    return found


def test_an_established_faster_effect_is_valued_per_request() -> None:
    # 1 request x 2 s x (1 - 0.9) = 0.2 s saved; the ends from 0.92 and 0.88: 0.16 and 0.24 s.
    # The cap, 0.85, lies below the whole interval: nothing is capped.
    head = _head(0.9, 0.88, 0.92, "faster")
    assert head.value_missing is None and head.value is not None
    assert head.value.established and not head.value.capped
    v = head.value.value
    assert (v.value, v.low, v.high) == pytest.approx((0.2, 0.16, 0.24))
    assert head.value.unit == "s per request"


@pytest.mark.parametrize(
    ("ratio", "low", "high", "indicated", "reason"),
    [
        (0.995, 0.99, 1.0, "no meaningful change", "below the practical threshold"),
        (0.97, 0.9, 1.05, "inconclusive", "inconclusive"),
    ],
)
def test_no_value_from_an_effect_that_is_not_established(
    ratio: float, low: float, high: float, indicated: str, reason: str
) -> None:
    head = _head(ratio, low, high, indicated)
    assert head.value is not None and not head.value.established
    assert head.value.value is None and reason in (head.value.reason or "")


def test_no_value_from_an_unpaired_interval_however_clear() -> None:
    head = _head(0.9, 0.88, 0.92, "faster", paired=False)
    assert head.value is None
    assert head.value_missing == (
        f"no established end-to-end effect: the timing is not evidence-grade: {NOT_INTERLEAVED}"
    )


def test_an_effect_beyond_the_declared_share_is_capped() -> None:
    # Measured 0.8 [0.78, 0.82], all of it below the cap 0.85: every end is raised to 0.85,
    # so 2 s x (1 - 0.85) = 0.3 s saved, with no spread left.
    head = _head(0.8, 0.78, 0.82, "faster")
    assert head.value is not None and head.value.capped
    v = head.value.value
    assert (v.value, v.low, v.high) == pytest.approx((0.3, 0.3, 0.3))


def test_only_the_favourable_end_past_the_cap_is_capped() -> None:
    # Measured 0.86 [0.84, 0.88]: the favourable end 0.84 is raised to 0.85, the rest stays:
    # 2 x (1 - 0.86) = 0.28 s, from 2 x (1 - 0.88) = 0.24 to 2 x (1 - 0.85) = 0.30 s.
    head = _head(0.86, 0.84, 0.88, "faster")
    assert head.value is not None and head.value.capped
    v = head.value.value
    assert (v.value, v.low, v.high) == pytest.approx((0.28, 0.24, 0.30))


def test_no_value_when_the_study_values_another_application() -> None:
    head = _head(0.9, 0.88, 0.92, "faster", _study(("from head", "from checkout")))
    assert head.value is None and head.value_missing == "the value is computed from `checkout`"


def _planted_parse(factors: tuple[float, ...]) -> ImportedEvidence:
    """The application's file as an interleaving harness would give it: block i of each arm in turn.

    The baseline drifts 2 % a block, which pairing cancels; each change block
    is its baseline neighbour times the factor. Three samples a block, the
    middle one the block's median.
    """
    bases = [3e9 * (1 + 0.02 * i) for i in range(len(factors))]

    def blocks(scale: tuple[float, ...]) -> tuple[tuple[float, ...], ...]:
        return tuple((b * s * 0.99, b * s, b * s * 1.02) for b, s in zip(bases, scale, strict=True))

    label = Label("planted harness", "1", "raw", "yes", (), "0" * 64, "planted.json")
    entries = (
        Entry("head_numpy_passes", blocks((1.0,) * len(factors)), calls_per_sample=1),
        Entry("head_fused", blocks(factors), calls_per_sample=1),
    )
    return ImportedEvidence("hyperfine", entries, label)


def _evaluate_planted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, factors: tuple[float, ...]
) -> tuple[Study, imported.ImportedEvaluation]:
    """The bundled study run for real; its evaluation reads the planted parse for the hyperfine file."""
    shutil.copytree(REPO / "studies" / "imported", tmp_path / "imported")
    path = tmp_path / "s.perf"
    shutil.copy(STUDY, path)
    study = parse(Source.read(path)).study
    assert study is not None
    bundle = run_imported(study, tmp_path / "art")
    real = imported.parse_import
    planted = _planted_parse(factors)
    monkeypatch.setattr(
        imported, "parse_import", lambda fmt, file: planted if fmt == "hyperfine" else real(fmt, file)
    )
    return study, evaluate_imported(bundle, study)


ALTERNATING = (0.88, 0.92) * 6
"""Twelve pairs, each change block 0.88 or 0.92 of its baseline neighbour."""


def _report(study: Study, evaluation: imported.ImportedEvaluation) -> str:
    """The report's Markdown from evaluation.json read back, as `perfdsl build --md` renders it."""
    written = json.loads(dumps(evaluation.to_json()))
    return render_imported_markdown(
        study, ImportedEvaluation.from_json(written, Path("evaluation.json")), "planted"
    )


def test_a_paired_imported_application_is_valued_and_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study, evaluation = _evaluate_planted(tmp_path, monkeypatch, ALTERNATING)
    (head,) = evaluation.applications
    t = head.timing
    assert (t.method, t.evidence_grade, t.indicated, t.verdict) == ("paired", True, "faster", "faster")
    assert 0.88 < t.low < t.ratio < t.high < 0.92
    # The baseline's request time is the median of its block medians: 3 s x (1 + 0.02 x 5.5).
    baseline_s = statistics.median(3.0 * (1 + 0.02 * i) for i in range(12))
    assert t.baseline.median_ns == pytest.approx(baseline_s * 1e9) and baseline_s == pytest.approx(3.33)
    assert head.value is not None and head.value.established and not head.value.capped
    v = head.value.value
    expected = (baseline_s * (1 - t.ratio), baseline_s * (1 - t.high), baseline_s * (1 - t.low))
    assert (v.value, v.low, v.high) == pytest.approx(expected)

    report = _report(study, evaluation)
    page_one, rest = report.split("## Workload")
    shown = f"{fmt.ratio(t.ratio)} {fmt.interval(t.low, t.high)}"
    assert (
        f"Application `head`: end-to-end time ratio {shown}, faster, "
        "from imported request times; Amdahl not established." in page_one
    )
    # Only the pyperf operation timing is warned about; the paired application is evidence-grade.
    assert "`normalize` timing is **not evidence-grade" in page_one
    assert "`head` timing is" not in page_one and "`decision adopt`" not in page_one
    value_section = rest.split("## Value\n")[1].split("\n## ")[0]
    assert (
        f"From `head`: {fmt.sig(v.value)} s per request saved {fmt.interval(v.low, v.high)}" in value_section
    )
    assert "capped" not in value_section
    assert "faster than its declared share allows" not in page_one


def test_a_paired_imported_effect_past_the_declared_share_is_capped_in_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    study, evaluation = _evaluate_planted(tmp_path, monkeypatch, (0.58, 0.62) * 6)
    (head,) = evaluation.applications
    (normalize,) = evaluation.timings
    assert head.timing.evidence_grade and head.timing.high < 0.62
    # The cap from pyperf's `normalize` interval: B = 0.7 + 0.3 x r_low, above the whole measured interval.
    floor = 0.7 + 0.3 * normalize.low
    assert head.timing.high < floor < 1.0
    baseline_s = statistics.median(3.0 * (1 + 0.02 * i) for i in range(12))
    assert head.value is not None and head.value.capped
    v = head.value.value
    assert (v.value, v.low, v.high) == pytest.approx((baseline_s * (1 - floor),) * 3)
    report = _report(study, evaluation)
    value_section = report.split("## Value\n")[1].split("\n## ")[0]
    assert "(capped at the declared share)" in value_section
    # Page 1 says the effect contradicts the declared share, not only the Value section.
    edge = floor / (1 + evaluation.threshold)
    assert head.timing.high < edge
    warning = (
        f"`head` is faster than its declared share allows: its time ratio interval ends at "
        f"{head.timing.high:.4g}, below {edge:.4g}, the fastest a 30% share with `normalize`"
    )
    assert warning in report.split("## Workload")[0]
