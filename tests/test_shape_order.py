"""A shape's sizes in the order the study declares its symbols, whatever order a file kept."""

from __future__ import annotations

from perfdsl.parse import parse
from perfdsl.shape_order import declared_order, ordered, shape_label, shape_words
from perfdsl.source import Source

STUDY = """study s {
  workload {
    shapes (M, K) in [(4096, 64)]
  }
  evidence correctness { adversarial (M, K) in [(2, 5)] }
  limit regression "short rows" { shapes (M, K, B) in [(8, 2, 1)] }
}
"""


def test_the_workload_s_symbols_come_first_then_those_only_others_name() -> None:
    study = parse(Source("s.perf", STUDY)).study
    assert study is not None
    assert declared_order(study) == ("M", "K", "B")
    assert declared_order(None) == ()


def test_sizes_read_back_sorted_are_written_in_the_declared_order() -> None:
    # results.json and evaluation.json keep their keys sorted: the shape comes back K first.
    read_back = {"K": 64, "M": 4096}
    assert ordered(read_back, ("M", "K")) == [("M", 4096), ("K", 64)]
    assert shape_label(read_back, ("M", "K")) == "4096x64"
    assert shape_words(read_back, ("M", "K"), " x ", "=") == "M=4096 x K=64"
    # A symbol the study does not declare keeps its place after the declared ones.
    assert shape_label({"Z": 1, "K": 2, "M": 3}, ("M", "K")) == "3x2x1"
