"""Counted mechanism evidence: Nsight Compute's hardware counters for one shape of an operation.

A study's mechanism is a claim about one physical quantity (`vocabulary.MEASURES`).
Without a profiler the run can only *model* it (the study's formulas); on a GPU
with Nsight Compute (`ncu`) on the PATH it can *count* it. The choices below are
what make those counts comparable with the timed samples
(../shared/research/performance.md §3):

* one `ncu` process per operation runs `counters_driver`, which prepares the
  inputs as the timing harness does, warms every variant up (JIT compilation,
  first-touch allocation) and then calls baseline and change once each between
  `cuda.profile_start()` and `cuda.profile_stop()`; `--profile-from-start off`
  keeps the warm-up out of the profile;
* `--clock-control none`: ncu otherwise locks the clocks to base, and nothing
  it reports would match the event timings; `--cache-control all` flushes the
  caches before every replay pass, so counted DRAM bytes are cold like the
  samples, whose L2 the timing harness flushes;
* Numba's kernel names are Itanium-mangled
  (`_ZN7kernels4copy11copy_kernelB2v1B92cw51...E5ArrayIfLi1E...`): the filter,
  matched against the mangled name, is the length-prefixed Python name followed
  by an ABI tag or the end of the nested name, so `fused_kernel` never selects
  `unfused_kernel`;
* ncu's CSV does not say which call a launch belongs to, and two variants may
  share a kernel, so the driver launches a marker kernel before each variant
  inside the profiled range: launches are attributed to variants by their order.

A missing `ncu`, a permission error (ERR_NVGPUCTRPERM), a timeout or an
unreadable CSV is never an exception: the result is `missing`, saying why.
"""

from __future__ import annotations

import csv
import json
import math
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from perfdsl.kernel import Variant
    from perfdsl.plan import OperationPlan, Plan
    from perfdsl.runtime.bundle import BundleWriter

TIME_METRIC = "gpu__time_duration.sum"
"""Collected for every measure: the kernel's own duration, a cross-check on the event timings."""

CONFLICTS_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
CONFLICTS_ST = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
WAVEFRONTS_LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
SHARED_LD_INSTRUCTIONS = "smsp__inst_executed_op_shared_ld.sum"
STALL_WAIT = "smsp__average_warps_issue_stalled_wait_per_issue_active.ratio"
STALL_LONG_SCOREBOARD = "smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio"

MEASURE_METRICS: dict[str, tuple[str, ...]] = {
    "bytes": ("dram__bytes_read.sum", "dram__bytes_write.sum"),
    # The "conflicts" counters are the wavefronts above the minimum; wavefronts per
    # shared load instruction is the robust form (about 32 for a column read of a
    # 32 x 32 float tile, about 1 with padding). The tiled transpose conflicts on
    # its loads (it reads the tile by column), so the ratio is taken for loads.
    "bank_conflicts": (CONFLICTS_LD, CONFLICTS_ST, WAVEFRONTS_LD, SHARED_LD_INSTRUCTIONS),
    "active_lanes": ("smsp__thread_inst_executed_per_inst_executed.ratio",),
    # Launches are counted, not measured: one CSV row per profiled launch.
    "launches": (),
    # Fixed-latency dependencies (an add waiting on the previous add) stall as
    # `wait`; dependencies on loads stall on the long scoreboard.
    "dependency_stalls": (STALL_WAIT, STALL_LONG_SCOREBOARD),
    "tensor_pipe": ("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",),
}
"""Each measure of vocabulary.MEASURES -> the Nsight Compute metrics that count it."""

MARKER_KERNEL = "perfdsl_counters_marker"
"""The empty kernel the driver launches before each variant: rows after the i-th marker
belong to the i-th variant."""
DRIVER_DONE = "perfdsl counters driver: done"
"""The driver's last line: without it, the profiled process failed and its rows are partial."""
TIMEOUT_S = 120.0
MAX_LAUNCHES_PER_ARM = 64
"""ncu's --launch-count is this per variant, plus the markers; more launches per call
than this and the last variant's counts would be partial, so it is reported missing."""
_VERSION_TIMEOUT_S = 30.0

