"""What else ran on the machine during a block: other processes' CPU time, steal, load.

A run on a shared machine measured 4096x8192 at a ratio of 0.632 where a quiet
one measured 0.497, and its only sign of trouble was a spread warning. So the
sampler reads, at each block's start and end (outside the timed calls):

* the machine's CPU time from /proc/stat (the `cpu` line, in clock ticks):
  busy = user + nice + system + irq + softirq (+ guest are already in user), and steal;
* this process's own CPU time (all its threads, the kernel's worker threads too);
* the 1-minute load average from /proc/loadavg.

The readings go into results.json's block log (`bundle.sampling.LoadReading`);
whether a block competed with other work is the evaluation's judgement, made
from the file (perfdsl/evaluate/contention.py).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import attrs

from perfdsl.bundle.sampling import LoadReading

PROC_STAT = Path("/proc/stat")
PROC_LOADAVG = Path("/proc/loadavg")

_BUSY = ("user", "nice", "system", "irq", "softirq")
_FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")


@attrs.frozen
class CpuTimes:
    """The machine's aggregate CPU times, in seconds, from the `cpu` line of /proc/stat."""

    busy_s: float
    steal_s: float
    total_s: float


def parse_proc_stat(text: str, ticks_per_s: float = 100.0) -> CpuTimes:
    """The `cpu` line of /proc/stat as seconds; ValueError when there is none."""
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] == "cpu":
            values = [int(v) for v in parts[1 : 1 + len(_FIELDS)]]
            values += [0] * (len(_FIELDS) - len(values))
            fields = dict(zip(_FIELDS, values, strict=True))
            return CpuTimes(
                busy_s=sum(fields[f] for f in _BUSY) / ticks_per_s,
                steal_s=fields["steal"] / ticks_per_s,
                total_s=sum(values) / ticks_per_s,
            )
    raise ValueError("no aggregate `cpu` line in /proc/stat")


def read_load() -> LoadReading | None:
    """One reading: machine CPU times, this process's CPU time, load average, wall clock.

    None where /proc is not there (not Linux): the block then has no contention record.
    """
    try:
        cpu = parse_proc_stat(PROC_STAT.read_text(), float(os.sysconf("SC_CLK_TCK")))
        load1 = float(PROC_LOADAVG.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return LoadReading(
        wall_s=time.monotonic(),
        busy_s=cpu.busy_s,
        steal_s=cpu.steal_s,
        total_s=cpu.total_s,
        self_s=time.process_time(),
        load1=load1,
    )
