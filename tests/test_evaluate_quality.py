"""Measurement-quality findings: each code fires on planted data and stays quiet on clean data."""

import numpy as np
import pytest

from perfdsl.evaluate.inputs import open_evaluated
from perfdsl.evaluate.quality import (
    EXPLANATIONS,
    PQ,
    check_bandwidth,
    check_block_count,
    check_clocks,
    check_compulsory_bytes,
    check_outliers,
    check_resolution,
    check_spread,
    check_throttling,
    cycle_normalised_ratio,
    explain,
)

CLEAN = 1e-3 * (1.0 + 0.01 * np.random.default_rng(0).standard_normal(50))


def codes(findings):
    return [(f.code, f.severity) for f in findings]


def test_every_code_is_explained_and_codes_are_stable():
    assert [c.value for c in PQ] == [f"PQ{i:03d}" for i in range(1, 13)]
    assert set(EXPLANATIONS) == set(PQ)
    for code in PQ:
        text = explain(code.value)
        assert text.startswith(f"{code.value}: ")
        assert "What:" in text and "Why:" in text and "What to do:" in text
    with pytest.raises(ValueError):
        explain("PQ999")


def test_spread_follows_pyperf():
    assert check_spread(CLEAN, "baseline") == ()
    wide = np.array([1.0, 1.3, 0.8, 1.1, 0.7])
    (finding,) = check_spread(wide, "change")
    assert (finding.code, finding.severity, finding.subject) == ("PQ001", "warning", "change")
    assert "relative standard deviation" in finding.message


def test_outliers_by_modified_z_score():
    assert check_outliers(CLEAN, "baseline") == ()
    spiked = CLEAN.copy()
    spiked[[3, 17]] = 5e-3
    (finding,) = check_outliers(spiked, "baseline")
    assert finding.code == "PQ002"
    assert finding.message.startswith("2 of 50 samples")


def test_outliers_when_most_samples_tie():
    ties = np.array([10.0] * 8 + [10.0, 11.0, 50.0])
    (finding,) = check_outliers(ties, "arm")
    assert finding.message.startswith("1 of 11")
    # Durations in nanoseconds, printed with their unit: no bare 5e+04.
    (timed,) = check_outliers(ties * 1e4, "arm")
    assert timed.message.endswith("(furthest 500 µs against median 100 µs)")
    assert check_outliers(np.full(10, 3.0), "arm") == ()


def test_resolution_and_launch_bound():
    assert check_resolution(CLEAN, "arm", timer_resolution=5e-7, launch_overhead=5e-6) == ()
    tiny = np.array([2e-7, 4e-7, 1e-6, 3e-6])
    assert codes(check_resolution(tiny, "arm", 5e-7, launch_overhead=5e-6)) == [
        ("PQ003", "error"),
        ("PQ003", "warning"),
    ]


def test_clock_difference_reports_cycle_normalised_ratio():
    times_b, times_c = np.full(10, 1.0), np.full(10, 0.95)
    clocks_b, clocks_c = np.full(10, 1980.0), np.full(10, 1800.0)
    assert cycle_normalised_ratio(times_b, clocks_b, times_c, clocks_c) == pytest.approx(0.95 * 1800 / 1980)
    (finding,) = check_clocks(times_b, clocks_b, times_c, clocks_c, "shape (64, 4096)")
    assert finding.code == "PQ004"
    assert "cycle-normalised ratio 0.8636" in finding.message
    assert check_clocks(times_b, clocks_b, times_c, np.full(10, 1960.0), "s") == ()


def test_throttling_ignores_idle_only():
    assert check_throttling([0, 0x1, 0], "baseline") == ()
    (finding,) = check_throttling([0, 0x1, 0x4, 0x40 | 0x1], "baseline")
    assert finding.code == "PQ005"
    assert finding.message == "2 of 4 blocks throttled (sw_power_cap, hw_thermal_slowdown)"


def test_bandwidth_above_roof_is_an_error():
    assert check_bandwidth(3300.0, 3350.0, "copy") == ()
    assert check_bandwidth(3400.0, 3350.0, "copy") == ()  # within the roof's own noise
    (finding,) = check_bandwidth(4200.0, 3350.0, "fused")
    assert (finding.code, finding.severity) == ("PQ006", "error")
    assert "invalid result" in finding.message
    (gpu,) = check_bandwidth(4.235e12, 3.35e12, "fused")
    assert gpu.message.startswith(
        "achieved bandwidth 4,235 GB/s is 26.4% above the measured roof for its mix, 3,350 GB/s"
    )