NOT_CUDA = "counters need --target cuda and Nsight Compute (ncu)"
NO_NCU = "Nsight Compute (`ncu`) is not on the PATH"
NOT_PASSED = "not profiled: a variant failed its correctness check"
NOT_LARGEST = "counted at the operation's largest shape only (one Nsight Compute run per operation)"

_UNIT_SCALE = {
    "byte": ("byte", 1.0), "Kbyte": ("byte", 1e3), "Mbyte": ("byte", 1e6),
    "Gbyte": ("byte", 1e9), "Tbyte": ("byte", 1e12),
    "nsecond": ("nsecond", 1.0), "usecond": ("nsecond", 1e3),
    "msecond": ("nsecond", 1e6), "second": ("nsecond", 1e9),
}
"""Byte and time units to bytes and nanoseconds, so a quantity's unit never depends on
ncu's printing (`--print-units base` should already give these)."""
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?")
_INVALID_IDENTIFIER_CHAR = re.compile(r"[^a-z0-9_]", re.IGNORECASE)
_LENGTH = re.compile(r"\d+")


class CounterError(Exception):
    """ncu's output could not be read as the expected CSV; the message says what was wrong."""


def metrics_for(measures: Iterable[str]) -> tuple[str, ...]:
    """The metrics to collect for a study's measures: the kernel time first, no repeats."""
    metrics = [TIME_METRIC]
    for measure in measures:
        metrics.extend(m for m in MEASURE_METRICS[measure] if m not in metrics)
    return tuple(metrics)


# --- kernel names ----------------------------------------------------------------------


def mangled_identifier(name: str) -> str:
    """A Python name as Numba's Itanium mangler writes it: `<length><name>`.

    Characters outside [A-Za-z0-9_] become `_xx` (their UTF-8 bytes in hex), as in
    numba.core.itanium_mangler, so the length counts the escaped form.
    """
    escaped = _INVALID_IDENTIFIER_CHAR.sub(
        lambda m: "".join(f"_{byte:02x}" for byte in m.group(0).encode("utf-8")), name
    )
    return f"{len(escaped)}{escaped}"


def kernel_regex(names: Iterable[str]) -> str:
    """The `--kernel-name regex:` body (with `--kernel-name-base mangled`) selecting these
    kernels and the marker.

    Plain alternation, literals, groups and one character class only: ncu's regex
    engine is not Python's, so nothing here depends on lookaround. The length prefix
    makes the name exact; the ABI tag (`B2v1`, numba-cuda) or `E` (the end of the
    nested name, older Numba) rules out a longer name that starts the same way.
    """
    unique = sorted({*names, MARKER_KERNEL})
    return "|".join(f"{mangled_identifier(name)}(B[0-9]|E)" for name in unique)


def kernel_function_name(kernel: str) -> str:
    """The function's own name from ncu's "Kernel Name" column, however ncu printed it.

    Mangled (`_ZN7kernels4copy11copy_kernelB2v1...E5Array...`): the last component
    of the nested name. Demangled (`kernels::copy::copy_kernel[abi:v1](Array<...>)`)
    or bare (`copy_kernel`): the text before any ABI tag, template or parameter list,
    after the last `::`.
    """
    kernel = kernel.strip()
    if kernel.startswith("_Z"):
        nested = kernel.startswith("_ZN")
        position, last = (3 if nested else 2), None
        while (match := _LENGTH.match(kernel, position)) is not None:
            length = int(match.group())
            last = kernel[match.end() : match.end() + length]
            position = match.end() + length
            if not nested:
                break
        if last:
            return last
    head = re.split(r"[\[(<]", kernel, maxsplit=1)[0]
    words = head.rsplit("::", 1)[-1].split()
    return words[-1] if words else kernel


def variant_kernel_names(variants: Iterable[Variant]) -> tuple[str, ...]:
    """The Python names of every CUDA kernel the variants declare they launch."""
    names = set()
    for variant in variants:
        for kernel, _ in variant.cuda_kernels:
            names.add(getattr(getattr(kernel, "py_func", kernel), "__name__", str(kernel)))
    return tuple(sorted(names))


# --- the CSV -----------------------------------------------------------------------------


@attrs.frozen
class Launch:
    """One profiled kernel launch: one row of `--page raw`."""

    id: int
    kernel: str
    """The function's name (see kernel_function_name)."""
    metrics: dict[str, float | None]
    """None where ncu printed `n/a` or nothing: absent, not zero."""


