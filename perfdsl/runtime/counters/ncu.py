"""Running Nsight Compute around the driver for one operation at one shape: `collect`.

The choices below are what make ncu's counts comparable with the timed samples
(../shared/research/performance.md §3):

* one `ncu` process per operation runs `counters.driver`, which prepares the
  inputs as the timing harness does, warms every variant up (JIT compilation,
  first-touch allocation) and then calls baseline and change once each between
  `cuda.profile_start()` and `cuda.profile_stop()`; `--profile-from-start off`
  keeps the warm-up out of the profile;
* `--clock-control none`: ncu otherwise locks the clocks to base, and nothing
  it reports would match the event timings; `--cache-control all` flushes the
  caches before every replay pass, so counted DRAM bytes are cold like the
  samples, whose L2 the timing harness flushes;
* the kernel filter (`names.kernel_regex`) selects the variants' kernels and the
  marker by their mangled names, and foreign kernels by the entry symbols their
  `cuda_code` hook declares.

A missing `ncu`, a permission error (ERR_NVGPUCTRPERM), a timeout or an
unreadable CSV is never an exception: the result is `missing`, saying why.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from perfdsl.counter_metrics import metrics_for
from perfdsl.runtime.counters.attribution import ArmCounters, attribute
from perfdsl.runtime.counters.names import kernel_regex
from perfdsl.runtime.counters.ncu_csv import CounterError, parse_raw_csv

DRIVER_DONE = "perfdsl counters driver: done"
"""The driver's last line: without it, the profiled process failed and its rows are partial."""
TIMEOUT_S = 120.0
MAX_LAUNCHES_PER_ARM = 64
"""ncu's --launch-count is this per variant, plus the markers; more launches per call
than this and the last variant's counts would be partial, so it is reported missing."""
_VERSION_TIMEOUT_S = 30.0

NO_NCU = "Nsight Compute (`ncu`) is not on the PATH"


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
    """Python names of every Numba CUDA kernel the variants launch."""
    sizes: dict[str, int]
    dtype: str
    measures: tuple[str, ...]
    foreign_kernels: tuple[str, ...] = ()
    """Entry symbols of the kernels foreign variants declare (`KernelCode.name`), matched exactly."""


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
    ncu: str,
    metrics: Sequence[str],
    regex: str,
    launch_count: int,
    log_file: Path,
    driver: Sequence[str],
) -> list[str]:
    """The profiler's command line around the driver's."""
    return [
        ncu,
        "--csv",
        "--page",
        "raw",
        "--print-units",
        "base",
        "--clock-control",
        "none",
        "--cache-control",
        "all",
        "--profile-from-start",
        "off",
        "--metrics",
        ",".join(metrics),
        "--kernel-name-base",
        "mangled",
        "--kernel-name",
        f"regex:{regex}",
        "--launch-count",
        str(launch_count),
        "--log-file",
        str(log_file),
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
        list(command),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        start_new_session=True,
        env=None if env is None else dict(env),
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
    driver = [sys.executable, "-m", "perfdsl.runtime.counters.driver", json.dumps(attrs.asdict(request))]
    # The driver must import this perfdsl, whatever the working directory.
    package_root = str(Path(__file__).resolve().parents[3])
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    with tempfile.TemporaryDirectory(prefix="perfdsl-ncu-") as workdir:
        log_file = Path(workdir) / "ncu.csv"
        regex = kernel_regex(request.kernels, request.foreign_kernels)
        command = ncu_command(ncu, metrics, regex, launch_cap, log_file, driver)
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
        return attrs.evolve(base, arms=attribute(table, arms, request.measures, metrics, tool, launch_cap))
    except CounterError as error:
        return attrs.evolve(base, missing=f"ncu's output could not be read: {error}")
