"""No two of our modules import each other, not even from inside a function.

An import tucked into a function to dodge a cycle hides a knot in the layering (and fails at
call time instead of at start-up); the dependency should point one way instead.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.packages import PACKAGES, ROOT


def our_modules() -> dict[str, Path]:
    modules = {}
    for package in PACKAGES:
        for path in (ROOT / package).rglob("*.py"):
            if "migrations" in path.parts:
                continue
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            modules[".".join(parts)] = path
    return modules


def import_graph(modules: dict[str, Path]) -> dict[str, set[str]]:
    """Module -> our modules it imports anywhere in its body (``TYPE_CHECKING`` aside)."""

    def ours(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                node.body = []
        imported: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(filter(None, (ours(a.name) for a in node.names)))
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    anchor = package
                    for _ in range(node.level - 1):
                        anchor = anchor.rpartition(".")[0]
                    base = f"{anchor}.{base}" if base else anchor
                for alias in node.names:
                    found = ours(f"{base}.{alias.name}") or ours(base)
                    if found:
                        imported.add(found)
        imported.discard(module)
        graph[module] = imported
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_the_finder_sees_a_cycle_hidden_in_a_function():
    graph = {"a.jobs": {"a.tasks"}, "a.tasks": {"a.jobs"}, "a.models": set()}
    assert cycles(graph) == [["a.jobs", "a.tasks"]]


def test_our_modules_have_no_import_cycles():
    graph = import_graph(our_modules())
    assert "trajectories.models" in graph["trajectories.services"]  # the scan reads imports
    assert cycles(graph) == []


def test_trajectories_depends_on_neither_annotate_nor_devices():
    graph = import_graph(our_modules())
    wrong = sorted(
        f"{module} imports {other}"
        for module, imported in graph.items()
        if module.startswith("trajectories")
        for other in imported
        if other.split(".")[0] in ("annotate", "devices")
    )
    assert wrong == []
