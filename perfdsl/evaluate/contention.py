"""Whether a block competed with other work, judged from the machine's load at its two ends.

The sampler reads the machine's CPU times at each block's start and end
(perfdsl/runtime/contention.py: /proc/stat's busy and steal time, this
process's own CPU time, the load average), and results.json keeps them as
`LoadReading`s. Other work during the block is the machine's busy time minus
this process's, as an average number of cores (`other_cores`); steal is the
hypervisor's share given to other guests. A block is **contended** when other
work averaged at least `CONTENDED_CORES` cores or steal took at least
`CONTENDED_STEAL` of the CPU time. The tick is 10 ms, so a block shorter than
`RESOLVED_S` is read coarsely: its reading is kept, and judged together with
the arm's other short blocks, when together they are long enough to resolve.
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from perfdsl.bundle.sampling import LoadReading

CONTENDED_CORES = 0.5
"""Other work averaging half a core: on a machine the kernel's threads fill, that
half core is taken from the kernel."""
CONTENDED_STEAL = 0.05
"""Five percent of the CPU time stolen by the hypervisor."""
RESOLVED_S = 0.2
"""A block at least 20 ticks long: its own reading resolves other work to about 5 %."""


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


def contention(start: LoadReading, end: LoadReading) -> Contention | None:
    """The block's contention from its start and end readings, or None when no time passed."""
    wall = end.wall_s - start.wall_s
    if wall <= 0:
        return None
    return Contention(
        wall_s=wall,
        other_s=max(0.0, (end.busy_s - start.busy_s) - (end.self_s - start.self_s)),
        steal_s=end.steal_s - start.steal_s,
        total_s=end.total_s - start.total_s,
        load1=float(end.load1),
    )


def contended_blocks(readings: Sequence[Contention]) -> list[bool]:
    """Which of one arm's blocks competed with other work.

    A block long enough for the tick to resolve is judged on its own reading; the
    shorter ones (a quick run's blocks last milliseconds, and one 10 ms tick would
    read as several cores) are judged together, on the sum of their readings, and
    only where that sum is itself long enough to resolve: a quick run's eight blocks
    of under a millisecond each read "3.46 cores of other processes" on a 2-core
    machine, and "100 % stolen" from a single tick of steal, neither of which a
    machine can do. Too short to resolve, they are not called contended.
    """
    total = _short_together(readings)
    together = total is not None and total.resolved and total.contended
    return [r.contended if r.resolved else together for r in readings]


def unresolved_blocks(readings: Sequence[Contention]) -> int:
    """How many of one arm's blocks `contended_blocks` could not judge: too short to resolve
    alone, and too short together. They read as not contended, which they are not shown to be."""
    total = _short_together(readings)
    return sum(not r.resolved for r in readings) if total is not None and not total.resolved else 0


def _short_together(readings: Sequence[Contention]) -> Contention | None:
    """The readings too short to resolve alone, summed (None: there are none)."""
    short = [r for r in readings if not r.resolved]
    return sum(short[1:], short[0]) if short else None
