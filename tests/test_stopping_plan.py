"""The stopping rule from the study to the plan, and its registration with the predictions."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from perfdsl.bundle.plan import TimingPlan
from perfdsl.bundle.stopping import FIXED, SEQUENTIAL
from perfdsl.nodes import Study
from perfdsl.parse import parse
from perfdsl.plan import plan, predict_section_hash
from perfdsl.source import Source

ROOT = Path(__file__).resolve().parent.parent
BASE = (ROOT / "tests" / "check_cases" / "PD503_few_repeats.perf").read_text(encoding="utf-8")
TIMING = "{ warmup 10; repeats 5; rotate 4; confidence 95% }"


def _study(timing: str) -> Study:
    assert TIMING in BASE
    parsed = parse(Source("study.perf", BASE.replace(TIMING, "{ " + timing + " }")))
    assert parsed.study is not None
    return parsed.study


SEQUENTIAL_TIMING = "repeats 50; confidence 95%; threshold 2%; stop sequential; min_blocks 8; max_blocks 300"


def test_a_sequential_study_plans_its_window_and_rule() -> None:
    timing = plan(_study(SEQUENTIAL_TIMING), "cpu", quick=False).timing
    assert (timing.stop, timing.min_blocks, timing.max_blocks, timing.kernel_blocks) == (
        SEQUENTIAL,
        8,
        300,
        300,
    )
    rule = timing.stopping
    assert rule is not None and (rule.threshold, rule.min_pairs, rule.max_pairs) == (0.02, 8, 300)


def test_each_sequential_stop_is_decided_at_the_familys_share_of_the_error_rate() -> None:
    """Two shapes, their combination and the application: a family of 4, each stopped at 5 % / 4,
    so that Holm's adjustment over the 4 keeps every stop the rule decided."""
    timing = plan(_study(SEQUENTIAL_TIMING), "cpu", quick=False).timing
    assert timing.family == 4 and timing.confidence == 0.95
    rule = timing.stopping
    assert rule is not None and rule.confidence == 0.9875
    assert TimingPlan.from_json(timing.to_json()) == timing
    older = {k: v for k, v in timing.to_json().items() if k != "family"}
    assert TimingPlan.from_json(older).family == 1


def test_the_fixed_design_is_the_default_and_keeps_its_blocks() -> None:
    timing = plan(_study("repeats 50; blocks 30; confidence 95%"), "cpu", quick=False).timing
    assert (timing.stop, timing.kernel_blocks, timing.stopping) == (FIXED, 30, None)


def test_quick_and_simulated_runs_shrink_or_drop_the_rule() -> None:
    quick = plan(_study(SEQUENTIAL_TIMING), "cpu", quick=True).timing
    assert (quick.stop, quick.min_blocks, quick.max_blocks) == (SEQUENTIAL, 5, 8)
    simulated = plan(_study(SEQUENTIAL_TIMING), "cudasim", quick=False).timing
    assert (simulated.stop, simulated.kernel_blocks) == (FIXED, 1)


def test_a_plan_2_timing_reads_as_the_fixed_design() -> None:
    old = {"warmup": 3, "repeats": 5, "blocks": 4, "rotate": 2, "confidence": 0.95, "threshold": 0.01}
    timing = TimingPlan.from_json(old)
    assert (timing.stop, timing.kernel_blocks, timing.stopping) == (FIXED, 4, None)
    fresh = plan(_study(SEQUENTIAL_TIMING), "cpu", quick=False).timing
    assert TimingPlan.from_json(fresh.to_json()) == fresh


@pytest.mark.parametrize(
    "edited",
    [
        SEQUENTIAL_TIMING.replace("max_blocks 300", "max_blocks 200"),
        SEQUENTIAL_TIMING.replace("min_blocks 8", "min_blocks 20"),
        SEQUENTIAL_TIMING.replace("threshold 2%", "threshold 5%"),
        SEQUENTIAL_TIMING.replace("stop sequential", "stop fixed").replace(
            "; min_blocks 8; max_blocks 300", ""
        ),
    ],
)
def test_the_rule_is_registered_with_the_predictions(edited: str) -> None:
    assert predict_section_hash(_study(SEQUENTIAL_TIMING)) != predict_section_hash(_study(edited))


