"""What else ran on the machine during a block: other processes' CPU time, steal, load.

A run on a shared machine measured 4096x8192 at a ratio of 0.632 where a quiet
one measured 0.497, and its only sign of trouble was a spread warning. So the
sampler reads, at each block's start and end (outside the timed calls):

* the machine's CPU time from /proc/stat (the `cpu` line, in clock ticks):
  busy = user + nice + system + irq + softirq (+ guest are already in user), and steal;
* this process's own CPU time (all its threads, the kernel's worker threads too);
* the 1-minute load average from /proc/loadavg.

Other work during the block is the machine's busy time minus this process's,
as an average number of cores (`other_cores`); steal is the hypervisor's share
given to other guests. A block is **contended** when other work averaged at least
`CONTENDED_CORES` cores or steal took at least `CONTENDED_STEAL` of the CPU time.
The tick is 10 ms, so a block much shorter than that is read coarsely: its
reading is kept, and judged with the rest of its arm (see `evaluate.quality`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

PROC_STAT = Path("/proc/stat")
PROC_LOADAVG = Path("/proc/loadavg")

CONTENDED_CORES = 0.5
"""Other work averaging half a core: on a machine the kernel's threads fill, that
half core is taken from the kernel."""
CONTENDED_STEAL = 0.05
"""Five percent of the CPU time stolen by the hypervisor."""

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


def read_load() -> dict[str, Any]:
    """One reading: machine CPU times, this process's CPU time, load average, wall clock.

    Empty where /proc is not there (not Linux): the block then has no contention record.
    """
    try:
        cpu = parse_proc_stat(PROC_STAT.read_text(), float(os.sysconf("SC_CLK_TCK")))
        load1 = float(PROC_LOADAVG.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return {}
    return {
        "wall_s": time.monotonic(),
        "busy_s": cpu.busy_s,
        "steal_s": cpu.steal_s,
        "total_s": cpu.total_s,
        "self_s": time.process_time(),
        "load1": load1,
    }


@attrs.frozen
class Contention:
    """Other work during one block, from its start and end readings."""

    other_cores: float
    """Average cores busy with other processes."""
    steal_share: float
    """The share of the machine's CPU time stolen by the hypervisor."""
    load1: float
    contended: bool


def contention(start: Mapping[str, Any], end: Mapping[str, Any]) -> Contention | None:
    """The block's contention, or None when either reading lacks the load fields."""
    keys = ("wall_s", "busy_s", "steal_s", "total_s", "self_s", "load1")
    if not all(isinstance(r.get(k), int | float) for r in (start, end) for k in keys):
        return None
    wall = end["wall_s"] - start["wall_s"]
    if wall <= 0:
        return None
    other = max(0.0, (end["busy_s"] - start["busy_s"]) - (end["self_s"] - start["self_s"]))
    total = end["total_s"] - start["total_s"]
    steal = (end["steal_s"] - start["steal_s"]) / total if total > 0 else 0.0
    other_cores = other / wall
    return Contention(
        other_cores=other_cores,
        steal_share=steal,
        load1=float(end["load1"]),
        contended=other_cores >= CONTENDED_CORES or steal >= CONTENDED_STEAL,
    )
