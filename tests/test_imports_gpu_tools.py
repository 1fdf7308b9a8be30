"""Importing GPU tools' files: NVBench JSON (+ jsonbin), nsys stats CSV, ncu raw CSV.

Most fixtures are hand-written in the tools' documented layouts with
illustrative numbers (tests/fixtures/imports/README.md): those tests check the
layouts are read, labelled and refused when broken, not what the numbers say.
Three were written by the tools themselves and taken from public repositories
(a `.SOURCE` file beside each): NVBench's own reference JSON in its 0.1.0 and
its 2021 layout, and an `nsys stats` kernel summary with nsys's progress
lines; their tests assert the files' own numbers.
"""

from __future__ import annotations

import shutil
import struct
from pathlib import Path

import pytest
from imports_support import FIXTURES, assert_format_error, broken_json, load, write_json

from perfdsl.imports.ncu import parse_ncu_raw
from perfdsl.imports.nsys import parse_nsys_gpu_trace, parse_nsys_kern_sum
from perfdsl.imports.nvbench import parse_nvbench

NCU = FIXTURES.parent / "ncu_raw_rmsnorm.csv"
TILED = "transpose [Device=0 Variant=tiled R=2^13 C=2^13]"
PADDED = "transpose [Device=0 Variant=padded R=2^13 C=2^13]"


def test_nvbench_jsonbin_samples_are_one_raw_block_per_state() -> None:
    evidence = parse_nvbench(FIXTURES / "nvbench_transpose.json")
    assert evidence.names == (TILED, PADDED)
    for index, entry in enumerate(evidence.entries):
        sidecar = (FIXTURES / "nvbench_transpose.json-bin" / f"{index}.bin").read_bytes()
        expected = struct.unpack(f"<{len(sidecar) // 4}f", sidecar)
        assert entry.blocks == (tuple(v * 1e9 for v in expected),)
        assert len(entry.samples) == 40 and entry.granularity == "raw"
        assert entry.statistic("mean") == pytest.approx(sum(entry.samples) / 40, rel=1e-6)
    label = evidence.label
    assert (label.tool, label.tool_version) == ("NVBench", "0.1.0")
    assert (label.granularity, label.interleaved, label.evidence_grade) == ("raw", "no", False)
    assert ("device0.name", "NVIDIA H200") in label.environment


def test_a_json_file_nvbench_wrote_reads_every_state_that_ran() -> None:
    evidence = parse_nvbench(FIXTURES / "nvbench_axes_gv100_gp100.json")
    by_name = {entry.name: entry for entry in evidence.entries}
    assert len(by_name) == 88
    assert "copy_type_conversion_sweep [Device=0 In=I8 Out=I8]" not in by_name
    assert "copy_type_conversion_sweep [Device=0 In=I8 Out=I16]" in by_name
    simple = by_name["simple [Device=0]"]
    assert simple.statistic("mean") == pytest.approx(1003471.5849794225)
    assert simple.blocks == () and simple.granularity == "aggregate"
    sleep = by_name["single_float64_axis [Device=0 Duration=0.0005]"]
    assert sleep.statistic("mean") == pytest.approx(503456.178265558)
    label = evidence.label
    assert (label.tool, label.tool_version, label.granularity) == ("NVBench", "0.1.0", "aggregate")
    assert ("device0.name", "Quadro GV100") in label.environment
    assert ("device1.sm_version", "600") in label.environment
    assert ("argv", "bin/nvbench.example.axes --json /home/av/code/src/nvbench/scripts/test_ref.json") in (
        label.environment
    )


def test_a_json_file_nvbench_wrote_before_0_1_reads_the_same_states() -> None:
    older = parse_nvbench(FIXTURES / "nvbench_axes_gv100_gp100_2021.json")
    newer = parse_nvbench(FIXTURES / "nvbench_axes_gv100_gp100.json")
    assert older.names == newer.names
    by_name = {entry.name: entry for entry in older.entries}
    assert by_name["simple [Device=0]"].statistic("mean") == pytest.approx(1003400.2306039446)
    assert by_name["single_float64_axis [Device=0 Duration=0.0005]"].statistic("mean") == pytest.approx(
        503421.7145707861
    )
    label = older.label
    assert (label.tool, label.tool_version, label.granularity) == ("NVBench", None, "aggregate")
    assert label.environment == (
        ("device0.name", "NVIDIA Quadro GV100"),
        ("device0.sm_version", "700"),
        ("device1.name", "NVIDIA Quadro GP100"),
        ("device1.sm_version", "600"),
    )


