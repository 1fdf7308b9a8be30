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
    assert "timing warmup 10 repeats 100 blocks 10 rotate 4 -> warmup 3 repeats 5 blocks 5 rotate 2" in said
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


def test_a_sequential_study_under_the_simulator_is_said_with_its_own_window() -> None:
    """The simulator's one fixed block was set against `blocks 10`, a count the study never wrote."""
    cpu = bundled_studies.PATHS[bundled_studies.NAMES.index("rmsnorm_cpu")]
    study = parse(Source(str(cpu), cpu.read_text(encoding="utf-8"))).study
    assert study is not None
    full, simulated = plan(study, "cuda", False), plan(study, "cudasim", False)
    (timing,) = [line for line in quick_replacements(full, simulated) if line.startswith("timing ")]
    declared, run = timing.removeprefix("timing ").split(" -> ")
    assert "min_blocks 6 max_blocks 100" in declared and " blocks " not in f" {declared} "
    assert " blocks 1 " in f" {run} "


def test_a_full_plan_replaces_nothing() -> None:
    study = _study()
    assert quick_replacements(plan(study, "cpu", False), plan(study, "cpu", False)) == ()


def test_the_simulator_s_sizes_are_named_against_the_study_s_own_for_a_gpu() -> None:
    # A new user's cudasim run turned the adversarial 255, 256, 257, 4097 into 63, 64, 33 and said
    # only that the load sweep was replaced, which the simulator does not run at all.
    study = _study()
    said = quick_replacements(plan(study, "cuda", False), plan(study, "cudasim", False))
    (adversarial,) = [line for line in said if line.startswith("`normalize` adversarial shapes ")]
    assert adversarial.split(" -> ")[0] != adversarial.split(" -> ")[1]
    assert "load test -> none: the simulator's timings are not evidence" in said
    assert not any(line.startswith("load sweep") for line in said)


def test_with_no_gpu_run_names_only_the_targets_the_study_allows() -> None:
    from perfdsl.commands.run import _no_gpu

    cuda_only = parse(
        Source("s.perf", RMSNORM.read_text(encoding="utf-8").replace("cuda, cpu", "cuda"))
    ).study
    assert cuda_only is not None
    assert _no_gpu(cuda_only) == "no usable CUDA GPU: use `--target cudasim` (the study's `targets`: cuda)"
    both = "no usable CUDA GPU: use `--target cpu` or `--target cudasim` (the study's `targets`: cuda, cpu)"
    assert _no_gpu(_study()) == both


def test_a_quick_fixed_run_has_the_pairs_an_interval_needs() -> None:
    """Four blocks an arm left every quick comparison "too few block pairs for an interval"."""
    from perfdsl.stats.paired import MIN_PAIRS

    quick = plan(_study(), "cpu", True)
    assert quick.timing.blocks >= MIN_PAIRS
