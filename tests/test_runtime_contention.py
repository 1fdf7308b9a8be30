"""Other work during a block, from /proc/stat: parsing, the live read, and the judgement (PQ009)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from perfdsl.bundle.sampling import Block, LoadReading
from perfdsl.evaluate.contention import contended_blocks, contention, unresolved_blocks
from perfdsl.evaluate.quality import check_contention, summarize_contention
from perfdsl.runtime.contention import parse_proc_stat, read_load

# A real /proc/stat, trimmed: user nice system idle iowait irq softirq steal guest guest_nice.
PROC_STAT = """cpu  353072 20523 41743 199923 733 0 321 235 0 0
cpu0 176000 10000 20000 100000 400 0 200 100 0 0
cpu1 177072 10523 21743 99923 333 0 121 135 0 0
intr 1 2 3
ctxt 123
"""


def test_the_aggregate_cpu_line_is_parsed_into_seconds():
    cpu = parse_proc_stat(PROC_STAT, ticks_per_s=100.0)
    assert cpu.busy_s == pytest.approx((353072 + 20523 + 41743 + 0 + 321) / 100)
    assert cpu.steal_s == pytest.approx(2.35)
    assert cpu.total_s == pytest.approx((353072 + 20523 + 41743 + 199923 + 733 + 321 + 235) / 100)


def test_a_stat_without_the_aggregate_line_is_refused():
    with pytest.raises(ValueError, match="no aggregate"):
        parse_proc_stat("cpu0 1 2 3 4\nintr 5\n")


@pytest.mark.skipif(not Path("/proc/stat").exists(), reason="Linux only")
def test_the_live_reading_moves_forward_and_sees_this_process_busy():
    start = read_load()
    assert start is not None
    # 0.3 s of this process's own CPU time, however busy the machine (a wall-clock
    # deadline would give this process less than that on a loaded machine).
    give_up = start.wall_s + 60.0
    while read_load().self_s - start.self_s < 0.3 and read_load().wall_s < give_up:
        sum(range(1000))
    end = read_load()
    assert end is not None
    assert end.total_s > start.total_s and end.self_s - start.self_s > 0.2
    found = contention(start, end)
    assert found is not None and found.resolved
    # This process's own time is not other work: whatever else ran, at most the other cores.
    assert 0.0 <= found.other_cores <= (os.cpu_count() or 1)


def _reading(wall: float, busy: float, own: float, steal: float = 0.0) -> dict[str, float]:
    return {
        "wall_s": wall,
        "busy_s": busy,
        "steal_s": steal,
        "total_s": 2 * wall,
        "self_s": own,
        "load1": 1.0,
    }


def _block(arm: str, begin: float, seconds: float, other: float, steal: float = 0.0) -> dict[str, object]:
    # `other` cores of other processes while this process kept one core busy.
    return {
        "arm": arm,
        "start": _reading(begin, 100.0 * begin, begin),
        "end": _reading(
            begin + seconds, 100.0 * begin + seconds * (1 + other), begin + seconds, steal * 2 * seconds
        ),
    }


def test_a_block_is_contended_when_other_work_takes_half_a_core_or_steal_five_percent():
    quiet = contention(*_pieces(_block("A", 0, 1.0, 0.1)))
    busy = contention(*_pieces(_block("A", 0, 1.0, 0.6)))
    stolen = contention(*_pieces(_block("A", 0, 1.0, 0.0, 0.06)))
    assert quiet is not None and not quiet.contended and quiet.other_cores == pytest.approx(0.1)
    assert busy is not None and busy.contended
    assert stolen is not None and stolen.contended and stolen.steal_share == pytest.approx(0.06)


def _records(blocks: list[dict[str, object]]) -> list[Block]:
    """The block log as the evaluation reads it from results.json."""
    return [Block.from_json(b) for b in blocks]


def _loads(start: object, end: object) -> tuple[LoadReading, LoadReading]:
    """Two readings as results.json's block log holds them."""
    return LoadReading.from_json(start), LoadReading.from_json(end)


def _pieces(block: dict[str, object]) -> tuple[LoadReading, LoadReading]:
    return _loads(block["start"], block["end"])


