"""Importing CPU harnesses' files: Google Benchmark, pytest-benchmark, pyperf, hyperfine.

Every fixture was written by the tool itself (tests/fixtures/imports/README.md);
each test checks the parser against the file's own numbers, the label it
gets, and a malformed copy's one-line error naming the file and the field.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from imports_support import FIXTURES, assert_format_error, broken_json, load

from perfdsl.imports.google_benchmark import parse_google_benchmark
from perfdsl.imports.hyperfine import parse_hyperfine
from perfdsl.imports.pyperf_json import parse_pyperf
from perfdsl.imports.pytest_benchmark import parse_pytest_benchmark

US = 1e3
S = 1e9


def test_google_benchmark_repetitions_are_blocks_of_one_mean() -> None:
    path = FIXTURES / "google_benchmark_batchnorm.json"
    evidence = parse_google_benchmark(path)
    raw = load(path.name)
    assert evidence.names == ("BM_batchnorm/numpy_passes", "BM_batchnorm/fused")
    for entry in evidence.entries:
        runs = [b for b in raw["benchmarks"] if b["run_name"] == entry.name and b["run_type"] == "iteration"]
        assert entry.blocks == tuple((b["real_time"] * US,) for b in runs)
        assert entry.calls_per_sample == runs[0]["iterations"]
        assert entry.granularity == "per_block"
        (mean,) = [b for b in raw["benchmarks"] if b["name"] == entry.name + "_mean"]
        assert entry.statistic("mean") == pytest.approx(mean["real_time"] * US)
        assert entry.statistic("stddev") is None
    label = evidence.label
    assert (label.tool, label.tool_version) == ("Google Benchmark", "1.9.5")
    assert (label.granularity, label.interleaved, label.evidence_grade) == ("per_block", "unknown", False)
    assert ("host_name", raw["context"]["host_name"]) in label.environment
    assert ("library_build_type", "release") in label.environment
    assert label.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()


def test_google_benchmark_aggregates_only_are_labelled_aggregate() -> None:
    evidence = parse_google_benchmark(FIXTURES / "google_benchmark_batchnorm_aggregates.json")
    assert evidence.label.granularity == "aggregate"
    assert all(entry.blocks == () and entry.statistic("median") for entry in evidence.entries)
    assert "aggregates only: no samples to bootstrap" in evidence.label.caveats


def test_google_benchmark_malformed(tmp_path: Path) -> None:
    def damage(data: dict) -> None:
        data["benchmarks"][1]["real_time"] = "fast"

    path = broken_json(tmp_path, "google_benchmark_batchnorm.json", damage)
    assert_format_error(
        parse_google_benchmark, path, r"\$\.benchmarks\[1\]\.real_time", "expected a number", "'fast'"
    )

    def unit(data: dict) -> None:
        data["benchmarks"][0]["time_unit"] = "fortnight"

    path = broken_json(tmp_path, "google_benchmark_batchnorm.json", unit)
    assert_format_error(
        parse_google_benchmark, path, r"\$\.benchmarks\[0\]\.time_unit", "time unit", "'fortnight'"
    )


def test_pytest_benchmark_rounds_are_one_block_of_raw_samples() -> None:
    path = FIXTURES / "pytest_benchmark_batchnorm.json"
    evidence = parse_pytest_benchmark(path)
    raw = load(path.name)
    assert evidence.names == tuple(b["fullname"] for b in raw["benchmarks"])
    for entry, bench in zip(evidence.entries, raw["benchmarks"], strict=True):
        assert entry.blocks == (tuple(v * S for v in bench["stats"]["data"]),)
        assert len(entry.samples) == bench["stats"]["rounds"]
        assert entry.statistic("median") == pytest.approx(bench["stats"]["median"] * S)
        assert entry.calls_per_sample == bench["stats"]["iterations"]
    label = evidence.label
    assert (label.tool, label.tool_version) == ("pytest-benchmark", "5.3.1")
    assert (label.granularity, label.interleaved, label.evidence_grade) == ("raw", "no", False)
    assert ("python_version", raw["machine_info"]["python_version"]) in label.environment
    assert any(field == "brand_raw" for field, _ in label.environment)


def test_pytest_benchmark_without_data_keeps_its_statistics(tmp_path: Path) -> None:
    def drop(data: dict) -> None:
        for bench in data["benchmarks"]:
            del bench["stats"]["data"]

    evidence = parse_pytest_benchmark(broken_json(tmp_path, "pytest_benchmark_batchnorm.json", drop))
    assert evidence.label.granularity == "aggregate"
    assert all(entry.statistic("mean") > 0 for entry in evidence.entries)


def test_pytest_benchmark_malformed(tmp_path: Path) -> None:
    def damage(data: dict) -> None:
        data["benchmarks"][0]["stats"]["data"][3] = -1.0

    path = broken_json(tmp_path, "pytest_benchmark_batchnorm.json", damage)
    assert_format_error(parse_pytest_benchmark, path, r"\$\.benchmarks\[0\]\.stats\.data\[3\]", "duration")

    def missing(data: dict) -> None:
        del data["machine_info"]

    path = broken_json(tmp_path, "pytest_benchmark_batchnorm.json", missing)
    assert_format_error(parse_pytest_benchmark, path, r"\$: missing field `machine_info`")


def test_pyperf_runs_are_blocks() -> None:
    path = FIXTURES / "pyperf_batchnorm.json"
    evidence = parse_pyperf(path)
    raw = load(path.name)
    assert evidence.names == ("batchnorm_numpy_passes", "batchnorm_fused")
    for entry, bench in zip(evidence.entries, raw["benchmarks"], strict=True):
        timed = [run for run in bench["runs"] if "values" in run]
        assert len(timed) == 6 and len(bench["runs"]) == 7  # one calibration run, without values
        assert entry.blocks == tuple(tuple(v * S for v in run["values"]) for run in timed)
        assert entry.calls_per_sample == bench["metadata"]["loops"]
    label = evidence.label
    assert (label.tool, label.tool_version) == ("pyperf", "2.11.0")
    assert (label.granularity, label.interleaved, label.evidence_grade) == ("raw", "no", False)
    assert ("cpu_model_name", raw["metadata"]["cpu_model_name"]) in label.environment


def test_pyperf_malformed(tmp_path: Path) -> None:
    def unit(data: dict) -> None:
        data["metadata"]["unit"] = "byte"

    path = broken_json(tmp_path, "pyperf_batchnorm.json", unit)
    assert_format_error(parse_pyperf, path, r"\$\.benchmarks\[0\]\.metadata\.unit", "`second`", "'byte'")

    def runs(data: dict) -> None:
        data["benchmarks"][1]["runs"] = {"values": [1.0]}

    path = broken_json(tmp_path, "pyperf_batchnorm.json", runs)
    assert_format_error(parse_pyperf, path, r"\$\.benchmarks\[1\]\.runs", "expected an array", "an object")

    def version(data: dict) -> None:
        data["version"] = "0.9"

    path = broken_json(tmp_path, "pyperf_batchnorm.json", version)
    assert_format_error(parse_pyperf, path, r"\$\.version", r"`1\.0`")


def test_hyperfine_times_are_one_block_of_process_runs() -> None:
    path = FIXTURES / "hyperfine_batchnorm.json"
    evidence = parse_hyperfine(path)
    raw = load(path.name)
    assert evidence.names == ("numpy_passes", "fused")
    for entry, result in zip(evidence.entries, raw["results"], strict=True):
        assert entry.blocks == (tuple(t * S for t in result["times"]),)
        assert entry.statistic("mean") == pytest.approx(result["mean"] * S)
    label = evidence.label
    assert (label.tool, label.tool_version, label.environment) == ("hyperfine", None, ())
    assert (label.granularity, label.interleaved, label.evidence_grade) == ("raw", "no", False)


def test_hyperfine_malformed(tmp_path: Path) -> None:
    def failed(data: dict) -> None:
        data["results"][1]["exit_codes"][2] = 1

    path = broken_json(tmp_path, "hyperfine_batchnorm.json", failed)
    assert_format_error(parse_hyperfine, path, r"\$\.results\[1\]\.exit_codes\[2\]", "exit code 0", "`fused`")

    def no_results(data: dict) -> None:
        data["result"] = data.pop("results")

    path = broken_json(tmp_path, "hyperfine_batchnorm.json", no_results)
    assert_format_error(parse_hyperfine, path, "missing field `results`")


def test_not_json_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "truncated.json"
    path.write_text(
        (FIXTURES / "hyperfine_batchnorm.json").read_text(encoding="utf-8")[:200], encoding="utf-8"
    )
    assert_format_error(parse_hyperfine, path, r":\d+:\d+: not JSON")


def test_a_missing_file_is_a_format_error(tmp_path: Path) -> None:
    assert_format_error(parse_pyperf, tmp_path / "absent.json", "cannot read the file")
