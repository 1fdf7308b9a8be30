"""ncu's CSV as engineers have it: either page, detected; `==PROF==` and program output skipped; locales.

`ncu_details_cublaslt_gemm.log` is a file ncu wrote (a public repository's
test data; its source is in the `.SOURCE` file beside it): the details
page of one Blackwell GEMM launch with the default sections, rule results,
metric rows that stop before the rule columns, and the profiled program's own
output line among the `==PROF==` lines. `ncu_details_metrics_phantom_fhe.csv`
is one too (a paper artifact's): what `ncu --csv --metrics dram__bytes_read.sum`
and `ncu --csv --import` give, 335 launches of 13 kernels in auto-scaled,
rounded units. The numbers asserted are read off the files by hand.
`ncu_details_batchnorm_head_de.csv` is hand-written: the same
launches as the raw-page fixture `ncu_batchnorm_head.csv`, laid out as the
details page in a German locale with scaled units, so both files must give
the same counters.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from imports_support import FIXTURES, assert_format_error

from perfdsl.imports.counted import count_arm, select_kernels
from perfdsl.imports.ncu import base_unit, parse_ncu_raw
from perfdsl.imports.reading import COMMA_DECIMALS, POINT_DECIMALS, number_style, read_number
from perfdsl.imports.registry import parse_import

REAL = FIXTURES / "ncu_details_cublaslt_gemm.log"
RAW = FIXTURES / "ncu_batchnorm_head.csv"
GERMAN = FIXTURES / "ncu_details_batchnorm_head_de.csv"
METRICS = FIXTURES / "ncu_details_metrics_phantom_fhe.csv"
GEMM = (
    "cutlass3x_sm100_tensorop_s64x256x32gemm_f8_f8_f32_f16_f16_64x256x128_1x1x1_0_tnn_align4_1sm_bias_"
    "f16_relu_aux_scalemax"
)


def test_a_details_page_ncu_wrote_reads_its_metrics_per_launch() -> None:
    evidence = parse_import("ncu-raw", REAL)
    assert evidence.names == (GEMM,)
    counters = {c.metric: (c.unit, c.values) for c in evidence.entries[0].counters}
    # Line 10: "Duration","ns","406240"; line 5: "DRAM Frequency","hz","3995313115.40".
    assert counters["Duration"] == ("nsecond", (406_240.0,))
    assert counters["DRAM Frequency"] == ("hz", (3_995_313_115.40,))
    assert counters["Memory Throughput"] == ("%", (21.68,))
    assert counters["Registers Per Thread"] == ("register/thread", (168.0,))
    assert counters["Shared Memory Configuration Size"] == ("byte", (233_472.0,))
    assert counters["Total SMSP Elapsed Cycles"] == ("cycle", (300_954_008.0,))
    # Words are no counters; the rule rows (no metric name) are advice, not counts.
    assert "Cluster Scheduling Policy" not in counters and "Enabled TPC IDs" not in counters
    assert "" not in counters and len(counters) == 47
    assert ("CC", "10.0") in evidence.label.environment
    assert evidence.label.granularity == "raw"


def test_a_details_page_of_metrics_asked_for_reads_every_launch_in_bytes() -> None:
    evidence = parse_import("ncu-raw", METRICS)
    launches = {entry.name.split("(")[0]: entry.counters for entry in evidence.entries}
    assert len(launches) == 13
    assert sum(len(counters[0].values) for counters in launches.values()) == 335
    for counters in launches.values():
        assert [(c.metric, c.unit) for c in counters] == [("dram__bytes_read.sum", "byte")]
    # Line 2: "tensor_prod_2x2_rns_poly(...)", ..., "Mbyte","35.66".
    assert launches["tensor_prod_2x2_rns_poly"][0].values == (35.66e6,) * 5
    # The first Kbyte row, line 58: "inplace_inwt_radix8_phase2_include_special_mod(...)", "Kbyte","558.72".
    assert launches["inplace_inwt_radix8_phase2_include_special_mod"][0].values[0] == pytest.approx(558_720)
    assert launches["phantom::key_switch_inner_prod_c2_and_evk"][0].values[:2] == (481.32e6, 481.33e6)
    assert ("CC", "8.9") in evidence.label.environment


def test_the_raw_and_the_details_page_of_the_same_launches_give_the_same_counts() -> None:
    raw, details = parse_ncu_raw(RAW), parse_import("ncu-raw", GERMAN)
    assert details.names == raw.names
    for a, b in zip(raw.entries, details.entries, strict=True):
        mine = {c.metric: (c.unit, c.values) for c in a.counters}
        theirs = {c.metric: (c.unit, c.values) for c in b.counters}
        assert set(mine) == set(theirs)
        for metric, (unit, values) in mine.items():
            assert theirs[metric][0] == unit
            assert theirs[metric][1] == pytest.approx(values, rel=1e-12)
    # "4,128" Kbyte in the German file is the raw page's "4,128" bytes: 4128 either way.
    first = {c.metric: c.values[0] for c in details.entries[0].counters}
    assert first["dram__bytes_read.sum"] == pytest.approx(4_128)
    for selector in ("cupy_.*", "batchnorm_fused_kernel"):
        want = count_arm(select_kernels(raw, selector), ("bytes", "launches"))
        got = count_arm(select_kernels(details, selector), ("bytes", "launches"))
        assert got.launches == want.launches
        assert got.quantities == pytest.approx(want.quantities, rel=1e-12)


@pytest.mark.parametrize(
    ("cells", "style"),
    [
        (["4,128", "117.344"], POINT_DECIMALS),  # nothing decides: the default
        (["4,128", "16.777.216"], COMMA_DECIMALS),  # two dots are thousands
        (["4,128", "65,77"], COMMA_DECIMALS),  # a comma before two digits is a decimal
        (["117.344", "0,125"], COMMA_DECIMALS),  # a leading zero has no thousands
        (["4,128", "1,234.5"], POINT_DECIMALS),
        (["117.344", "1.234,5"], COMMA_DECIMALS),
        (["1234.567"], POINT_DECIMALS),  # four digits before a separator: no grouping
    ],
)
def test_the_number_style_is_decided_by_the_whole_file(cells: list[str], style: str) -> None:
    assert number_style(Path("f.csv"), enumerate(cells, 1)) == style
    assert read_number("4,128", style) == (4128.0 if style == POINT_DECIMALS else 4.128)


def test_a_file_of_two_number_styles_is_refused_naming_a_line_of_each() -> None:
    with pytest.raises(Exception, match=r"^f\.csv:3: writes numbers as `1\.234,5` but line 2 as `1,234\.5`"):
        number_style(Path("f.csv"), [(1, "12"), (2, "1,234.5"), (3, "65,77")])


def test_read_number_keeps_to_its_style() -> None:
    assert read_number("1.234.567,5", COMMA_DECIMALS) == 1_234_567.5
    assert read_number("1,234,567.5", POINT_DECIMALS) == 1_234_567.5
    assert read_number("4.0e-05", POINT_DECIMALS) == 4.0e-05
    assert read_number("1,23,4", POINT_DECIMALS) is None
    assert read_number("1.234,5", POINT_DECIMALS) is None
    assert read_number("PolicySpread", POINT_DECIMALS) is None


@pytest.mark.parametrize(
    ("unit", "expected"),
    [
        ("byte", ("byte", 1.0)),
        ("Kbyte", ("byte", 1e3)),
        ("Mbyte", ("byte", 1e6)),
        ("Gbyte", ("byte", 1e9)),
        ("nsecond", ("nsecond", 1.0)),
        ("usecond", ("nsecond", 1e3)),
        ("msecond", ("nsecond", 1e6)),
        ("ns", ("nsecond", 1.0)),
        ("hz", ("hz", 1.0)),
        ("Ghz", ("hz", 1e9)),
        ("Gbyte/second", ("byte/second", 1e9)),
        ("Tbyte/second", ("byte/second", 1e12)),
        ("cycle/nsecond", ("cycle/second", 1e9)),
        ("%", ("%", 1.0)),
        ("register/thread", ("register/thread", 1.0)),
    ],
)
def test_units_come_to_base_units(unit: str, expected: tuple[str, float]) -> None:
    assert base_unit(unit) == expected


def test_a_raw_page_in_a_german_locale_reads_the_same(tmp_path: Path) -> None:
    text = RAW.read_text(encoding="utf-8")
    path = tmp_path / "raw_de.csv"
    path.write_text(text.replace(",", "\x00").replace('"\x00"', '","').replace("\x00", "."), encoding="utf-8")
    assert '"16.789.504"' in path.read_text(encoding="utf-8")
    german = {e.name: [c.values for c in e.counters] for e in parse_ncu_raw(path).entries}
    assert german == {e.name: [c.values for c in e.counters] for e in parse_ncu_raw(RAW).entries}


def test_a_broken_details_value_is_an_error_naming_its_line(tmp_path: Path) -> None:
    text = GERMAN.read_text(encoding="utf-8")
    path = tmp_path / "broken.csv"
    path.write_text(text.replace('"Kbyte","4,128"', '"Kbyte","4,12x"', 1), encoding="utf-8")
    assert_format_error(parse_ncu_raw, path, r":13: column `Metric Value`", "written as 1.234,5", "'4,12x'")
    path.write_text(text.replace('"Kbyte","4,128"', '"Kbyte","lots"', 1), encoding="utf-8")
    assert_format_error(
        parse_ncu_raw, path, r":16: metric `dram__bytes_read\.sum` is a number here and a word"
    )


def test_a_display_name_two_sections_share_is_qualified_by_its_section(tmp_path: Path) -> None:
    lines = REAL.read_text(encoding="utf-8").splitlines(keepends=True)
    duration = next(line for line in lines if '"Duration","ns"' in line)
    path = tmp_path / "two_sections.log"
    path.write_text(
        "".join(lines) + duration.replace("GPU Speed Of Light Throughput", "Other"), encoding="utf-8"
    )
    counters = {c.metric: c.values for c in parse_ncu_raw(path).entries[0].counters}
    assert counters["GPU Speed Of Light Throughput: Duration"] == (406_240.0,)
    assert counters["Other: Duration"] == (406_240.0,) and "Duration" not in counters


def test_a_study_counting_from_a_details_page_checks_and_counts_as_from_the_raw_page(tmp_path: Path) -> None:
    """The bundled imported study, its profile swapped for the same launches' details page."""
    from run_support import REPO

    from perfdsl.check import check
    from perfdsl.evaluate.imported import evaluate_imported_bundle
    from perfdsl.parse import parse
    from perfdsl.runtime.imported import run_imported
    from perfdsl.source import Source

    counted = []
    for name, profile in (("raw", RAW), ("details", GERMAN)):
        root = tmp_path / name
        shutil.copytree(REPO / "studies" / "imported", root / "imported")
        shutil.copyfile(profile, root / "imported" / "ncu_batchnorm_head.csv")
        text = (REPO / "studies" / "batchnorm_imported.perf").read_text(encoding="utf-8")
        study = root / "s.perf"
        study.write_text(text.replace("targets   cpu", "targets   cuda", 1), encoding="utf-8")
        parsed = parse(Source.read(study))
        assert parsed.study is not None
        assert [d.message for d in check(parsed.study) if d.severity == "error"] == []
        (found,) = evaluate_imported_bundle(run_imported(parsed.study, root / "art")).counted
        counted.append(found.quantity("bytes"))
    raw, details = counted
    assert (details.baseline, details.change) == pytest.approx((raw.baseline, raw.change), rel=1e-12)