def test_a_study_without_a_rule_hashes_as_before_rules_existed() -> None:
    study = _study("repeats 5; threshold 2%; blocks 12")
    predict = "\n".join(study.source.snippet(span) for span in study.predict_spans)
    assert predict_section_hash(study) == hashlib.sha256(predict.encode("utf-8")).hexdigest()
    assert predict_section_hash(study) == predict_section_hash(_study("repeats 5; threshold 5%; blocks 40"))


def _with_probe(word: str) -> Study:
    text = (ROOT / "studies" / "rmsnorm_cpu.perf").read_text(encoding="utf-8")
    said = "evidence end_to_end  { requests 1000;"
    assert said in text
    parsed = parse(Source("study.perf", text.replace(said, f"{said} probe {word};")))
    assert parsed.study is not None
    return parsed.study


def test_the_load_probe_rule_goes_to_the_plan_and_only_fixed_is_written() -> None:
    fixed = plan(_with_probe("fixed"), "cpu", quick=False).load
    default = plan(_with_probe("sequential"), "cpu", quick=False).load
    assert fixed is not None and default is not None
    assert (fixed.probe, default.probe) == (FIXED, SEQUENTIAL)
    assert fixed.to_json()["probe"] == FIXED
    # A sequential plan's bytes are those of the plans before the choice existed.
    assert "probe" not in default.to_json()
    assert type(default).from_json(default.to_json()) == default


@pytest.mark.parametrize(
    ("word", "code", "said"),
    [("sometimes", "PD306", "unknown load probe rule `sometimes`")],
)
def test_check_refuses_a_probe_rule_it_does_not_know(word: str, code: str, said: str) -> None:
    from perfdsl.check import check

    found = [(d.code, d.message) for d in check(_with_probe(word))]
    assert (code, said) in found
    assert check(_with_probe("fixed")) == check(_with_probe("sequential")) == []


PLANNED_TIMING = SEQUENTIAL_TIMING.replace("max_blocks 300", "max_blocks 40; looks 5")


def test_planned_looks_put_their_schedule_and_boundaries_in_the_plan_and_the_rule() -> None:
    timing = plan(_study(PLANNED_TIMING), "cpu", quick=False).timing
    assert timing.looks == (8, 16, 24, 32, 40)
    assert len(timing.boundaries) == 5 and timing.boundaries[0] > timing.boundaries[-1] > 1.96
    rule = timing.stopping
    assert (
        rule is not None
        and rule.planned
        and (rule.looks, rule.boundaries) == (timing.looks, timing.boundaries)
    )
    assert TimingPlan.from_json(timing.to_json()) == timing
    # A plan without planned looks writes neither key: its bytes are those before they existed.
    unplanned = plan(_study(SEQUENTIAL_TIMING), "cpu", quick=False).timing
    assert not {"looks", "boundaries"} & set(unplanned.to_json())
    assert not unplanned.stopping.planned and "looks" not in unplanned.stopping.to_json()


def test_planned_looks_are_registered_with_the_predictions() -> None:
    assert predict_section_hash(_study(PLANNED_TIMING)) != predict_section_hash(
        _study(PLANNED_TIMING.replace("looks 5", "looks 4"))
    )


@pytest.mark.parametrize(
    ("timing", "said"),
    [
        (
            "repeats 50; blocks 10; looks 5",
            "`min_blocks`, `max_blocks` and `looks` belong to the sequential rule",
        ),
        (
            PLANNED_TIMING.replace("looks 5", "looks 41"),
            "41 planned looks cannot be spread over a cap of 40 block pairs",
        ),
        (
            PLANNED_TIMING.replace("looks 5", "looks 0"),
            "0 planned looks cannot be spread over a cap of 40 block pairs",
        ),
        (PLANNED_TIMING.replace("max_blocks 40; ", ""), "planned looks need the cap they were planned for"),
    ],
)
def test_check_refuses_planned_looks_that_cannot_be_planned(timing: str, said: str) -> None:
    from perfdsl.check import check

    assert ("PD413", said) in [(d.code, d.message) for d in check(_study(timing))]
    assert [d for d in check(_study(PLANNED_TIMING)) if d.code in ("PD413", "PD414")] == []