def test_short_blocks_are_judged_together_not_one_tick_at_a_time():
    # Eight 5 ms blocks; one tick (10 ms) of other work landed in one of them: 2 cores
    # for that block alone, a quarter core over the eight.
    short = [_block("A", i, 0.005, 2.0 if i == 0 else 0.0) for i in range(8)]
    readings = [contention(*_pieces(b)) for b in short]
    assert readings[0].contended  # type: ignore[union-attr]
    assert contended_blocks(readings) == [False] * 8  # type: ignore[arg-type]
    assert check_contention(_records(short), "op s") == ()


def test_short_blocks_too_short_together_to_resolve_are_not_called_contended():
    # Eight 0.7 ms blocks (a quick run's): one tick of other work in each reads as 14 cores,
    # more than the machine has; 5.6 ms in all is under one tick, so nothing can be told.
    tiny = [_block("A", i, 0.0007, 0.01 / 0.0007) for i in range(8)]
    readings = [contention(*_pieces(b)) for b in tiny]
    assert sum(readings[1:], readings[0]).other_cores > 2  # type: ignore[arg-type, union-attr]
    assert contended_blocks(readings) == [False] * 8  # type: ignore[arg-type]
    # The same other work over blocks that together resolve it is contended.
    longer = [_block("A", i, 0.03, 1.0) for i in range(8)]
    assert contended_blocks([contention(*_pieces(b)) for b in longer]) == [True] * 8  # type: ignore[arg-type, misc]


def test_blocks_too_short_to_resolve_are_counted_as_unread_not_as_quiet():
    # A quick run's six blocks of 0.7 ms: "0 of 6 contended" called them quiet while another
    # process shared the core; the tick could not tell.
    tiny = [contention(*_pieces(_block("A", i, 0.0007, 0.0))) for i in range(6)]
    assert unresolved_blocks(tiny) == 6  # type: ignore[arg-type]
    longer = [contention(*_pieces(_block("A", i, 0.03, 0.0))) for i in range(8)]
    assert unresolved_blocks(longer) == 0  # type: ignore[arg-type]
    one_long = [*tiny, contention(*_pieces(_block("A", 6, 1.0, 0.0)))]
    assert unresolved_blocks(one_long) == 6  # type: ignore[arg-type]


def test_contended_blocks_are_a_finding_and_the_summary_says_the_verdict_rests_on_them():
    blocks = [_block("baseline", 0, 1.0, 0.9), _block("change", 1, 1.0, 0.0), _block("copy", 2, 1.0, 0.0)]
    (finding,) = check_contention(_records(blocks), "normalize 4096x8192")
    assert finding.code == "PQ009" and finding.subject == "normalize 4096x8192 baseline"
    assert "1 of 1 blocks" in finding.message
    summary = summarize_contention([("normalize 4096x8192", _records(blocks), True)])
    assert (summary.blocks, summary.contended, summary.verdicts_rest_on_contended) == (3, 1, True)
    assert summary.shapes == ("normalize 4096x8192",)
    roof_only = [_block("copy", 0, 1.0, 0.9), _block("baseline", 1, 1.0, 0.0)]
    assert not summarize_contention([("s", _records(roof_only), True)]).verdicts_rest_on_contended
    unloaded = _records([{"arm": "A", "start": {}, "end": {}}])
    assert summarize_contention([("s", unloaded, True)]).missing


def test_the_run_s_summary_counts_blocks_too_short_to_read_apart_from_the_quiet_ones():
    # A new user's page 1 said "27 of 48 timed blocks competed": the other 21 were too short to read.
    long_busy = [_block(arm, i, 1.0, 0.9) for i, arm in enumerate(("baseline", "change"))]
    tiny = [_block(arm, 10 + i, 0.0007, 0.0) for i in range(6) for arm in ("baseline", "change")]
    summary = summarize_contention(
        [("op 8x32768", _records(tiny), True), ("op 32x131072", _records(long_busy), True)]
    )
    assert (summary.blocks, summary.contended, summary.unresolved) == (14, 2, 12)
