"""The process Nsight Compute profiles: one operation's variants, called once each.

`python -m perfdsl.runtime.counters.driver REQUEST_JSON`, started by
`ncu.collect` under `ncu --profile-from-start off`. It resolves the study's
references, prepares one buffer set for the shape the way the timing harness does
(`prepare_arms` on the cuda target), calls every variant once unprofiled (JIT
compilation, first-touch allocation and lazily allocated scratch stay out of the
counts), then, for each variant in order, opens a profiler range, launches the
marker kernel and calls the variant once. The marker is what lets `attribution.attribute`
tell the variants' launches apart in ncu's CSV. The last line printed is
`ncu.DRIVER_DONE`: without it the caller knows the rows are partial.

Any failure here is an ordinary traceback and a non-zero exit: the caller reports it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from numba import cuda

from perfdsl.kernel import Reference, Variant
from perfdsl.runtime.counters.ncu import DRIVER_DONE
from perfdsl.runtime.resolve import resolve
from perfdsl.runtime.targets import make_target
from perfdsl.runtime.timing import prepare_arms


@cuda.jit
def perfdsl_counters_marker() -> None:
    """Deliberately empty: its launch separates one variant's launches from the next's."""
    return


def main(argv: list[str]) -> int:
    """Run the request in argv[1] (ncu.CounterRequest as JSON)."""
    request = json.loads(argv[1])
    study_dir = Path(request["study_dir"])
    reference = resolve(request["reference"], Reference, study_dir)
    variants = [resolve(ref, Variant, study_dir) for _, ref in request["arms"]]
    target = make_target("cuda")
    arms = prepare_arms(target, reference, variants, request["sizes"], request["dtype"], requested_sets=1)
    marker = perfdsl_counters_marker[1, 1, target.stream]
    target.run(marker)
    for arm in arms:
        target.run(arm.calls[0])
    for arm in arms:
        cuda.profile_start()
        marker()
        target.run(arm.calls[0])
        cuda.profile_stop()
    print(DRIVER_DONE, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
