"""perfdsl's imports form no cycle, and the evaluation does not reach back into the runtime.

A cycle means two modules that cannot be read, tested or moved apart: each
half's meaning depends on the other's. A function-level import that closes a
cycle hides it from Python's import machinery, not from the reader, so both
the module-level graph and the whole one must be acyclic. The evaluation is a
pure function of a bundle (the spec's `build` needs no GPU): it may read what
the runtime wrote, through `perfdsl.bundle`, never the runtime's own code.
"""

from __future__ import annotations

from pathlib import Path

import import_graph


def _planted(tmp_path: Path, files: dict[str, str]) -> dict[str, import_graph.Imports]:
    root = tmp_path / "perfdsl"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return import_graph.import_graph(root)


def test_a_planted_cycle_is_found_at_the_level_it_stands(tmp_path: Path) -> None:
    graph = _planted(
        tmp_path,
        {
            "a.py": "from perfdsl.b import thing\n",
            "b.py": "def thing():\n    from perfdsl import a\n    return a\n",
            "c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from perfdsl.d import D\n",
            "d.py": "import perfdsl.c\n",
        },
    )
    assert import_graph.cycles(import_graph.module_level_edges(graph)) == [["perfdsl.c", "perfdsl.d"]]
    assert import_graph.cycles(import_graph.all_edges(graph)) == [
        ["perfdsl.a", "perfdsl.b"],
        ["perfdsl.c", "perfdsl.d"],
    ]


def test_no_module_level_import_cycle() -> None:
    graph = import_graph.import_graph()
    assert import_graph.cycles(import_graph.module_level_edges(graph)) == []


def test_no_import_cycle_through_function_level_imports() -> None:
    graph = import_graph.import_graph()
    assert import_graph.cycles(import_graph.all_edges(graph)) == []


def test_evaluate_imports_nothing_from_the_runtime() -> None:
    graph = import_graph.import_graph()
    reaching_back = {
        module: sorted(target for target in targets if target.startswith("perfdsl.runtime"))
        for module, targets in import_graph.all_edges(graph).items()
        if module.startswith("perfdsl.evaluate")
    }
    assert {module: found for module, found in reaching_back.items() if found} == {}


def test_the_bundle_records_import_no_stage_that_makes_or_reads_them() -> None:
    # A file record that names a statistics, evaluation, runtime or report type carries that
    # stage's object through the file and back: the records are the stages' common language.
    graph = import_graph.import_graph()
    stages = ("perfdsl.stats", "perfdsl.evaluate", "perfdsl.runtime", "perfdsl.report")
    reaching_out = {
        module: sorted(target for target in targets if target.startswith(stages))
        for module, targets in import_graph.all_edges(graph).items()
        if module.startswith("perfdsl.bundle")
    }
    assert {module: found for module, found in reaching_out.items() if found} == {}