def test_nvbench_without_jsonbin_is_aggregate(tmp_path: Path) -> None:
    def strip(data: dict) -> None:
        for state in data["benchmarks"][0]["states"]:
            state["summaries"] = [s for s in state["summaries"] if not s["tag"].startswith("nv/json/bin")]

    evidence = parse_nvbench(broken_json(tmp_path, "nvbench_transpose.json", strip))
    assert evidence.label.granularity == "aggregate"
    means = {e.name: e.statistic("mean") for e in evidence.entries}
    raw = load("nvbench_transpose.json")
    first = next(
        s for s in raw["benchmarks"][0]["states"][0]["summaries"] if s["tag"] == "nv/cold/time/gpu/mean"
    )
    assert means[TILED] == pytest.approx(float(first["data"][0]["value"]) * 1e9)


def test_nvbench_skipped_states_are_left_out(tmp_path: Path) -> None:
    def skip(data: dict) -> None:
        data["benchmarks"][0]["states"][1]["is_skipped"] = True

    shutil.copytree(FIXTURES / "nvbench_transpose.json-bin", tmp_path / "nvbench_transpose.json-bin")
    data = load("nvbench_transpose.json")
    skip(data)
    assert parse_nvbench(write_json(tmp_path, "nvbench_transpose.json", data)).names == (TILED,)


def test_nvbench_malformed(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "nvbench_transpose.json-bin", tmp_path / "nvbench_transpose.json-bin")

    def size(data: dict) -> None:
        data["benchmarks"][0]["states"][1]["summaries"][3]["data"][1]["value"] = "41"

    path = broken_json(tmp_path, "nvbench_transpose.json", size)
    assert_format_error(
        parse_nvbench,
        path,
        "41 float32 samples",
        str(path),
        names=path.parent / "nvbench_transpose.json-bin" / "1.bin",
    )

    def value(data: dict) -> None:
        data["benchmarks"][0]["states"][0]["summaries"][1]["data"][0]["value"] = "n/a"

    path = broken_json(tmp_path, "nvbench_transpose.json", value)
    assert_format_error(
        parse_nvbench,
        path,
        r"\$\.benchmarks\[0\]\.states\[0\]\.summaries\[1\]\.data\[0\]\.value",
        "expected a number",
    )


def test_nvbench_missing_sidecar(tmp_path: Path) -> None:
    path = write_json(tmp_path, "nvbench_transpose.json", load("nvbench_transpose.json"))
    assert_format_error(
        parse_nvbench, path.parent / "nvbench_transpose.json-bin" / "0.bin", "cannot read the file"
    )


def test_nsys_gpu_trace_keeps_every_launch_and_sees_the_interleaving() -> None:
    evidence = parse_nsys_gpu_trace(FIXTURES / "nsys_transpose_cuda_gpu_trace.csv")
    assert evidence.names == (
        "transpose_tiled_kernel",
        "transpose_padded_kernel",
    )  # the memcpy row is left out
    tiled = evidence.entries[0]
    assert len(tiled.samples) == 20 and tiled.samples[0] == 190056.0
    label = evidence.label
    assert (label.tool, label.tool_version, label.environment) == ("Nsight Systems", None, ())
    assert (label.granularity, label.interleaved, label.evidence_grade) == ("raw", "yes", True)


