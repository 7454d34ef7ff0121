"""The packages' import graph has no cycle, and ``import starter`` stays light.

The graph is read with ``ast`` from the source (no third-party tool): every
``import`` and ``from ... import`` at module level and inside functions, with
``from pkg import mod`` counted as an import of the submodule ``pkg.mod``.
A package's ``__init__`` counts only where a name is taken from it: Python
runs it before any submodule either way, and a package that re-exports its
submodules would otherwise always look circular.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("custody", "workflows", "activities", "workers", "starter")
# The engine and its array stack, the bench's HTTP client, the decoders, the S3 SDK.
HEAVY = ("torch", "easyocr", "numpy", "httpx", "PIL", "pypdfium2", "boto3")


def _modules() -> dict[str, Path]:
    """Every module of the packages, by dotted name (a package by its own name)."""
    found: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def _imported(node: ast.AST, here: str, is_package: bool, modules: set[str]) -> set[str]:
    """The modules one import statement loads: ``from pkg import mod`` loads ``pkg.mod``."""
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    if not isinstance(node, ast.ImportFrom):
        return set()
    base = node.module or ""
    if node.level:
        anchor = here.split(".") if is_package else here.split(".")[:-1]
        anchor = anchor[: len(anchor) - node.level + 1]
        base = ".".join([*anchor, base] if base else anchor)
    # A name that is not a submodule comes from the package's own __init__.
    return {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}


def _graph() -> dict[str, set[str]]:
    """Module -> the package modules it imports, under TYPE_CHECKING and in functions too."""
    modules = _modules()
    names = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets |= _imported(node, name, is_package, names)
        graph[name] = {t for t in targets if t in names and t != name}
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` as a path that ends where it starts, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := visit(start)):
            return found
    return None


def test_import_graph_has_no_cycle() -> None:
    """No module of the packages imports, directly or through others, itself."""
    graph = _graph()
    assert len(graph) > 100, "the walk found too few modules"
    cycle = _cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_cycle_finder_reports_a_planted_cycle() -> None:
    """The finder names a cycle it is given, so a clean graph is a real result."""
    planted = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycle(planted) == ["a", "b", "c", "a"]


def test_import_starter_loads_no_heavy_library() -> None:
    """The client API (``from starter import ...``) loads no OCR, decoder, bench or S3 library."""
    probe = (
        "import starter, sys; from starter import CustodyClient, submit, wait, release; "
        "print('\\n'.join(sorted(sys.modules)))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert "starter.client.connect" in out, "the probe did not import the client"
    loaded = sorted({m.split(".")[0] for m in out} & set(HEAVY))
    assert loaded == [], f"import starter loaded {loaded}"


#: Who may import whom: arrows point down, from callers to the worker side to the core.
_LAYER = {"custody": 0, "workflows": 1, "activities": 1, "workers": 2, "starter": 3}


def _upward(graph: dict[str, set[str]]) -> list[str]:
    """Every import from a lower layer to a higher one (``workers`` to ``starter``, say)."""
    return sorted(
        f"{a} -> {b}"
        for a, targets in graph.items()
        for b in targets
        if _LAYER[b.split(".")[0]] > _LAYER[a.split(".")[0]]
    )


def test_import_graph_points_down() -> None:
    """No module of the core, the workflows, the activities or the workers imports ``starter``."""
    assert _upward(_graph()) == []


def test_upward_finder_reports_a_planted_arrow() -> None:
    """The layer check names an arrow it is given, so a clean graph is a real result."""
    planted = {"workers.io": {"starter.client.connect"}, "starter.cli": {"custody.ids"}}
    assert _upward(planted) == ["workers.io -> starter.client.connect"]
