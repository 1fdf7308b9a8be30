"""Executing a study: resolving references, targets, timing, correctness and the results bundle."""