def test_nsys_gpu_trace_contiguous_launches_are_not_interleaved(tmp_path: Path) -> None:
    lines = (FIXTURES / "nsys_transpose_cuda_gpu_trace.csv").read_text(encoding="utf-8").splitlines()
    header, copy, launches = lines[0], lines[1], lines[2:]
    tiled = [line for line in launches if line.endswith("tiled_kernel")]
    padded = [line for line in launches if line.endswith("padded_kernel")]
    # Move every padded launch after the last tiled one, as two separate loops would have run them.
    last = int(tiled[-1].split(",")[0])
    shifted = [",".join([str(last + 1000 * (i + 1)), *line.split(",")[1:]]) for i, line in enumerate(padded)]
    path = tmp_path / "trace.csv"
    path.write_text("\n".join([header, copy, *tiled, *shifted]) + "\n", encoding="utf-8")
    assert parse_nsys_gpu_trace(path).label.interleaved == "no"


def test_nsys_gpu_trace_in_microseconds_is_converted(tmp_path: Path) -> None:
    text = (FIXTURES / "nsys_transpose_cuda_gpu_trace.csv").read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    rows = []
    for line in rest.splitlines():
        cells = line.split(",")
        cells[0], cells[1] = str(float(cells[0]) / 1e3), str(float(cells[1]) / 1e3)
        rows.append(",".join(cells))
    path = tmp_path / "trace_us.csv"
    header = header.replace("Start (ns)", "Start (us)").replace("Duration (ns)", "Duration (us)")
    path.write_text("Processing [report.sqlite] with [cuda_gpu_trace.py]...\n\n" + "\n".join([header, *rows]))
    evidence = parse_nsys_gpu_trace(path)
    assert evidence.entries[0].samples[0] == pytest.approx(190056.0)


def test_nsys_gpu_trace_malformed(tmp_path: Path) -> None:
    lines = (FIXTURES / "nsys_transpose_cuda_gpu_trace.csv").read_text(encoding="utf-8").splitlines()
    cells = lines[4].split(",")
    cells[1] = "soon"
    lines[4] = ",".join(cells)
    path = tmp_path / "trace.csv"
    path.write_text("\n".join(lines), encoding="utf-8")
    assert_format_error(
        parse_nsys_gpu_trace, path, ":5: column `Duration \\(ns\\)`", "expected a number", "'soon'"
    )

    path.write_text("\n".join([lines[0], lines[1], lines[2] + ",extra"]), encoding="utf-8")
    assert_format_error(parse_nsys_gpu_trace, path, ":3: expected 21 comma-separated cells", "found 22")

    path.write_text("Time (%),Name\n1,x\n", encoding="utf-8")
    assert_format_error(parse_nsys_gpu_trace, path, "no CSV header with the columns `Name`, `GrdX`")


def test_nsys_kern_sum_is_aggregates_only() -> None:
    evidence = parse_nsys_kern_sum(FIXTURES / "nsys_transpose_cuda_gpu_kern_sum.csv")
    tiled = evidence.entries[0]
    assert tiled.name == "transpose_tiled_kernel" and tiled.blocks == ()
    assert (tiled.statistic("mean"), tiled.statistic("median"), tiled.statistic("min")) == (
        191168.9,
        190779.0,
        190004.0,
    )
    label = evidence.label
    assert (label.granularity, label.interleaved, label.evidence_grade) == ("aggregate", "unknown", False)


def test_a_kernel_summary_nsys_wrote_reads_past_its_progress_lines_and_names_its_version() -> None:
    evidence = parse_nsys_kern_sum(FIXTURES / "nsys_cuda_gpu_kern_sum_phantom_fhe.csv")
    assert len(evidence.entries) == 15
    first = evidence.entries[0]
    assert first.name.startswith("phantom::key_switch_inner_prod_c2_and_evk(unsigned long *, ")
    assert [first.statistic(s) for s in ("mean", "median", "min", "max")] == [
        358374.8,
        358209.0,
        358144,
        359040,
    ]
    last = evidence.entries[-1]
    assert last.name.startswith("bconv_mult_unroll2_kernel(")
    assert (last.statistic("mean"), last.statistic("max")) == (3017.6, 3136)
    assert (evidence.label.tool, evidence.label.tool_version) == ("Nsight Systems", "2024.7.1")
    assert (evidence.label.granularity, evidence.label.interleaved) == ("aggregate", "unknown")


