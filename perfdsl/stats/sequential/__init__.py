"""Anytime-valid stopping: measure pairs of blocks until the verdict is decided.

`boundary` is the confidence sequence's formula (numpy only, so `check` can
size a study's cap without loading the statistics); `rule` is the stopping
rule a run and its evaluation both apply to the pair log-ratios.
"""
