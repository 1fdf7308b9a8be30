"""Evaluation: the numbers that turn raw samples into verdicts.

The statistics: one job per module, each a set of pure functions over numpy
arrays and frozen records, with no knowledge of the study AST or the bundle layout:

    compare   ratio of block medians, bootstrap CI, rank test, verdict, MDE,
              weighted combination over shapes
    quality   measurement-quality findings (codes PQxxx) with explanations
    amdahl    Amdahl's bound and its reconciliation with the end-to-end speedup
    value     value and capacity from the measured end-to-end effect

(the load statistics, which the runtime's goodput search also needs, are in
`perfdsl.stats.load`), and the modules that apply them to one bundle, `evaluation.evaluate(bundle)`:

    inputs        verify and read the bundle; sample CSVs to block medians
    kernels       per shape comparisons, the weighted effect, quality findings
    mechanism     modelled/counted quantities, bandwidth against the roof, static counts
    correctness   per arm pass/fail, worst errors, failing cases
    end_to_end    request time, f, s and Amdahl's reconciliation
    load_curve    offered-load curve and goodput recomputed from raw records
    predictions   every `predict` line: confirmed, refuted or inconclusive
    decision      the declared decision against the evidence
    registration  the registered `predict` hash, rechecked
    evaluation    the whole evaluation, written as evaluation.json

The records they build are evaluation.json's, in `perfdsl.bundle.evaluation`.

Nothing is imported here, so `import perfdsl.evaluate` stays cheap; import the
module you need (`from perfdsl.evaluate import compare`).
"""
