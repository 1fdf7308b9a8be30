"""`--quick` names what it replaced: every setting the quick plan changes, with both values."""

from __future__ import annotations

import bundled_studies

from perfdsl.parse import parse
from perfdsl.plan import plan, quick_replacements
from perfdsl.source import Source

RMSNORM = bundled_studies.PATHS[bundled_studies.NAMES.index("rmsnorm_fusion")]


def _study():
    study = parse(Source(str(RMSNORM), RMSNORM.read_text(encoding="utf-8"))).study
    assert study is not None
    return study


def test_quick_names_each_replaced_setting_with_both_values() -> None:
    study = _study()
    full, quick = plan(study, "cpu", False), plan(study, "cpu", True)
    said = quick_replacements(full, quick)
    assert "timing warmup 10 repeats 100 blocks 10 rotate 4 -> warmup 3 repeats 5 blocks 4 rotate 2" in said
    assert "correctness seeds 5 -> 2" in said
    # The quick run's probes: no sweep, and the cap each probe really stops at.
    start = "the goodput search starts at half the single-request capacity"
    assert f"load sweep 50, 100, ..., 800 rps (16 rates) -> none: {start}" in said
    raised = "a quick run's 60 requests, raised to the fewest a probe with no miss can pass on"
    independent = "it passes only if its requests are independent, PD510"
    assert f"load probe cap 2807 -> 644 requests ({raised}: {independent})" in said
    (shapes,) = [line for line in said if line.startswith("`normalize` shapes ")]
    assert shapes.split(" -> ")[0] == "`normalize` shapes " + ", ".join(
        s.label for s in full.operations[0].shapes
    )
    assert any(line.startswith("application `decode_step` shape ") for line in said)


def test_a_sequential_study_names_its_block_window_not_the_fixed_count() -> None:
    cpu = bundled_studies.PATHS[bundled_studies.NAMES.index("rmsnorm_cpu")]
    study = parse(Source(str(cpu), cpu.read_text(encoding="utf-8"))).study
    assert study is not None
    (timing,) = [
        line
        for line in quick_replacements(plan(study, "cpu", False), plan(study, "cpu", True))
        if line.startswith("timing ")
    ]
    assert "min_blocks" in timing and "max_blocks" in timing and " blocks " not in timing


def test_a_full_plan_replaces_nothing() -> None:
    study = _study()
    assert quick_replacements(plan(study, "cpu", False), plan(study, "cpu", False)) == ()
