"""perfdsl's own import graph, read from the source with `ast`: no module is imported to build it.

Not a test module. An edge runs from a module to each perfdsl module it imports,
named as deeply as it exists (`from perfdsl.bundle import plan` is an edge to
`perfdsl.bundle.plan`, `from perfdsl.bundle.plan import Plan` one to the same
module). Imports are split by where they stand: at module level (under
`if TYPE_CHECKING:` included, since a type annotation is a dependency a reader
follows all the same) or inside a function, where they run only when called.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator, Mapping
from pathlib import Path

import attrs

import perfdsl

ROOT = Path(perfdsl.__file__).resolve().parent
PACKAGE = "perfdsl"


@attrs.frozen
class Imports:
    """One module's perfdsl imports, by where they stand."""

    module_level: frozenset[str]
    function_level: frozenset[str]


def module_names(root: Path = ROOT) -> dict[str, Path]:
    """Every module under the package by dotted name; a package by its `__init__`."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = (PACKAGE, *path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


def _named(node: ast.Import | ast.ImportFrom, modules: Mapping[str, Path]) -> Iterator[str]:
    """The perfdsl modules one import statement names."""
    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
    elif node.module and node.level == 0:
        targets = [f"{node.module}.{alias.name}" for alias in node.names]
    else:
        targets = []
    for target in targets:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        if target.startswith(PACKAGE + ".") or target == PACKAGE:
            yield target


def _imports_in(tree: ast.AST, modules: Mapping[str, Path]) -> Imports:
    module_level: set[str] = set()
    function_level: set[str] = set()

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            # An import is a statement: expressions hold none, and walking them was most of the time.
            if not isinstance(child, ast.stmt | ast.excepthandler | ast.match_case):
                continue
            if isinstance(child, ast.Import | ast.ImportFrom):
                (function_level if in_function else module_level).update(_named(child, modules))
            inside = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            visit(child, inside)

    visit(tree, in_function=False)
    return Imports(frozenset(module_level), frozenset(function_level - module_level))


def trees(root: Path = ROOT) -> dict[str, ast.Module]:
    """Every module's syntax tree by dotted name, parsed once per session (the tests share it)."""
    return _parsed(root)


@functools.cache
def _parsed(root: Path) -> dict[str, ast.Module]:
    return {
        name: ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for name, path in module_names(root).items()
    }


def import_graph(root: Path = ROOT) -> dict[str, Imports]:
    """Each module's perfdsl imports, itself left out (`from perfdsl.x import y` inside x's package)."""
    modules = module_names(root)
    graph = {}
    for name, tree in trees(root).items():
        found = _imports_in(tree, modules)
        graph[name] = Imports(found.module_level - {name}, found.function_level - {name})
    return graph


def cycles(edges: Mapping[str, frozenset[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted; sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for successor in sorted(edges.get(node, ())):
            if successor not in index:
                connect(successor)
                low[node] = min(low[node], low[successor])
            elif successor in on_stack:
                low[node] = min(low[node], index[successor])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            connect(node)
    return sorted(found)


def module_level_edges(graph: Mapping[str, Imports]) -> dict[str, frozenset[str]]:
    return {name: imports.module_level for name, imports in graph.items()}


def all_edges(graph: Mapping[str, Imports]) -> dict[str, frozenset[str]]:
    return {name: imports.module_level | imports.function_level for name, imports in graph.items()}