@attrs.frozen
class RawTable:
    """ncu's `--csv --page raw --print-units base` output, read."""

    units: dict[str, str]
    launches: tuple[Launch, ...]


def parse_number(text: str) -> float | None:
    """A metric value as ncu prints it: `1,234,567`, `12.5`, `4.0e-05`; `n/a` and blanks are None."""
    text = text.strip()
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    try:
        return float(text)
    except ValueError:
        return None


def parse_raw_csv(text: str, metrics: Sequence[str]) -> RawTable:
    """Read the raw page: a header row, a units row, then one row per launch.

    ncu's own messages (`==PROF==`, `==WARNING==`) may come before, between or after
    the rows and are skipped. Byte and time values are converted to bytes and
    nanoseconds. Only the requested metrics are read; one ncu does not print is
    absent from every launch. Raises CounterError when there is no header or no row.
    """
    lines = [line for line in text.splitlines() if line.strip() and not line.startswith("==")]
    rows = list(csv.reader(lines))
    header_at = next(
        (i for i, row in enumerate(rows) if row[:1] == ["ID"] and "Kernel Name" in row), None
    )
    if header_at is None:
        raise CounterError("ncu printed no CSV header (no `\"ID\",...,\"Kernel Name\"` row)")
    header = rows[header_at]
    column = {name: i for i, name in enumerate(header)}
    wanted = [m for m in metrics if m in column]
    units: dict[str, str] = {}
    scale: dict[str, float] = {}
    launches = []
    for row in rows[header_at + 1 :]:
        if len(row) != len(header):
            continue
        if row[0] == "" and not units:
            for metric in wanted:
                unit, factor = _UNIT_SCALE.get(row[column[metric]], (row[column[metric]], 1.0))
                units[metric], scale[metric] = unit, factor
            continue
        if not row[0].strip().isdigit():
            continue
        values = {}
        for metric in wanted:
            value = parse_number(row[column[metric]])
            values[metric] = None if value is None else value * scale.get(metric, 1.0)
        launches.append(Launch(int(row[0]), kernel_function_name(row[column["Kernel Name"]]), values))
    if not launches:
        raise CounterError("ncu's CSV has a header but no launch: no kernel matched the filter")
    return RawTable(units, tuple(sorted(launches, key=lambda launch: launch.id)))


# --- from launches to evidence ----------------------------------------------------------


def aggregate(launches: Sequence[Launch], metrics: Sequence[str]) -> dict[str, float | None]:
    """Each metric over a set of launches: `.sum` counters add up; ratios and percentages
    are averaged weighted by each launch's duration (equal weights if one lacks it).

    A metric no launch reported is None.
    """
    times = [launch.metrics.get(TIME_METRIC) for launch in launches]
    weights = [t if t is not None and t > 0 else 0.0 for t in times]
    if 0.0 in weights:
        weights = [1.0] * len(launches)
    out: dict[str, float | None] = {}
    for metric in metrics:
        pairs = [
            (value, weight)
            for launch, weight in zip(launches, weights, strict=True)
            if (value := launch.metrics.get(metric)) is not None
        ]
        if not pairs:
            out[metric] = None
        elif metric.endswith(".sum"):
            out[metric] = sum(value for value, _ in pairs)
        else:
            out[metric] = sum(value * weight for value, weight in pairs) / sum(w for _, w in pairs)
    return out


def _added(*values: float | None) -> float | None:
    return None if any(v is None for v in values) else sum(v for v in values if v is not None)


