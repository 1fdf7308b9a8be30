"""The report's steady-state table prints the contention evaluation.json holds: it judges nothing.

The table once judged results.json's block log itself (`evaluate.quality.block_contention`),
so the page could disagree with the evaluation whose findings it prints. Here the block log
says every block competed with other work while the evaluation (planted) says one of four:
the page must say what the evaluation says.
"""

from __future__ import annotations

from types import SimpleNamespace

from perfdsl.bundle.evaluation.kernels import ArmContention
from perfdsl.bundle.sampling import LoadReading
from perfdsl.report.context import Blocks
from perfdsl.report.timing import _steady_state

START = LoadReading(wall_s=0.0, busy_s=0.0, steal_s=0.0, total_s=0.0, self_s=0.0, load1=2.0)
END = LoadReading(wall_s=1.0, busy_s=2.0, steal_s=0.0, total_s=2.0, self_s=0.1, load1=2.0)
"""Both cores busy for the block's whole second, a tenth of it this process's own: other work."""


def _table(contention: tuple[ArmContention, ...]) -> str:
    block = SimpleNamespace(arm="baseline", start=SimpleNamespace(load=START), end=SimpleNamespace(load=END))
    shape = SimpleNamespace(
        label="64x64",
        limit=False,
        warmups=(),
        regimes={"baseline": "dram", "change": "dram"},
        buffer_bytes={"baseline": 1024, "change": 1024},
        allocations={"baseline": 1, "change": 1},
        blocks=(block,) * 4,
    )
    results = SimpleNamespace(operation=lambda name: SimpleNamespace(shapes=(shape,)))
    op = SimpleNamespace(
        name="op", shapes=(SimpleNamespace(label="64x64", contention=contention),), limits=()
    )
    out = Blocks()
    quiet = SimpleNamespace(contended=SimpleNamespace(verdicts_rest_on_contended=False))
    _steady_state(SimpleNamespace(results=results, evaluation=quiet), op, out)  # type: ignore[arg-type]
    return "\n".join(out.parts)


def test_the_planted_block_log_is_contended() -> None:
    from perfdsl.evaluate import quality

    block = SimpleNamespace(arm="baseline", start=SimpleNamespace(load=START), end=SimpleNamespace(load=END))
    assert [flag for _, flag in quality.block_contention([block] * 4)["baseline"]] == [True] * 4


def test_the_table_prints_the_evaluations_counts() -> None:
    table = _table((ArmContention("baseline", 4, 1), ArmContention("change", 4, 0)))
    assert "| 64x64 | baseline | — | DRAM | 1.02 kB | 1 of 4 |" in table
    assert "| 64x64 | change | — | DRAM | 1.02 kB | 0 of 4 |" in table


def test_an_arm_the_evaluation_has_no_readings_for_prints_none() -> None:
    assert "| 64x64 | change | — | DRAM | 1.02 kB | — |" in _table((ArmContention("baseline", 4, 1),))


def test_blocks_too_short_to_read_are_not_printed_as_quiet() -> None:
    table = _table((ArmContention("baseline", 6, 0, 6), ArmContention("change", 6, 1, 2)))
    assert (
        "| 64x64 | baseline | — | DRAM | 1.02 kB | not read: 6 blocks too short for the 10 ms tick |" in table
    )
    assert "| 64x64 | change | — | DRAM | 1.02 kB | 1 of 6 (2 too short to read) |" in table
