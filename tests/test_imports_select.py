"""Choosing the baseline and change entries of imported files, and finding a format by name."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import attrs
import pytest
from imports_support import FIXTURES

from perfdsl.imports.evidence import ImportFormatError
from perfdsl.imports.registry import FORMATS, parse_import
from perfdsl.imports.select import EntryNotFound, select_entry, select_pair

GOOGLE = FIXTURES / "google_benchmark_batchnorm.json"
PYTEST = FIXTURES / "pytest_benchmark_batchnorm.json"


def test_exact_name_wins_even_when_it_is_not_a_valid_pattern() -> None:
    evidence = parse_import("pytest-benchmark", PYTEST)
    name = "benchmarks/imports/test_pytest_benchmark.py::test_batchnorm[fused]"
    assert select_entry(evidence, name).name == name


def test_a_pattern_selects_the_one_entry_it_fully_matches() -> None:
    evidence = parse_import("google-benchmark", GOOGLE)
    assert select_entry(evidence, r"BM_\w+/fused").name == "BM_batchnorm/fused"
    # A fragment is not a full match: `fused` alone names nothing.
    with pytest.raises(EntryNotFound):
        select_entry(evidence, "fused")


def test_no_match_lists_the_available_names() -> None:
    evidence = parse_import("google-benchmark", GOOGLE)
    with pytest.raises(EntryNotFound) as caught:
        select_entry(evidence, "BM_batchnorm/unfused")
    message = str(caught.value)
    assert message.startswith(str(GOOGLE))
    assert "no entry matches `BM_batchnorm/unfused`" in message
    assert "available: `BM_batchnorm/numpy_passes`, `BM_batchnorm/fused`" in message


def test_an_ambiguous_pattern_is_refused_with_its_matches() -> None:
    evidence = parse_import("google-benchmark", GOOGLE)
    with pytest.raises(EntryNotFound, match=r"matches 2 entries .*expected exactly one"):
        select_entry(evidence, "BM_batchnorm/.*")


def test_two_entries_of_the_selected_name_are_refused_not_the_first_taken() -> None:
    # Two benchmarks named `batchnorm_fused` in one pyperf file, the second 10x slower: the
    # first was taken and the ratio reported as if it were the only one.
    evidence = parse_import("google-benchmark", GOOGLE)
    fused = next(entry for entry in evidence.entries if entry.name == "BM_batchnorm/fused")
    twice = attrs.evolve(evidence, entries=(*evidence.entries, fused))
    with pytest.raises(EntryNotFound, match=r"2 entries are named `BM_batchnorm/fused`: expected exactly"):
        select_entry(twice, "BM_batchnorm/fused")


def test_an_invalid_pattern_says_so_and_lists_the_names() -> None:
    evidence = parse_import("google-benchmark", GOOGLE)
    with pytest.raises(EntryNotFound, match=r"not a valid regular expression .*available: `BM_batchnorm"):
        select_entry(evidence, "BM_batchnorm/(")


def test_select_pair_from_one_file_and_from_two() -> None:
    google = parse_import("google-benchmark", GOOGLE)
    baseline, change = select_pair(google, ".*numpy_passes", google, ".*fused")
    assert (baseline.name, change.name) == ("BM_batchnorm/numpy_passes", "BM_batchnorm/fused")
    pyperf = parse_import("pyperf", FIXTURES / "pyperf_batchnorm.json")
    baseline, change = select_pair(google, ".*numpy_passes", pyperf, "batchnorm_fused")
    assert change.name == "batchnorm_fused"
    with pytest.raises(EntryNotFound, match="select the same entry `BM_batchnorm/fused`"):
        select_pair(google, r".*fused", google, "BM_batchnorm/fused")


def test_selection_errors_are_format_errors() -> None:
    """Callers catch one exception type for every way an import can fail."""
    assert issubclass(EntryNotFound, ImportFormatError)


def test_every_format_name_is_the_format_its_parser_reports() -> None:
    fixtures = {
        "google-benchmark": GOOGLE,
        "pytest-benchmark": PYTEST,
        "pyperf": FIXTURES / "pyperf_batchnorm.json",
        "hyperfine": FIXTURES / "hyperfine_batchnorm.json",
        "nvbench": FIXTURES / "nvbench_transpose.json",
        "nsys-gpu-trace": FIXTURES / "nsys_transpose_cuda_gpu_trace.csv",
        "nsys-kern-sum": FIXTURES / "nsys_transpose_cuda_gpu_kern_sum.csv",
        "ncu-raw": FIXTURES.parent / "ncu_raw_rmsnorm.csv",
    }
    assert set(fixtures) == set(FORMATS)
    for name, path in fixtures.items():
        evidence = parse_import(name, path)
        assert evidence.format == name and evidence.entries
        assert evidence.label.path == str(path) and len(evidence.label.sha256) == 64


def test_an_unknown_format_suggests_close_names(tmp_path: Path) -> None:
    with pytest.raises(ImportFormatError, match=r"unknown import format `pyperff`: did you mean `pyperf`"):
        parse_import("pyperff", tmp_path / "x.json")


def test_a_file_of_another_format_is_a_clear_error() -> None:
    with pytest.raises(ImportFormatError, match=r"pyperf_batchnorm\.json: \$: missing field `results`"):
        parse_import("hyperfine", FIXTURES / "pyperf_batchnorm.json")
    with pytest.raises(ImportFormatError, match=r"expected UTF-8 JSON text|not JSON"):
        parse_import("pyperf", FIXTURES / "nvbench_transpose.json-bin" / "0.bin")
    with pytest.raises(ImportFormatError, match=r"no CSV header with the columns `ID`, `Kernel Name`"):
        parse_import("ncu-raw", FIXTURES / "nsys_transpose_cuda_gpu_trace.csv")


def test_importing_reads_no_harness() -> None:
    """The default install has none of the tools: importing every parser must not need one."""
    heavy = {"pyperf", "pytest_benchmark", "google_benchmark", "numba", "scipy", "torch"}
    code = f"import sys, perfdsl.imports.registry\nbad = {heavy!r} & set(sys.modules)\nassert not bad, bad\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr


def test_an_entry_whose_times_no_clock_measures_is_refused_naming_the_file() -> None:
    # A pyperf file of zeros passed check and run; evaluate then refused the bundle with
    # "change block medians must be ... positive values", naming no imported file.
    evidence = parse_import("google-benchmark", GOOGLE)
    fused = next(entry for entry in evidence.entries if entry.name == "BM_batchnorm/fused")
    zeros = attrs.evolve(fused, blocks=tuple(tuple(0.0 for _ in block) for block in fused.blocks))
    stopped = attrs.evolve(evidence, entries=tuple(zeros if e is fused else e for e in evidence.entries))
    with pytest.raises(
        ImportFormatError, match=r"entry `BM_batchnorm/fused` holds a time of 0 ns \(sample 1\)"
    ):
        select_entry(stopped, "BM_batchnorm/fused")
    assert select_entry(evidence, "BM_batchnorm/fused") is fused
