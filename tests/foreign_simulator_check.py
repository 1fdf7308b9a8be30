"""The foreign-implementation contract under Numba's CUDA simulator, in a child process.

Run by `test_foreign_contract.py` with NUMBA_ENABLE_CUDASIM=1 (the simulator must
be chosen before numba.cuda is first imported). Prints one JSON object: how often
each variant was bound, how many calls were prepared and timed, and the
correctness verdicts of the harness's own check.
"""

from __future__ import annotations

import json

import foreign_fixtures

from kernels.rmsnorm import reference
from perfdsl.runtime.correctness import check_variant
from perfdsl.runtime.targets import make_target
from perfdsl.runtime.timing import prepare_arms


def main() -> None:
    target = make_target("cudasim")
    shape = {"M": 5, "N": 33}
    arms = prepare_arms(target, reference, [foreign_fixtures.rmsnorm_cai], shape, "float32", requested_sets=3)
    bound_after_prepare = len(foreign_fixtures.BINDINGS)
    for arm in arms:
        for _ in range(4):
            for call in arm.calls:
                target.time(call)
    bound_after_timing = len(foreign_fixtures.BINDINGS)
    verdicts = {}
    for variant in (foreign_fixtures.rmsnorm_cai, foreign_fixtures.rmsnorm_cai_partial):
        result = check_variant(
            reference, variant, target, [shape], [{"M": 1, "N": 1}], [0, 1], "float32", {"rel_l2": 1e-5}
        )
        verdicts[variant.name] = [case.passed for case in result.cases]
    print(
        json.dumps(
            {
                "sets": len(arms[0].calls),
                "bound_after_prepare": bound_after_prepare,
                "bound_after_timing": bound_after_timing,
                "handles": sorted(set(foreign_fixtures.BINDINGS[:bound_after_timing])),
                "verdicts": verdicts,
            }
        )
    )


if __name__ == "__main__":
    main()
