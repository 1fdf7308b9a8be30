"""The fixed words a study chooses from, and what each mechanism is observed by.

Kept apart from the checker because the later stages read the same words: the
runtime measures the quantities named here and the report explains each
mechanism by the quantity that observes it. Adding a word here is the only
change a new choice needs.
"""

from __future__ import annotations

import re

from perfdsl import targets

DECISIONS = ("adopt", "reject", "investigate")

# Each mechanism is a claim about one physical quantity; evidence that does not
# measure that quantity cannot confirm the claim (PD401).
MECHANISM_MEASURES = {
    "bytes_removed": "bytes",
    "launches_removed": "launches",
    "bank_conflicts_reduced": "bank_conflicts",
    "active_lanes_increased": "active_lanes",
    # Cycles warps wait on the result of a dependent instruction: what a long
    # serial chain of adds costs, and what splitting it into several removes.
    "dependency_chains_shortened": "dependency_stalls",
    "matrix_instructions_selected": "tensor_pipe",
}
MECHANISMS = tuple(MECHANISM_MEASURES)
MEASURES = (
    "bytes",
    "launches",
    "bank_conflicts",
    "active_lanes",
    "dependency_stalls",
    "tensor_pipe",
)

DTYPES = ("float64", "float32", "float16", "bfloat16", "int8", "int16", "int32", "int64", "uint8")
# Unit roundoff of the reduced-precision types: a tolerance tighter than this
# can only be met by computing in a wider type (PD404).
REDUCED_PRECISION_ROUNDOFF = {"float16": 2.0**-11, "bfloat16": 2.0**-8}
# Error metrics whose tolerance is relative to the values (so roundoff bounds it).
RELATIVE_ERROR_METRICS = ("rel_l2", "max_rel")
ERROR_METRICS = ("rel_l2", "abs_l2", "max_rel", "max_abs", "ulp")

TARGETS = targets.NAMES
POISONS = ("nan", "inf", "sentinel")
STOPS = ("fixed", "sequential")
"""`stop` in `evidence timing` and `probe` in `evidence end_to_end`: a stated count (of blocks,
of requests a load probe), or until the verdict (the probe's SLO question) is decided."""
ARRIVALS = ("poisson", "uniform")
LIMIT_KINDS = ("regression", "unsupported", "sensitivity", "memory", "risk")

# The metric an objective bounds, and the dimension its bound must have.
OBJECTIVE_METRICS = {"latency": "time", "throughput": "rate", "goodput": "rate"}
STATISTICS = ("mean", "median", "max")
# What "did you mean" offers for a misspelt statistic.
STATISTIC_EXAMPLES = ("p50", "p90", "p95", "p99", *STATISTICS)
_PERCENTILE = re.compile(r"p[1-9][0-9]?")
"""`p1` to `p99`. `p0` and `p100` bound no share of the requests a probe can count: the load test
asks whether the share over the SLO is below 1 - p, which at p100 no number of requests shows
(`check` ended in a traceback sizing that probe); the slowest request is `max`."""

PREDICTION_STATISTICS = ("ratio",)
AMDAHL = "amdahl"
APPLICATION_QUANTITIES = ("time", "throughput", "goodput")
OPERATION_QUANTITIES = ("time", *MEASURES)
# What a rejected hypothesis may cite as its evidence (`evidence normalize.bandwidth`):
# anything a prediction can be on, and two things every run collects beside them,
# because an alternative is often ruled out by a quantity nobody predicted.
BANDWIDTH = "bandwidth"
"""Achieved bandwidth (modelled bytes over median time) against the copy roof of the same run."""
STATIC = "static"
"""Counts read from the compiled code: registers, shared memory, global loads and stores."""
OPERATION_EVIDENCE = (*OPERATION_QUANTITIES, BANDWIDTH, STATIC)
APPLICATION_EVIDENCE = APPLICATION_QUANTITIES


def is_statistic(word: str) -> bool:
    """`p99`, `p50`, `mean`: the statistics a latency objective or SLO may bound."""
    return word in STATISTICS or _PERCENTILE.fullmatch(word) is not None