def quantities(
    measures: Iterable[str], metrics: Mapping[str, float | None], launches: int
) -> dict[str, float | None]:
    """One number per measure, in the study's words, from an arm's aggregated metrics.

    bytes: DRAM bytes read + written. launches: profiled launches per call.
    bank_conflicts: shared-memory bank conflicts on loads and stores, with the
    wavefronts per shared load instruction beside it. active_lanes: threads per
    executed warp instruction (32 is full). dependency_stalls: warps stalled on a
    fixed-latency or a memory dependency per issue-active cycle. tensor_pipe: the
    tensor pipe's share of peak, %. Plus the kernels' own time, for every measure.
    """
    out: dict[str, float | None] = {}
    for measure in measures:
        if measure == "bytes":
            out["bytes"] = _added(*(metrics.get(m) for m in MEASURE_METRICS["bytes"]))
        elif measure == "launches":
            out["launches"] = float(launches)
        elif measure == "bank_conflicts":
            out["bank_conflicts"] = _added(metrics.get(CONFLICTS_LD), metrics.get(CONFLICTS_ST))
            wavefronts, instructions = metrics.get(WAVEFRONTS_LD), metrics.get(SHARED_LD_INSTRUCTIONS)
            out["shared_load_wavefronts_per_instruction"] = (
                wavefronts / instructions if wavefronts is not None and instructions else None
            )
        elif measure == "dependency_stalls":
            out["dependency_stalls"] = _added(metrics.get(STALL_WAIT), metrics.get(STALL_LONG_SCOREBOARD))
        else:
            (metric,) = MEASURE_METRICS[measure]
            out[measure] = metrics.get(metric)
    out["kernel_time_ns"] = metrics.get(TIME_METRIC)
    return out


@attrs.frozen
class KernelCounters:
    """One kernel's launches within one variant's call."""

    name: str
    launches: int
    metrics: dict[str, float | None]


@attrs.frozen
class ArmCounters:
    """What ncu counted for one variant's call, or why nothing was."""

    arm: str
    """"baseline" or "change"."""
    variant: str
    missing: str | None = None
    tool: str | None = None
    launches: int = 0
    metrics: dict[str, float | None] = attrs.field(factory=dict)
    units: dict[str, str] = attrs.field(factory=dict)
    quantities: dict[str, float | None] = attrs.field(factory=dict)
    kernels: tuple[KernelCounters, ...] = ()

    def summary(self) -> dict[str, Any]:
        """JSON: {"evidence": "counted", "tool", "launches", "metrics", ...}, or
        {"evidence": null, "missing"}."""
        if self.missing is not None:
            return {"evidence": None, "variant": self.variant, "missing": self.missing}
        return {
            "evidence": "counted",
            "variant": self.variant,
            "tool": self.tool,
            "launches": self.launches,
            "quantities": self.quantities,
            "metrics": self.metrics,
            "units": self.units,
            "kernels": {k.name: {"launches": k.launches, "metrics": k.metrics} for k in self.kernels},
        }


def attribute(
    table: RawTable, arms: Sequence[tuple[str, str]], measures: Sequence[str], metrics: Sequence[str],
    tool: str, launch_cap: int,
) -> tuple[ArmCounters, ...]:
    """Split the launches at the marker rows, one segment per (arm, variant), in order.

    A launch before the first marker means the order is not what the driver made
    (raises CounterError). An arm without a segment, with an empty one, or whose
    segment may have been cut by ncu's --launch-count, is missing.
    """
    segments: list[list[Launch]] = []
    for launch in table.launches:
        if launch.kernel == MARKER_KERNEL:
            segments.append([])
        elif not segments:
            raise CounterError(f"launch {launch.id} of `{launch.kernel}` came before the first marker")
        else:
            segments[-1].append(launch)
    capped = len(table.launches) >= launch_cap
    out = []
    for index, (arm, variant) in enumerate(arms):
        if index >= len(segments):
            missing = "ncu recorded no launch of this variant"
        elif capped and index == len(segments) - 1:
            missing = f"ncu stopped at --launch-count {launch_cap}: this variant's launches may be partial"
        elif not segments[index]:
            missing = "no launch of this variant matched the kernel filter"
        else:
            out.append(_counted(arm, variant, segments[index], table.units, measures, metrics, tool))
            continue
        out.append(ArmCounters(arm, variant, missing=missing))
    return tuple(out)


def _counted(
    arm: str, variant: str, launches: Sequence[Launch], units: Mapping[str, str],
    measures: Sequence[str], metrics: Sequence[str], tool: str,
) -> ArmCounters:
    """One variant's launches: totals over all of them, and each kernel's own."""
    kernels = tuple(
        KernelCounters(name, len(own), aggregate(own, metrics))
        for name in sorted({launch.kernel for launch in launches})
        for own in [[launch for launch in launches if launch.kernel == name]]
    )
    totals = aggregate(launches, metrics)
    return ArmCounters(
        arm, variant, tool=tool, launches=len(launches), metrics=totals,
        units={m: u for m, u in units.items() if m in metrics},
        quantities=quantities(measures, totals, len(launches)), kernels=kernels,
    )