def test_nsys_reads_its_version_from_the_install_path_of_its_report_script(tmp_path: Path) -> None:
    body = (FIXTURES / "nsys_transpose_cuda_gpu_kern_sum.csv").read_text(encoding="utf-8")
    for script, version in (
        (
            "/usr/local/cuda-12.9/nsight-systems-2025.1.3/host-linux-x64/reports/cuda_gpu_kern_sum.py",
            "2025.1.3",
        ),
        (
            r"C:\Program Files\NVIDIA Corporation\Nsight Systems 2024.6.2\target-windows-x64\reports\x.py",
            "2024.6.2",
        ),
        ("/usr/lib/x86_64-linux-gnu/nsight-systems/target-linux-x64/reports/cuda_gpu_kern_sum.py", None),
    ):
        path = tmp_path / "kern_sum.csv"
        path.write_text(f"Processing [report1.sqlite] with [{script}]... \n{body}", encoding="utf-8")
        assert parse_nsys_kern_sum(path).label.tool_version == version
    assert parse_nsys_kern_sum(FIXTURES / "nsys_transpose_cuda_gpu_kern_sum.csv").label.tool_version is None


def test_nsys_kern_sum_malformed(tmp_path: Path) -> None:
    text = (FIXTURES / "nsys_transpose_cuda_gpu_kern_sum.csv").read_text(encoding="utf-8")
    path = tmp_path / "sum.csv"
    path.write_text(text.replace("Med (ns)", "Median"), encoding="utf-8")
    assert_format_error(parse_nsys_kern_sum, path, "no column `Med \\(ns\\)`")


def test_ncu_counters_per_launch_in_base_units() -> None:
    evidence = parse_ncu_raw(NCU)
    fused = [e for e in evidence.entries if "rmsnorm_fused_kernel" in e.name]
    assert len(fused) == 1 and fused[0].blocks == ()
    counters = {c.metric: c for c in fused[0].counters}
    assert set(counters) == {"dram__bytes_read.sum", "dram__bytes_write.sum", "gpu__time_duration.sum"}
    assert counters["dram__bytes_read.sum"].unit == "byte"
    assert counters["gpu__time_duration.sum"].unit == "nsecond"
    square = next(e for e in evidence.entries if "rmsnorm_square_kernel" in e.name)
    first = {c.metric: c.values[0] for c in square.counters}
    assert first["dram__bytes_read.sum"] == 134_238_208  # "134,238,208" in the file
    assert first["gpu__time_duration.sum"] == 58_112
    label = evidence.label
    assert (label.tool, label.granularity, label.interleaved) == ("Nsight Compute", "raw", "no")
    assert ("Host Name", "gpu-node-07") in label.environment and ("CC", "9.0") in label.environment


def test_ncu_malformed(tmp_path: Path) -> None:
    text = NCU.read_text(encoding="utf-8")
    path = tmp_path / "ncu.csv"
    path.write_text(text.replace('"134,238,208"', '"lots"', 1), encoding="utf-8")
    assert_format_error(
        parse_ncu_raw, path, r":\d+: column `dram__bytes_read\.sum`", "expected a number", "'lots'"
    )

    header_only = [line for line in text.splitlines() if line.startswith('"ID"') or line.startswith('"",')]
    path.write_text("\n".join(header_only), encoding="utf-8")
    assert_format_error(parse_ncu_raw, path, "no launch row")


def test_ncu_units_other_than_base_are_converted(tmp_path: Path) -> None:
    """Without `--print-units base` ncu may print Kbyte or usecond: values still come out in bytes and ns."""
    text = NCU.read_text(encoding="utf-8")
    base_units = '"byte","byte","nsecond"'
    assert base_units in text
    path = tmp_path / "ncu_scaled.csv"
    path.write_text(text.replace(base_units, '"Kbyte","byte","usecond"'), encoding="utf-8")
    square = next(e for e in parse_ncu_raw(path).entries if "rmsnorm_square_kernel" in e.name)
    first = {c.metric: (c.unit, c.values[0]) for c in square.counters}
    assert first["dram__bytes_read.sum"] == ("byte", 134_238_208_000)
    assert first["dram__bytes_write.sum"] == ("byte", 134_217_984)
    assert first["gpu__time_duration.sum"] == ("nsecond", 58_112_000)
