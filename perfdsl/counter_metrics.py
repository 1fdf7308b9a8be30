"""Which Nsight Compute metrics count each measure, and how they become the measure's number.

The study speaks of measures (`vocabulary.MEASURES`: bytes, bank conflicts, ...);
ncu speaks of metrics (`dram__bytes_read.sum`, ...). This module is the one place
that maps one onto the other, both ways: the metrics to ask ncu for, and, from an
arm's aggregated metrics, one number per measure in the study's words. It is
outside the runtime because `check` reads it too, for an imported profile
(`perfdsl.imports.counted`), and `check` loads no runtime module.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

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


def metrics_for(measures: Iterable[str]) -> tuple[str, ...]:
    """The metrics to collect for a study's measures: the kernel time first, no repeats."""
    metrics = [TIME_METRIC]
    for measure in measures:
        metrics.extend(m for m in MEASURE_METRICS[measure] if m not in metrics)
    return tuple(metrics)


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
