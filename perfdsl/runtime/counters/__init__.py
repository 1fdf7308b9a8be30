"""Counted mechanism evidence: Nsight Compute's hardware counters for one shape of an operation.

A study's mechanism is a claim about one physical quantity (`vocabulary.MEASURES`).
Without a profiler the run can only *model* it (the study's formulas); on a GPU
with Nsight Compute (`ncu`) on the PATH it can *count* it, in a way that keeps
the counts comparable with the timed samples (../shared/research/performance.md §3).
One job per module, in the order the evidence flows (which metrics count each
measure is `perfdsl.counter_metrics`, shared with imported profiles):

    names        Numba's mangled kernel names: ncu's kernel filter, the name in a CSV row
    ncu_csv      ncu's `--csv --page raw` output read into launches
    attribution  launches split at the marker kernel into each variant's counts
    ncu          the ncu command around the driver, run to a CounterResult (`collect`)
    driver       the process ncu profiles: the variants called once each between markers
    attach       the run's step: the counted shape's entries for results.json

A missing `ncu`, a permission error (ERR_NVGPUCTRPERM), a timeout or an
unreadable CSV is never an exception: the result is `missing`, saying why.

Nothing is imported here, so `import perfdsl.runtime.counters` stays cheap (the
driver imports numba); import the module you need
(`from perfdsl.runtime.counters.attach import attach_counters`).
"""
