"""The arm names a bundle's files use are spelled once, in perfdsl/bundle/arms.py.

The runtime writes them and the evaluation, the report and the history read
them back: a module that spells an arm again (a constant of its own, or the
literal names) is one rename away from reading a file that no longer holds it.
"""

from __future__ import annotations

import ast

import import_graph

from perfdsl.bundle import arms

DECLARED = {
    "ARMS": arms.ARMS,
    "ROOF_ARM": arms.ROOF_ARM,
    "ROOF_ARMS": arms.ROOF_ARMS,
    "EMPTY_ARM": arms.EMPTY_ARM,
}
OWNER = "perfdsl.bundle.arms"


def _assignments(tree: ast.Module) -> list[str]:
    """Module-level assignments of an arm constant in one module."""
    found = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [getattr(node, "target", None)]
        found += [
            f"line {node.lineno}: {t.id} =" for t in targets if isinstance(t, ast.Name) and t.id in DECLARED
        ]
    return found


def _spellings(tree: ast.Module) -> list[str]:
    """Module-level assignments of an arm constant, and literals equal to one, in one module."""
    found = _assignments(tree)
    # The names themselves ("copy", "change") are ordinary words; their tuples and "(empty)" are not.
    literals = {arms.ARMS, arms.ROOF_ARMS, arms.EMPTY_ARM}
    for node in ast.walk(tree):
        value: object = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            value = node.value
        elif isinstance(node, ast.Tuple) and all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
        ):
            value = tuple(e.value for e in node.elts)  # type: ignore[attr-defined]
        if value in literals:
            found.append(f"line {node.lineno}: {value!r}")
    return found


def _may_spell_a_literal(source: str) -> bool:
    """Whether a module's text holds every word of some arm literal: one that does not cannot
    spell it, and walking every expression of every module was most of this test's time."""
    literals = (arms.ARMS, arms.ROOF_ARMS, (arms.EMPTY_ARM,))
    return any(all(word in source for word in literal) for literal in literals)


def test_arm_names_are_spelled_only_in_bundle_arms() -> None:
    spelled = {}
    paths = import_graph.module_names()
    for name, tree in import_graph.trees().items():
        if name == OWNER:
            continue
        found = _assignments(tree)
        if _may_spell_a_literal(paths[name].read_text(encoding="utf-8")):
            found = _spellings(tree)
        if found:
            spelled[name] = found
    assert spelled == {}


def test_a_planted_second_spelling_is_found() -> None:
    planted = ast.parse('ARMS = ("baseline", "change")\n\ndef f(arm="(empty)"):\n    return arm\n')
    assert _spellings(planted) == [
        "line 1: ARMS =",
        "line 1: ('baseline', 'change')",
        "line 3: '(empty)'",
    ]
