"""Evaluation: the numbers that turn raw samples into verdicts.

One job per module, each a set of pure functions over numpy arrays and frozen
records, with no knowledge of the study AST or the bundle layout:

    compare   ratio of block medians, bootstrap CI, rank test, verdict, MDE,
              weighted combination over shapes
    quality   measurement-quality findings (codes PQxxx) with explanations
    amdahl    Amdahl's bound and its reconciliation with the end-to-end speedup
    load      binomial p99 check, per-rate summary, goodput search
    value     value and capacity from the measured end-to-end effect

Nothing is imported here, so `import perfdsl.evaluate` stays cheap; import the
module you need (`from perfdsl.evaluate import compare`).
"""
