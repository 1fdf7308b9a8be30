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
    assert "load requests per rate 2000 -> 60" in said
    assert "load rates 50, 100, ..., 800 rps (16 rates) -> 50, 450, 800 rps" in said
    (shapes,) = [line for line in said if line.startswith("`normalize` shapes ")]
    assert shapes.split(" -> ")[0] == "`normalize` shapes " + ", ".join(
        s.label for s in full.operations[0].shapes
    )
    assert any(line.startswith("application `decode_step` shape ") for line in said)


def test_a_full_plan_replaces_nothing() -> None:
    study = _study()
    assert quick_replacements(plan(study, "cpu", False), plan(study, "cpu", False)) == ()
