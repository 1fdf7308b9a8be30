"""PD311's static memory estimate: a buffer is the product of the shape's sizes unless the study's
own byte model says its calls move less, as a gather into a fixed table does."""

from __future__ import annotations

from bundled_studies import ROOT

from perfdsl.commands.check import diagnose
from perfdsl.source import Source

STUDY = (ROOT / "studies" / "rmsnorm_fusion.perf").read_text(encoding="utf-8")
GATHER_SHAPES = "shapes    (M, N) in [(64, 4096), (256, 8192), (8388608, 67108864)]"
"""M lookups into a table of N floats: no buffer holds M x N elements."""


def _codes(text: str) -> list[str]:
    return [d.code for d in diagnose(Source("gather.perf", text))]


def _gather(bytes_line: str) -> str:
    text = STUDY.replace("shapes    (M, N) in [(64, 4096), (256, 8192), (4096, 8192)]", GATHER_SHAPES)
    return text.replace("bytes     baseline 4*(5*M*N + 2*M + N), change 4*(2*M*N + N)", bytes_line)


def test_a_gather_whose_byte_model_moves_little_is_not_refused_for_memory() -> None:
    # Read as M x N elements a buffer, the shape needed 29 million GiB; the calls move 0.7 GB.
    assert "PD311" not in _codes(_gather("bytes     baseline 20*M + 4*N, change 16*M + 4*N"))


def test_a_byte_model_as_large_as_the_product_leaves_the_estimate_as_it_was() -> None:
    assert "PD311" in _codes(_gather("bytes     baseline 4*(5*M*N + 2*M + N), change 4*(2*M*N + N)"))
    assert "PD311" not in _codes(STUDY)
