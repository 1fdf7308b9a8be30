"""The kernel timing section says when baseline and change took turns on each other's buffers."""

from __future__ import annotations

import json
from pathlib import Path

from evaluate_fixtures import make_bundle, rendered_markdown

from perfdsl.bundle.files import replace_file

TURNS = "(each arm's own; baseline and change took turns on both, block by block)"


def _with_allocations(bundle: Path, allocations: int) -> Path:
    """The bundle with every rotation entry stating `allocations` (1: as before results/14) and its
    arm's regime (the steady-state table's rows), sealed again."""
    results = json.loads((bundle / "results.json").read_text())
    for op in results["operations"]:
        for shape in op["shapes"]:
            timing = shape["timing"]
            for entry in timing["rotation"]:
                if allocations > 1:
                    entry["allocations"] = allocations
            timing["regime"] = {entry["arm"]: "dram" for entry in timing["rotation"]}
    replace_file(bundle, "results.json", json.dumps(results).encode())
    return bundle


def test_the_steady_state_table_says_the_arms_took_turns_only_where_they_did(tmp_path: Path) -> None:
    took_turns = _with_allocations(make_bundle(tmp_path / "turns", change_unavoidable=8.0), 2)
    assert TURNS in rendered_markdown(took_turns)
    # A bundle from before results/14: each arm ran on its own buffers, and the page says nothing new.
    alone = rendered_markdown(_with_allocations(make_bundle(tmp_path / "own", change_unavoidable=8.0), 1))
    assert "Steady state and machine" in alone and TURNS not in alone
