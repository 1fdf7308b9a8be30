"""Counted mechanism evidence without a GPU: ncu's CSV, the metric map, kernel names, failures.

The fixtures in tests/fixtures/ are ncu `--csv --page raw --print-units base` logs
written by hand beside the parser, not captured from ncu (tests/fixtures/README.md),
in the documented format: ncu's `==PROF==` lines, a header row, a units row, one
row per launch, thousands separators and `n/a`. Their kernel names are the real
mangled names Numba gives the bundled kernels (one fixture printed demangled, as
ncu does by default, one mangled). Where `ncu` itself would run, a fake `ncu`
script stands in for it, so the whole collection path (command line, log file,
exit, timeout) runs as a real subprocess.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from perfdsl.bundle.results import ShapeRecord
from perfdsl.counter_metrics import MEASURE_METRICS, TIME_METRIC, metrics_for
from perfdsl.kernel import Variant
from perfdsl.parse import parse
from perfdsl.plan import plan
from perfdsl.runtime.counters.attach import NOT_CUDA, NOT_LARGEST, NOT_PASSED, attach_counters
from perfdsl.runtime.counters.attribution import aggregate, attribute
from perfdsl.runtime.counters.names import (
    MARKER_KERNEL,
    kernel_function_name,
    kernel_regex,
    mangled_identifier,
)
from perfdsl.runtime.counters.ncu import (
    DRIVER_DONE,
    MAX_LAUNCHES_PER_ARM,
    NO_NCU,
    CounterRequest,
    collect,
    ncu_command,
    run_command,
)
from perfdsl.runtime.counters.ncu_csv import CounterError, Launch, RawTable, parse_number, parse_raw_csv
from perfdsl.source import Source
from perfdsl.vocabulary import MEASURES

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[1]
RMSNORM_CSV = (FIXTURES / "ncu_raw_rmsnorm.csv").read_text()
TRANSPOSE_CSV = (FIXTURES / "ncu_raw_transpose.csv").read_text()

# Numba's symbols for the bundled kernels (numba-cuda 0.30, `inspect_cuda_kernel(...).symbol`).
SQUARE = (
    "_ZN7kernels7rmsnorm21rmsnorm_square_kernelB2v1B104cw51cXTLSUwv1sDUaKthqaNgoKmjgEhasCBDCg1bcEADwxst6m1"
    "ByRAiDEllSAKoKQcmgeQT22p1WPiqWylALVUHSgJ5xrWaAA_3d_3dE5ArrayIfLi2E1C7mutable7alignedE5ArrayIfLi2E1C"
    "7mutable7alignedE"
)
FUSED = (
    "_ZN7kernels7rmsnorm20rmsnorm_fused_kernelB3v24B104cw51cXTLSUwv1sDUaKthqaNgoKmjgEhasCBDCg1bcEADwxst6m1"
    "ByRAiDEllSAKoKQcmgeQT22p1WPiqWylALVUHSgJ5xrWaAA_3d_3dE5ArrayIfLi2E1C7mutable7alignedE5ArrayIfLi1E1C"
    "7mutable7alignedE5ArrayIfLi2E1C7mutable7alignedE"
)
RMSNORM_METRICS = metrics_for(("bytes", "launches"))
TRANSPOSE_METRICS = metrics_for(("bank_conflicts", "bytes"))
ARMS = (("baseline", "unfused"), ("change", "fused"))


# --- the metric map ----------------------------------------------------------------------


def test_every_measure_of_the_vocabulary_has_its_metrics() -> None:
    assert set(MEASURE_METRICS) == set(MEASURES)


def test_metrics_follow_the_study_measures_with_the_kernel_time_first() -> None:
    assert metrics_for(("bytes", "launches")) == (
        TIME_METRIC,
        "dram__bytes_read.sum",
        "dram__bytes_write.sum",
    )
    assert metrics_for(("bank_conflicts",)) == (
        TIME_METRIC,
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "smsp__inst_executed_op_shared_ld.sum",
    )
    assert metrics_for(("active_lanes",))[1] == "smsp__thread_inst_executed_per_inst_executed.ratio"
    assert "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio" in metrics_for(
        ("dependency_stalls",)
    )
    assert metrics_for(("tensor_pipe",))[1].startswith("sm__pipe_tensor_op_hmma_cycles_active")
    assert metrics_for(("launches",)) == (TIME_METRIC,)
    assert metrics_for(("bytes", "bytes")) == metrics_for(("bytes",))


def test_the_plan_carries_the_study_measures() -> None:
    study_plan = _plan("rmsnorm_fusion")
    assert study_plan.measures == ("bytes", "launches")
    assert _plan("transpose_bank_conflicts").measures == ("bank_conflicts", "bytes")


# --- kernel names --------------------------------------------------------------------------


def test_the_mangled_identifier_is_numbas() -> None:
    from numba.core.itanium_mangler import mangle_identifier

    for name in ("rmsnorm_fused_kernel", "k2", "_private", "norme_été"):
        assert mangled_identifier(name) == mangle_identifier(name)


def test_the_regex_selects_each_kernel_by_its_exact_name() -> None:
    pattern = re.compile(kernel_regex(["rmsnorm_square_kernel"]))
    assert pattern.search(SQUARE)
    assert not pattern.search(FUSED)
    assert pattern.search(f"_ZN8__main__23{MARKER_KERNEL}B2v1B92cw51cXTLSUwv1sDUaE")
    # A name that another one ends with is not selected by it.
    fused_only = re.compile(kernel_regex(["fused_kernel"]))
    assert fused_only.search("_ZN7kernels7rmsnorm12fused_kernelB2v1B9cw51cXTLSE")
    assert not fused_only.search("_ZN7kernels7rmsnorm14unfused_kernelB2v1B9cw51cXTLSE")
    # Older Numba, without ABI tags: the nested name ends right after the function.
    assert fused_only.search("_ZN7kernels7rmsnorm12fused_kernelE5ArrayIfLi2E1C7mutable7alignedE")


@pytest.mark.slow
def test_the_regex_matches_the_symbol_numba_compiles() -> None:
    from numba import cuda

    from perfdsl.runtime.counters.driver import perfdsl_counters_marker

    @cuda.jit
    def counters_probe_kernel(x):
        x[0] = 1.0

    ptx, _ = cuda.compile_ptx(counters_probe_kernel.py_func, "void(float32[::1])", cc=(9, 0))
    symbol = re.search(r"\.entry\s+([\w$.]+)\s*\(", ptx).group(1)
    assert re.search(kernel_regex(["counters_probe_kernel"]), symbol)
    assert kernel_function_name(symbol) == "counters_probe_kernel"
    assert perfdsl_counters_marker.py_func.__name__ == MARKER_KERNEL


@pytest.mark.parametrize(
    ("printed", "name"),
    [
        (SQUARE, "rmsnorm_square_kernel"),
        (
            "kernels::rmsnorm::rmsnorm_fused_kernel[abi:v24][abi:cw51cX]"
            "(Array<float, 2, C, mutable, aligned>)",
            "rmsnorm_fused_kernel",
        ),
        ("__main__::perfdsl_counters_marker[abi:v1][abi:cw51cXTLSUwv1sDUaKthqa]", MARKER_KERNEL),
        ("rmsnorm_fused_kernel", "rmsnorm_fused_kernel"),
        ("void copy_kernel<float>(float*, float*)", "copy_kernel"),
        ("_Z11copy_kernelPfS_", "copy_kernel"),
    ],
)
def test_the_function_name_is_read_from_any_printed_form(printed: str, name: str) -> None:
    assert kernel_function_name(printed) == name


# --- the CSV ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("134,238,208", 134238208.0),
        ("1,856", 1856.0),
        ("12.5", 12.5),
        ("4.0e-05", 4e-05),
        ("1,234.5", 1234.5),
        ("0", 0.0),
        ("n/a", None),
        ("", None),
        ("-", None),
    ],
)
def test_numbers_as_ncu_prints_them(text: str, value: float | None) -> None:
    assert parse_number(text) == value


def test_the_raw_page_is_read_row_by_row() -> None:
    table = parse_raw_csv(RMSNORM_CSV, RMSNORM_METRICS)
    assert [launch.kernel for launch in table.launches] == [
        MARKER_KERNEL,
        "rmsnorm_square_kernel",
        "rmsnorm_reduce_kernel",
        "rmsnorm_scale_kernel",
        MARKER_KERNEL,
        "rmsnorm_fused_kernel",
    ]
    assert table.units == {
        TIME_METRIC: "nsecond",
        "dram__bytes_read.sum": "byte",
        "dram__bytes_write.sum": "byte",
    }
    square = table.launches[1]
    assert square.id == 1
    assert square.metrics == {
        TIME_METRIC: 58112.0,
        "dram__bytes_read.sum": 134238208.0,
        "dram__bytes_write.sum": 134217984.0,
    }


def test_n_a_is_absent_and_a_metric_ncu_did_not_print_is_absent() -> None:
    table = parse_raw_csv(TRANSPOSE_CSV, (*TRANSPOSE_METRICS, "sm__not_collected.sum"))
    marker = table.launches[0]
    assert marker.metrics["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] is None
    assert "sm__not_collected.sum" not in marker.metrics
    assert table.units["smsp__inst_executed_op_shared_ld.sum"] == "inst"


def test_units_other_than_base_are_converted_to_bytes_and_nanoseconds() -> None:
    text = (
        '"ID","Process ID","Process Name","Host Name","Kernel Name",'
        '"dram__bytes_read.sum","gpu__time_duration.sum"\n'
        '"","","","","","Mbyte","usecond"\n'
        '"0","1","python","h","copy_kernel","2,048.5","12.5"\n'
    )
    table = parse_raw_csv(text, (TIME_METRIC, "dram__bytes_read.sum"))
    assert table.units == {"dram__bytes_read.sum": "byte", TIME_METRIC: "nsecond"}
    assert table.launches[0].metrics == {"dram__bytes_read.sum": 2048.5e6, TIME_METRIC: 12500.0}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("==ERROR== the application returned an error\n", "no CSV header"),
        ('"ID","Process ID","Kernel Name","gpu__time_duration.sum"\n"","","","nsecond"\n', "no launch"),
    ],
)
def test_output_without_rows_is_an_error_that_says_so(text: str, message: str) -> None:
    with pytest.raises(CounterError, match=message):
        parse_raw_csv(text, (TIME_METRIC,))


def test_sums_add_and_ratios_are_averaged_by_time() -> None:
    launches = [
        Launch(0, "k", {TIME_METRIC: 100.0, "a.sum": 1.0, "lanes.ratio": 32.0}),
        Launch(1, "k", {TIME_METRIC: 300.0, "a.sum": 2.0, "lanes.ratio": 16.0}),
    ]
    totals = aggregate(launches, (TIME_METRIC, "a.sum", "lanes.ratio", "missing.sum"))
    assert totals == {TIME_METRIC: 400.0, "a.sum": 3.0, "lanes.ratio": 20.0, "missing.sum": None}


# --- attribution -------------------------------------------------------------------------------


def test_launches_between_markers_belong_to_each_variant() -> None:
    table = parse_raw_csv(RMSNORM_CSV, RMSNORM_METRICS)
    baseline, change = attribute(table, ARMS, ("bytes", "launches"), RMSNORM_METRICS, "ncu 2025.1", 130)
    assert baseline.launches == 3 and change.launches == 1
    assert baseline.quantities["bytes"] == 134238208 + 134221824 + 134270976 + 134217984 + 16384 + 134217728
    assert change.quantities["bytes"] == 134254592 + 134217760
    assert baseline.quantities["kernel_time_ns"] == 58112 + 31776 + 59040
    assert [k.name for k in baseline.kernels] == [
        "rmsnorm_reduce_kernel",
        "rmsnorm_scale_kernel",
        "rmsnorm_square_kernel",
    ]
    summary = baseline.summary()
    assert summary["evidence"] == "counted" and summary["tool"] == "ncu 2025.1"
    assert summary["kernels"]["rmsnorm_reduce_kernel"]["metrics"]["dram__bytes_write.sum"] == 16384
    json.dumps(summary)


def test_bank_conflicts_and_wavefronts_per_shared_load() -> None:
    table = parse_raw_csv(TRANSPOSE_CSV, TRANSPOSE_METRICS)
    tiled, padded = attribute(
        table,
        (("baseline", "tiled"), ("change", "padded")),
        ("bank_conflicts", "bytes"),
        TRANSPOSE_METRICS,
        "ncu",
        130,
    )
    assert tiled.quantities["bank_conflicts"] == 65011712
    assert tiled.quantities["shared_load_wavefronts_per_instruction"] == 32.0
    assert padded.quantities["bank_conflicts"] == 0
    assert padded.quantities["shared_load_wavefronts_per_instruction"] == 1.0


def test_a_variant_without_launches_or_cut_by_the_cap_is_missing() -> None:
    table = parse_raw_csv(RMSNORM_CSV, RMSNORM_METRICS)
    first_only = RawTable(table.units, table.launches[:4])
    baseline, change = attribute(first_only, ARMS, ("bytes",), RMSNORM_METRICS, "ncu", 130)
    assert baseline.missing is None
    assert change.summary() == {
        "evidence": None,
        "variant": "fused",
        "missing": "ncu recorded no launch of this variant",
    }
    _, capped = attribute(table, ARMS, ("bytes",), RMSNORM_METRICS, "ncu", launch_cap=6)
    assert "--launch-count 6" in (capped.missing or "")
    baseline_only = RawTable(table.units, table.launches[:5])
    _, empty = attribute(baseline_only, ARMS, ("bytes",), RMSNORM_METRICS, "ncu", 130)
    assert empty.missing == "no launch of this variant matched the kernel filter"


def test_a_launch_before_the_first_marker_is_refused() -> None:
    table = parse_raw_csv(RMSNORM_CSV, RMSNORM_METRICS)
    shuffled = RawTable(table.units, table.launches[1:])
    with pytest.raises(CounterError, match="before the first marker"):
        attribute(shuffled, ARMS, ("bytes",), RMSNORM_METRICS, "ncu", 130)


# --- the command line --------------------------------------------------------------------


def test_the_command_line() -> None:
    command = ncu_command(
        "/usr/local/cuda/bin/ncu",
        RMSNORM_METRICS,
        kernel_regex(["rmsnorm_fused_kernel"]),
        130,
        Path("/tmp/ncu.csv"),
        [sys.executable, "-m", "perfdsl.runtime.counters.driver", "{}"],
    )
    joined = " ".join(command)
    assert command[0] == "/usr/local/cuda/bin/ncu"
    for flags in (
        "--csv --page raw --print-units base",
        "--clock-control none",
        "--cache-control all",
        "--profile-from-start off",
        "--kernel-name-base mangled",
        "--launch-count 130",
        "--log-file /tmp/ncu.csv",
    ):
        assert flags in joined
    assert command[command.index("--metrics") + 1] == ",".join(RMSNORM_METRICS)
    assert command[command.index("--kernel-name") + 1] == (
        f"regex:23{MARKER_KERNEL}(B[0-9]|E)|20rmsnorm_fused_kernel(B[0-9]|E)"
    )
    assert command[-4:] == [sys.executable, "-m", "perfdsl.runtime.counters.driver", "{}"]


# --- collecting, with a fake ncu ---------------------------------------------------------


def _request() -> CounterRequest:
    return CounterRequest(
        study_dir=str(ROOT / "studies"),
        reference="kernels.rmsnorm:reference",
        arms=(("baseline", "kernels.rmsnorm:unfused"), ("change", "kernels.rmsnorm:fused")),
        variants=("unfused", "fused"),
        kernels=(
            "rmsnorm_fused_kernel",
            "rmsnorm_reduce_kernel",
            "rmsnorm_scale_kernel",
            "rmsnorm_square_kernel",
        ),
        sizes={"M": 4096, "N": 8192},
        dtype="float32",
        measures=("bytes", "launches"),
    )


def _fake_ncu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, body: str) -> Path:
    """Put an executable `ncu` first on the PATH: `--version` answers, anything else runs `body`.

    `body` sees `args` (the command line) and `log` (the --log-file path); argv is saved
    to args.json for the test to read.
    """
    script = tmp_path / "ncu"
    script.write_text(
        f"#!{sys.executable}\n"
        "import json, os, subprocess, sys, time\n"
        "args = sys.argv[1:]\n"
        "if args == ['--version']:\n"
        "    print('NVIDIA (R) Nsight Compute Command Line Profiler')\n"
        "    print('Copyright (c) 2018-2025 NVIDIA Corporation')\n"
        "    print('Version 2025.1.1.0 (build 35528883) (public-release)')\n"
        "    sys.exit(0)\n"
        f"json.dump(args, open({str(tmp_path / 'args.json')!r}, 'w'))\n"
        "log = args[args.index('--log-file') + 1]\n" + body
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    real_which = shutil.which
    monkeypatch.setattr(
        shutil, "which", lambda name, *a, **k: str(script) if name == "ncu" else real_which(name)
    )
    return script


def _writes(fixture: str) -> str:
    return f"open(log, 'w').write(open({str(FIXTURES / fixture)!r}).read())\nprint({DRIVER_DONE!r})\n"


def test_without_ncu_the_counters_are_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)
    result = collect(_request())
    assert result.missing == NO_NCU
    assert result.summary()["evidence"] is None
    assert result.pairs() == {}


def test_collect_runs_ncu_around_the_driver_and_counts_both_arms(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_ncu(tmp_path, monkeypatch, _writes("ncu_raw_rmsnorm.csv"))
    result = collect(_request())
    assert result.missing is None
    assert result.tool == "ncu 2025.1.1.0"
    assert result.pairs() == {
        "bytes": {"baseline": 671183104.0, "change": 268472352.0},
        "launches": {"baseline": 3.0, "change": 1.0},
        "kernel_time_ns": {"baseline": 148928.0, "change": 58624.0},
    }
    args = json.loads((tmp_path / "args.json").read_text())
    assert args[args.index("--clock-control") + 1] == "none"
    assert args[args.index("--launch-count") + 1] == str(2 * MAX_LAUNCHES_PER_ARM + 2)
    regex = args[args.index("--kernel-name") + 1].removeprefix("regex:")
    assert re.search(regex, SQUARE) and re.search(regex, FUSED)
    # The driver is started with the request it needs to rebuild the operation.
    driver = args[args.index("--log-file") + 2 :]
    assert driver[:3] == [sys.executable, "-m", "perfdsl.runtime.counters.driver"]
    request = json.loads(driver[3])
    assert request["arms"] == [["baseline", "kernels.rmsnorm:unfused"], ["change", "kernels.rmsnorm:fused"]]
    assert request["sizes"] == {"M": 4096, "N": 8192} and request["dtype"] == "float32"
    summary = result.summary()
    assert summary["evidence"] == "counted" and "--clock-control none" in summary["command"]
    assert summary["arms"]["change"]["launches"] == 1
    assert "==PROF==" in result.log
    json.dumps(summary)


def test_a_permission_error_is_reported_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ncu(
        tmp_path,
        monkeypatch,
        (
            "open(log, 'w').write('==PROF== Connected to process 7 (python3.11)\\n'\n"
            "    '==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU '\n"
            "    'Performance Counters on the target device 0. For instructions on enabling permissions '\n"
            "    'and to get more information see https://developer.nvidia.com/ERR_NVGPUCTRPERM\\n')\n"
            f"print({DRIVER_DONE!r})\n"
        ),
    )
    result = collect(_request())
    assert "ERR_NVGPUCTRPERM" in (result.missing or "")
    assert result.arms == () and result.pairs() == {}


def test_a_driver_that_fails_is_reported_with_its_last_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_ncu(
        tmp_path,
        monkeypatch,
        (
            "print('Traceback (most recent call last):')\n"
            "print('perfdsl.runtime.targets.TargetError: no usable CUDA GPU')\n"
            "sys.exit(1)\n"
        ),
    )
    result = collect(_request())
    assert result.missing == (
        "the profiled process failed (exit status 1): perfdsl.runtime.targets.TargetError: no usable CUDA GPU"
    )


@pytest.mark.slow
def test_the_driver_reads_the_request_and_stops_at_the_missing_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real driver, started as ncu would start it: it resolves the study's references
    and fails only where a GPU is needed, and that failure is what the result says."""
    from perfdsl.runtime.targets import gpu_available

    if gpu_available():
        pytest.skip("a GPU is present: the driver would get past make_target")
    _fake_ncu(
        tmp_path,
        monkeypatch,
        ("driver = args[args.index('--log-file') + 2 :]\nsys.exit(subprocess.run(driver).returncode)\n"),
    )
    result = collect(_request(), timeout_s=300)
    assert (result.missing or "").startswith("the profiled process failed (exit status 1): ")
    assert "perfdsl.runtime.targets.NoGpu: no usable CUDA GPU" in (result.missing or "")


