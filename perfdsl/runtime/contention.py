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
The tick is 10 ms, so a block shorter than `RESOLVED_S` is read coarsely: its
reading is kept, and judged together with the arm's other short blocks.
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
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
RESOLVED_S = 0.2
"""A block at least 20 ticks long: its own reading resolves other work to about 5 %."""

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
    """Other work during one block (or several, summed), from start and end readings."""

    wall_s: float
    other_s: float
    """CPU seconds of other processes."""
    steal_s: float
    total_s: float
    """The machine's CPU seconds, all states."""
    load1: float

    @property
    def other_cores(self) -> float:
        """Average cores busy with other processes."""
        return self.other_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def steal_share(self) -> float:
        """The share of the machine's CPU time stolen by the hypervisor."""
        return self.steal_s / self.total_s if self.total_s > 0 else 0.0

    @property
    def resolved(self) -> bool:
        """Long enough for the clock tick to resolve it (RESOLVED_S)."""
        return self.wall_s >= RESOLVED_S

    @property
    def contended(self) -> bool:
        """Other work at least CONTENDED_CORES, or steal at least CONTENDED_STEAL."""
        return self.other_cores >= CONTENDED_CORES or self.steal_share >= CONTENDED_STEAL

    def __add__(self, other: Contention) -> Contention:
        return Contention(
            self.wall_s + other.wall_s,
            self.other_s + other.other_s,
            self.steal_s + other.steal_s,
            self.total_s + other.total_s,
            max(self.load1, other.load1),
        )


def contention(start: Mapping[str, Any], end: Mapping[str, Any]) -> Contention | None:
    """The block's contention, or None when either reading lacks the load fields."""
    keys = ("wall_s", "busy_s", "steal_s", "total_s", "self_s", "load1")
    if not all(isinstance(r.get(k), int | float) for r in (start, end) for k in keys):
        return None
    wall = end["wall_s"] - start["wall_s"]
    if wall <= 0:
        return None
    return Contention(
        wall_s=wall,
        other_s=max(0.0, (end["busy_s"] - start["busy_s"]) - (end["self_s"] - start["self_s"])),
        steal_s=end["steal_s"] - start["steal_s"],
        total_s=end["total_s"] - start["total_s"],
        load1=float(end["load1"]),
    )


def contended_blocks(readings: Sequence[Contention]) -> list[bool]:
    """Which of one arm's blocks competed with other work.

    A block long enough for the tick to resolve is judged on its own reading; the
    shorter ones (a quick run's blocks last milliseconds, and one 10 ms tick would
    read as several cores) are judged together, on the sum of their readings.
    """
    short = [r for r in readings if not r.resolved]
    together = sum(short[1:], short[0]).contended if short else False
    return [r.contended if r.resolved else together for r in readings]