def test_few_blocks():
    assert check_block_count(10, "baseline") == ()
    (finding,) = check_block_count(4, "baseline")
    assert finding.code == "PQ007"


def test_findings_are_plain_values():
    (finding,) = check_block_count(4, "baseline")
    assert type(finding.code) is str
    assert finding == check_block_count(4, "baseline")[0]
    assert hash(finding) == hash(check_block_count(4, "baseline")[0])


def test_a_byte_model_below_the_kernel_buffers_is_an_error():
    # float32 M x N in and out: 8 bytes an element; a model of elements counts 2.
    assert check_compulsory_bytes(8.0 * 4096, 8 * 4096, "op 64x64 change") == ()
    (finding,) = check_compulsory_bytes(2.0 * 4096, 8 * 4096, "op 64x64 change")
    assert (finding.code, finding.severity) == ("PQ010", "error")
    assert finding.message.startswith(
        "modelled 8,192 bytes, below the 32,768 bytes of the inputs and outputs"
    )
    assert "(4x)" in finding.message
    assert "it leaves out a buffer" in finding.message
    (counted,) = check_compulsory_bytes(2.0 * 4096, 8 * 4096, "op", ("float32", 4), "x.perf:19")
    assert "(`bytes` at x.perf:19)" in counted.message
    assert "multiply it by the 4 bytes of one float32 element" in counted.message
    (short,) = check_compulsory_bytes(1.0 * 4096, 8 * 4096, "op", ("float32", 4), "x.perf:19")
    assert "multiply" not in short.message


def test_an_elements_model_is_caught_at_evaluation(tmp_path):
    from evaluate_fixtures import make_bundle

    from perfdsl.evaluate.evaluation import evaluate

    clean = evaluate(open_evaluated(make_bundle(tmp_path / "clean")))
    assert not [f for op in clean.operations for s in op.shapes for f in s.findings if f.code == "PQ010"]
    bundle = make_bundle(tmp_path / "wrong", modelled_bytes=(20.0, 2.0))
    wrong = evaluate(open_evaluated(bundle))
    study = (bundle / "study.perf").read_text(encoding="utf-8").splitlines()
    for shape in wrong.operations[0].shapes:
        (finding,) = [f for f in shape.findings if f.code == "PQ010"]
        assert finding.subject == f"op {shape.label} change"
        assert shape.invalid is not None
        # The line of the study's `bytes` model, as the run's study text has it.
        line = next(i for i, text in enumerate(study, 1) if text.lstrip().startswith("bytes "))
        assert f"(`bytes` at study.perf:{line})" in finding.message
        assert "multiply it by the 4 bytes of one float32 element" in finding.message


def test_the_summary_prints_a_limit_shapes_findings_as_well(tmp_path):
    """A limit shape shown 'not evidence: PQ010 ...' had no error line that said what was wrong."""
    from evaluate_fixtures import make_bundle

    from perfdsl.commands.evaluate import summary
    from perfdsl.evaluate.evaluation import evaluate

    bundle = make_bundle(tmp_path / "b", limits={(32, 4096): 1.0})
    evaluation = evaluate(open_evaluated(bundle))
    (limit,) = evaluation.operations[0].limits
    assert limit.findings and not [f for f in evaluation.quality if f.subject.startswith("op 32x4096")]
    text = summary(evaluation)
    for finding in limit.findings:
        assert (
            f"{finding.severity}[{finding.code}]: {finding.message} ({finding.subject}, limit shape)" in text
        )


def test_an_input_read_only_in_part_is_left_out_of_the_bytes_a_model_is_held_to(tmp_path):
    """A new user's gather modelled the lookups it makes, far below its 256 MiB table, and PQ010
    called the correct model a count of elements with no way to say the table is read in part."""
    from evaluate_fixtures import make_bundle

    from perfdsl.evaluate.evaluation import evaluate

    def pq010(**planted):
        ev = evaluate(open_evaluated(make_bundle(tmp_path / str(len(list(tmp_path.iterdir()))), **planted)))
        return [f for op in ev.operations for s in op.shapes for f in s.findings if f.code == "PQ010"]

    told = pq010(modelled_bytes=(20.0, 3.0))
    assert told and all("name that input in the variant's `sparse_inputs`" in f.message for f in told)
    assert pq010(modelled_bytes=(20.0, 3.0), change_unavoidable=3.0) == []
    still = pq010(modelled_bytes=(20.0, 3.0), change_unavoidable=4.0)
    assert still and "below the" in still[0].message