# --- running ncu -----------------------------------------------------------------------


@attrs.frozen
class CounterRequest:
    """One operation at one shape: what the driver needs to rebuild and call its variants."""

    study_dir: str
    reference: str
    """`module:attr` of the operation's Reference."""
    arms: tuple[tuple[str, str], ...]
    """(arm, variant reference) in the order they are called, e.g. ("baseline", "kernels.rmsnorm:unfused")."""
    variants: tuple[str, ...]
    """The variants' names, in the same order (they label the results)."""
    kernels: tuple[str, ...]
    """Python names of every CUDA kernel the variants launch."""
    sizes: dict[str, int]
    dtype: str
    measures: tuple[str, ...]


@attrs.frozen
class CounterResult:
    """The counters of one operation at one shape, or why there are none."""

    missing: str | None
    tool: str | None = None
    command: tuple[str, ...] = ()
    metrics: tuple[str, ...] = ()
    arms: tuple[ArmCounters, ...] = ()
    log: str = ""
    """ncu's log (its messages and the CSV), kept as the raw profiler output."""

    def pairs(self) -> dict[str, dict[str, float]]:
        """{quantity: {"baseline": x, "change": y}} for each quantity both arms counted,
        the form results.json's `models` has."""
        by_arm = {a.arm: a.quantities for a in self.arms if a.missing is None}
        if self.missing is not None or not {"baseline", "change"} <= set(by_arm):
            return {}
        return {
            name: {"baseline": value, "change": by_arm["change"][name]}
            for name, value in by_arm["baseline"].items()
            if value is not None and by_arm["change"].get(name) is not None
        }

    def summary(self) -> dict[str, Any]:
        """JSON: the tool, the exact command, the metrics asked for and each arm's record."""
        return {
            "evidence": None if self.missing else "counted",
            "missing": self.missing,
            "tool": self.tool,
            "command": shlex.join(self.command) if self.command else None,
            "metrics": list(self.metrics),
            "arms": {a.arm: a.summary() for a in self.arms},
        }


def ncu_command(
    ncu: str, metrics: Sequence[str], regex: str, launch_count: int, log_file: Path, driver: Sequence[str],
) -> list[str]:
    """The profiler's command line around the driver's."""
    return [
        ncu,
        "--csv", "--page", "raw", "--print-units", "base",
        "--clock-control", "none",
        "--cache-control", "all",
        "--profile-from-start", "off",
        "--metrics", ",".join(metrics),
        "--kernel-name-base", "mangled",
        "--kernel-name", f"regex:{regex}",
        "--launch-count", str(launch_count),
        "--log-file", str(log_file),
        *driver,
    ]


def run_command(
    command: Sequence[str], timeout_s: float, env: Mapping[str, str] | None = None
) -> tuple[int, str]:
    """Run to completion and return (exit status, stdout and stderr together).

    The command gets a session of its own, and on timeout the whole process group is
    killed before TimeoutExpired is re-raised: killing only `ncu` would leave the
    profiled Python process holding the GPU while the run goes on timing.
    """
    with subprocess.Popen(
        list(command), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace",
        start_new_session=True, env=None if env is None else dict(env),
    ) as process:
        try:
            output, _ = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise
        return process.returncode, output


def ncu_version(ncu: str) -> str | None:
    """`2024.3.2.0` from `ncu --version`, or None if it cannot be read."""
    try:
        _, output = run_command([ncu, "--version"], _VERSION_TIMEOUT_S)
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"Version\s+(\S+)", output)
    return match.group(1) if match else None


def _failure(text: str) -> str | None:
    """Why ncu produced no counters, from its messages, if it said."""
    if "ERR_NVGPUCTRPERM" in text:
        return (
            "ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM): they need "
            "admin rights or the driver option NVreg_RestrictProfilingToAdminUsers=0"
        )
    errors = [line for line in text.splitlines() if line.startswith("==ERROR==")]
    return f"ncu failed: {errors[0].removeprefix('==ERROR==').strip()}" if errors else None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith("==")]
    return lines[-1] if lines else "(no output)"