def test_unreadable_output_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_ncu(tmp_path, monkeypatch, f"open(log, 'w').write('==PROF== nothing\\n')\nprint({DRIVER_DONE!r})\n")
    result = collect(_request())
    assert result.missing == (
        'ncu\'s output could not be read: ncu printed no CSV header (no `"ID",...,"Kernel Name"` row)'
    )


@pytest.mark.slow
def test_a_hung_profiler_times_out_and_its_process_group_is_killed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pid_file = tmp_path / "child.pid"
    _fake_ncu(
        tmp_path,
        monkeypatch,
        (
            "child = subprocess.Popen(['sleep', '60'])\n"
            f"open({str(pid_file)!r}, 'w').write(str(child.pid))\n"
            "time.sleep(60)\n"
        ),
    )
    started = time.monotonic()
    result = collect(_request(), timeout_s=2)
    assert time.monotonic() - started < 20
    assert result.missing == "ncu did not finish within 2 s"
    assert not _running(int(pid_file.read_text()))


def test_run_command_kills_the_whole_group_on_timeout(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    with pytest.raises(subprocess.TimeoutExpired):
        run_command(["sh", "-c", f"sleep 60 & echo $! > {pid_file}; wait"], timeout_s=1)
    assert not _running(int(pid_file.read_text()))


def _running(pid: int) -> bool:
    """Whether `pid` is alive (a zombie waiting to be reaped is not), allowing a moment to die."""
    for _ in range(50):
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        if state in ("Z", "X"):
            return False
        time.sleep(0.1)
    return True


# --- the run's step ------------------------------------------------------------------------


class _Bundle:
    """What attach_counters needs of a BundleWriter: somewhere to write the ncu log."""

    def __init__(self) -> None:
        self.files: dict[str, str] = {}

    def write_text(self, relpath: str, text: str) -> Path:
        self.files[relpath] = text
        return Path(relpath)


def _plan(study: str) -> Any:
    path = ROOT / "studies" / f"{study}.perf"
    parsed = parse(Source(str(path), path.read_text()))
    assert parsed.study is not None
    return plan(parsed.study, "cuda", quick=False)


def _shape(label: str) -> ShapeRecord:
    return ShapeRecord(label=label, sizes={}, weight=1.0, models={})


def _variants() -> dict[str, Variant]:
    from kernels import rmsnorm

    return {"baseline": rmsnorm.unfused, "change": rmsnorm.fused}


def test_on_other_targets_every_shape_says_why_it_has_no_counters() -> None:
    study_plan = _plan("rmsnorm_fusion")
    operation = study_plan.operations[0]
    shapes = [_shape(s.label) for s in operation.shapes]
    out = attach_counters(study_plan, operation, {}, "cpu", shapes, True, _Bundle(), lambda _: None)
    assert [(s.label, s.counters, s.counters_missing) for s in out] == [
        (s.label, None, NOT_CUDA) for s in shapes
    ]
    assert all(s.counters_missing is None for s in shapes)


def test_a_failed_correctness_check_is_not_profiled() -> None:
    study_plan = _plan("rmsnorm_fusion")
    operation = study_plan.operations[0]
    out = attach_counters(
        study_plan,
        operation,
        _variants(),
        "cuda",
        [_shape(s.label) for s in operation.shapes],
        False,
        _Bundle(),
        lambda _: None,
    )
    assert {entry.counters_missing for entry in out} == {NOT_PASSED}


def test_on_cuda_the_largest_shape_is_counted_and_the_log_archived(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_ncu(tmp_path, monkeypatch, _writes("ncu_raw_rmsnorm.csv"))
    study_plan = _plan("rmsnorm_fusion")
    operation = study_plan.operations[0]
    bundle, messages = _Bundle(), []
    out = attach_counters(
        study_plan,
        operation,
        _variants(),
        "cuda",
        [_shape(s.label) for s in operation.shapes],
        True,
        bundle,
        messages.append,
    )
    assert [entry.counters_missing for entry in out[:2]] == [NOT_LARGEST] * 2
    largest = out[2]
    assert largest.label == "4096x8192"
    assert largest.counters is not None and largest.counters_detail is not None
    assert largest.counters["bytes"] == {"baseline": 671183104.0, "change": 268472352.0}
    assert largest.counters["launches"] == {"baseline": 3.0, "change": 1.0}
    assert largest.counters_missing is None
    assert largest.counters_detail["arms"]["baseline"]["variant"] == "unfused"
    assert bundle.files == {"counters/normalize.ncu.log": RMSNORM_CSV}
    assert largest.counters_log == "counters/normalize.ncu.log"
    assert messages == ["counting normalize 4096x8192 with Nsight Compute"]
    request = json.loads(json.loads((tmp_path / "args.json").read_text())[-1])
    assert request["kernels"] == [
        "rmsnorm_fused_kernel",
        "rmsnorm_reduce_kernel",
        "rmsnorm_scale_kernel",
        "rmsnorm_square_kernel",
    ]
    assert request["measures"] == ["bytes", "launches"]
    assert Path(request["study_dir"]) == ROOT / "studies"
    assert os.path.isabs(request["study_dir"])
