"""Anytime-valid stopping: measure pairs of blocks until the verdict is decided.

`boundary` is the confidence sequence's formula (`math` alone where `check`
sizes a study's cap, numpy only for arrays of looks); `rule` is the stopping
rule a run and its evaluation both apply to the pair log-ratios.
"""