def collect(request: CounterRequest, timeout_s: float = TIMEOUT_S) -> CounterResult:
    """Profile baseline and change once each under ncu; never raises for a profiler problem."""
    ncu = shutil.which("ncu")
    if ncu is None:
        return CounterResult(missing=NO_NCU)
    version = ncu_version(ncu)
    tool = f"ncu {version}" if version else "ncu (version unknown)"
    metrics = metrics_for(request.measures)
    launch_cap = MAX_LAUNCHES_PER_ARM * len(request.arms) + len(request.arms)
    driver = [sys.executable, "-m", "perfdsl.runtime.counters_driver", json.dumps(attrs.asdict(request))]
    # The driver must import this perfdsl, whatever the working directory.
    package_root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory(prefix="perfdsl-ncu-") as workdir:
        log_file = Path(workdir) / "ncu.csv"
        command = ncu_command(ncu, metrics, kernel_regex(request.kernels), launch_cap, log_file, driver)
        base = CounterResult(missing=None, tool=tool, command=tuple(command), metrics=metrics)
        try:
            status, output = run_command(command, timeout_s, env)
        except subprocess.TimeoutExpired:
            return attrs.evolve(base, missing=f"ncu did not finish within {timeout_s:g} s")
        except OSError as error:
            return attrs.evolve(base, missing=f"ncu could not be started: {error}")
        log = log_file.read_text(errors="replace") if log_file.exists() else ""
    base = attrs.evolve(base, log=log)
    reason = _failure(log + "\n" + output)
    # ncu may or may not pass the driver's stdout through when it logs to a file.
    if reason is None and DRIVER_DONE not in output + log:
        reason = f"the profiled process failed (exit status {status}): {_last_line(output)}"
    if reason is not None:
        return attrs.evolve(base, missing=reason)
    arms = tuple(zip((arm for arm, _ in request.arms), request.variants, strict=True))
    try:
        table = parse_raw_csv(log, metrics)
        return attrs.evolve(
            base, arms=attribute(table, arms, request.measures, metrics, tool, launch_cap)
        )
    except CounterError as error:
        return attrs.evolve(base, missing=f"ncu's output could not be read: {error}")


# --- the run's step ------------------------------------------------------------------------


def attach_counters(
    plan: Plan, operation: OperationPlan, variants: Mapping[str, Variant], target: str,
    shapes: Sequence[dict[str, Any]], passed: bool, bundle: BundleWriter,
    progress: Callable[[str], None], timeout_s: float = TIMEOUT_S,
) -> list[dict[str, Any]]:
    """The operation's shape entries with `counters` (the pairs), `counters_detail` and
    `counters_missing` added: counted at the largest shape on cuda, missing elsewhere.

    ncu's log goes into the bundle as `counters/<operation>.ncu.log`.
    """
    largest = max(range(len(operation.shapes)), key=lambda i: math.prod(operation.shapes[i].sizes.values()))
    reason = NOT_CUDA if target != "cuda" else None if passed else NOT_PASSED
    result = None
    if reason is None:
        shape = operation.shapes[largest]
        progress(f"counting {operation.name} {shape.label} with Nsight Compute")
        request = CounterRequest(
            study_dir=str(Path(plan.study_path).resolve().parent),
            reference=operation.reference,
            arms=tuple((arm, getattr(operation, arm)) for arm in variants),
            variants=tuple(v.name for v in variants.values()),
            kernels=variant_kernel_names(variants.values()),
            sizes=dict(shape.sizes),
            dtype=plan.dtype,
            measures=plan.measures,
        )
        result = collect(request, timeout_s)
    out = []
    for index, entry in enumerate(shapes):
        entry = dict(entry)
        if result is None or index != largest:
            entry.update(counters=None, counters_missing=reason or NOT_LARGEST)
        else:
            if result.log:
                entry["counters_log"] = f"counters/{operation.name}.ncu.log"
                bundle.write_text(entry["counters_log"], result.log)
            entry["counters_detail"] = result.summary()
            pairs = result.pairs()
            entry["counters"] = pairs or None
            if not pairs:
                entry["counters_missing"] = result.missing or "; ".join(
                    f"{a.arm}: {a.missing}" for a in result.arms if a.missing
                ) or "no quantity was counted for both arms"
        out.append(entry)
    return out
