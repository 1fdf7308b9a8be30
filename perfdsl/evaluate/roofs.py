"""The roof a kernel is held to: measured read, write and copy roofs, combined for its mix.

The runtime times three roofs beside a study's kernels at every shape
(`kernels/copy.py`): read (a sum), write (a fill) and copy. Each roof's
bandwidth is its bytes (what it asks to read and write, as a byte model counts
them) over its fastest block's median time (see `measure_roofs`). On a CPU a store first reads its line
(write-allocate), so the write and copy roofs' time includes that extra
traffic; a studied kernel's writes pay it too, so comparing counted-as-modelled
bytes with counted-as-modelled bytes is fair, where comparing with a copy roof
alone was not: a kernel that reads three bytes for every two it writes runs
faster than a copy, without being "above" any roof it really has.

A kernel whose bytes are a share rho reads is compared with the roof for that
mix. Its traffic is split into a 1:1 part and a pure part (reads when rho > 1/2,
writes below), each moving at the rate measured for that pattern, and the
times add (a harmonic combination by bytes):

    rho >= 1/2:  1 / R = 2 (1 - rho) / R_copy + (2 rho - 1) / R_read
    rho <  1/2:  1 / R = 2 rho / R_copy + (1 - 2 rho) / R_write

At rho = 1/2 this is the measured copy roof itself, not a combination of read
and write roofs: reads and writes in one stream overlap in a way two separate
streams do not show, and the copy measures exactly that. At rho = 1 and 0 it is
the read and write roof. Without a read or write roof (an older roof module),
the copy roof stands for it, and the basis says so.

A roof is compared only within its cache regime: a kernel whose rotated working
set fits in the last-level cache is held to roofs that fit there too (measured
at the same shape), never to a DRAM roof, and the other way round.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from perfdsl.bundle.arms import ROOF_ARM, ROOF_ARMS
from perfdsl.bundle.evaluation.mechanism import MixRoof, Roof

ROOF_MARGIN = 0.05
"""The least margin above a roof before a kernel is "above" it: a measured roof is itself noisy."""


def measure_roofs(
    block_medians_ns: Mapping[str, Sequence[float]],
    set_bytes: Mapping[str, float],
    regimes: Mapping[str, str],
) -> dict[str, Roof]:
    """Each roof timed at this shape: bytes over its fastest block's median time, with its spread.

    A roof is what the machine can do, and interference only ever slows a block down, so
    the roof is its fastest block (STREAM likewise reports the best of its trials); the
    median is kept beside it. A kernel's own bandwidth is taken at its median, so a
    contended kernel only falls further below the roof, never above it.
    """
    roofs = {}
    for arm in ROOF_ARMS:
        medians = np.sort(np.asarray(block_medians_ns.get(arm, ()), dtype=float))
        moved = set_bytes.get(arm)
        if medians.size == 0 or not moved or medians[0] <= 0:
            continue
        spread = float(medians[1] / medians[0] - 1.0) if medians.size > 1 else 0.0
        median = float(np.median(medians))
        roofs[arm] = Roof(
            arm, float(moved) / (medians[0] * 1e-9), spread, regimes.get(arm), float(moved) / (median * 1e-9)
        )
    return roofs


def mix_roof(read_share: float, roofs: Mapping[str, Roof]) -> MixRoof | None:
    """The roof for a kernel whose bytes are `read_share` reads, or None without a copy roof."""
    if not 0.0 <= read_share <= 1.0:
        raise ValueError(f"a read share is between 0 and 1, not {read_share}")
    copy = roofs.get(ROOF_ARM)
    if copy is None:
        return None
    pure_arm = "read" if read_share >= 0.5 else "write"
    pure_share = abs(2.0 * read_share - 1.0)
    if pure_share == 0.0:
        return MixRoof(copy.bytes_per_s, copy.spread, copy.regime, "copy roof (1:1 reads and writes)")
    pure = roofs.get(pure_arm)
    if pure is None:
        return MixRoof(
            copy.bytes_per_s,
            copy.spread,
            copy.regime,
            f"copy roof (no {pure_arm} roof was timed: it stands for the {pure_share:.0%} pure {pure_arm}s)",
        )
    rate = 1.0 / ((1.0 - pure_share) / copy.bytes_per_s + pure_share / pure.bytes_per_s)
    regime = copy.regime if copy.regime == pure.regime else None
    return MixRoof(
        rate,
        max(copy.spread, pure.spread),
        regime,
        f"{1.0 - pure_share:.0%} at the copy roof, {pure_share:.0%} at the {pure_arm} roof (by bytes)",
    )
