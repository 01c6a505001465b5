"""No import cycles among the first-party packages (docs/design.md "Untangled runtime").

The graph is built from the source with `ast`, so it sees every import a module can make:
module-level ones, those inside functions (the usual way to dodge a cycle, so they count), and
those under `if TYPE_CHECKING:` (they count too: an annotation naming the class that owns you is
the same knot, only hidden from the interpreter; the design has no cycle at all).

An edge goes to the module an import names: `import a.b` and `from a import b` (b a module) lead
to `a.b`, `from a.b import name` to `a.b`. The parent packages Python initializes on the way are
not edges: a package's `__init__` re-exporting its submodules would otherwise make a cycle with
each of them.
"""

from __future__ import annotations

import ast
import functools
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("openvaala_server", "openvaala_tui", "openvaala_lsp", "openvaala_acp", "openvaala_web")


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    line: int
    type_only: bool


def _modules() -> dict[str, tuple[Path, bool]]:
    found: dict[str, tuple[Path, bool]] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            if is_package:
                parts.pop()
            found[".".join(parts)] = (path, is_package)
    return found


def _imports(tree: ast.Module) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import statement with whether it sits under `if TYPE_CHECKING:`."""

    def walk(node: ast.AST, type_only: bool) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                yield child, type_only
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                for stmt in child.body:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), True)
                for stmt in child.orelse:
                    yield from walk(ast.Module(body=[stmt], type_ignores=[]), type_only)
            else:
                yield from walk(child, type_only)

    yield from walk(tree, False)


def _nearest(name: str, modules: dict[str, tuple[Path, bool]]) -> str | None:
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


@functools.cache
def build_graph() -> tuple[set[str], list[Edge]]:
    """The graph, built in a child process of its own.

    Python 3.11 keeps the AST constructor's recursion depth in interpreter-wide state
    (CPython gh-106905), and its traceback module calls `ast.parse` to place the carets. A traceback
    formatted meanwhile by another thread of this test worker, or by a finalizer the garbage
    collector runs in the middle of a parse, makes `ast.parse` here fail with "SystemError: AST
    constructor recursion depth mismatch". It did, once, in CI.
    """
    child = subprocess.run(
        [sys.executable, "-m", "tests.server.test_import_graph"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert child.returncode == 0, child.stderr
    found = json.loads(child.stdout)
    return set(found["nodes"]), [Edge(**e) for e in found["edges"]]


def _build_graph_here() -> tuple[set[str], list[Edge]]:
    modules = _modules()
    edges: list[Edge] = []
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rpartition(".")[0]
        for node, type_only in _imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                named = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                submodules = [
                    f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules
                ]
                named = submodules or [base]
                if len(submodules) < len(node.names) and submodules:
                    named.append(base)  # names from the package itself besides its submodules
            for target in {t for n in named if (t := _nearest(n, modules)) and t != name}:
                edges.append(Edge(name, target, node.lineno, type_only))
    return set(modules), edges


def cycles(nodes: set[str], edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    out: dict[str, set[str]] = {n: set() for n in nodes}
    for e in edges:
        out[e.source].add(e.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(out[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def _loop(component: list[str], edges: list[Edge]) -> str:
    """One concrete loop through a component, with the lines of its imports, for the message."""
    inside = set(component)
    by_source: dict[str, list[Edge]] = {}
    for e in edges:
        if e.source in inside and e.target in inside:
            by_source.setdefault(e.source, []).append(e)
    start = component[0]
    path: list[Edge] = []
    seen = {start: 0}
    current = start
    while True:
        edge = min(by_source[current], key=lambda e: (e.target not in seen, e.target))
        path.append(edge)
        if edge.target in seen:
            path = path[seen[edge.target] :]
            break
        seen[edge.target] = len(path)
        current = edge.target
    steps = [
        f"{e.source} -> {e.target} (line {e.line}{', TYPE_CHECKING' if e.type_only else ''})"
        for e in path
    ]
    return "\n    ".join(steps)


def _describe(found: list[list[str]], edges: list[Edge]) -> str:
    return "\n".join(f"  {len(c)} modules: {', '.join(c)}\n    {_loop(c, edges)}" for c in found)


def test_the_server_and_the_clients_have_no_import_cycle() -> None:
    """Every package, the editor bridge included (its features annotate with `openvaala_lsp.host`,
    never the server class that imports them): no cycle at all, none tolerated."""
    nodes, edges = build_graph()
    found = cycles(nodes, edges)
    assert not found, "import cycles:\n" + _describe(found, edges)


def test_the_graph_sees_function_level_and_type_checking_imports(tmp_path: Path) -> None:
    """The scanner itself: a cycle made only of an import inside a function and one under
    `if TYPE_CHECKING:` is found and named."""
    tree = ast.parse(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from pkg.b import B\n"
        "def f():\n"
        "    from pkg import c\n"
    )
    kinds = sorted((type_only, getattr(n, "module", None)) for n, type_only in _imports(tree))
    assert kinds == [(False, "pkg"), (False, "typing"), (True, "pkg.b")]
    edges = [Edge("pkg.a", "pkg.b", 3, True), Edge("pkg.b", "pkg.a", 5, False)]
    found = cycles({"pkg.a", "pkg.b", "pkg.c"}, edges)
    assert found == [["pkg.a", "pkg.b"]]
    assert "pkg.a -> pkg.b (line 3, TYPE_CHECKING)" in _describe(found, edges)


def _layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if parts[0] == "openvaala_server" and len(parts) > 1 else parts[0]


# Which layers may not be imported from which (docs/design.md "Untangled runtime"): the pure core
# and the store know nothing of the runtime or the server, the runtime nothing of the HTTP side.
FORBIDDEN = {
    "domain": {"runtime", "api", "server", "tools", "store", "models", "mcp"},
    "protocol": {"runtime", "api", "server", "tools", "store", "models", "mcp"},
    "store": {"runtime", "api", "server", "tools", "models", "mcp"},
    "models": {"runtime", "api", "server", "tools", "store", "mcp"},
    "config": {"runtime", "api", "server", "tools", "store", "mcp"},
    "errors": {"runtime", "api", "server", "tools", "store", "models", "mcp"},
    "mcp": {"runtime", "api", "server"},
    "tools": {"api", "server"},
    "runtime": {"api", "server"},
}
# What the tools may see of the runtime: its narrow interfaces and the session record.
TOOLS_SEE_OF_RUNTIME = {"openvaala_server.runtime.ports", "openvaala_server.runtime.session"}


def test_lower_layers_do_not_import_upper_ones() -> None:
    _, edges = build_graph()
    wrong = [
        f"{e.source} -> {e.target} (line {e.line})"
        for e in edges
        if _layer(e.target) in FORBIDDEN.get(_layer(e.source), set())
        or (
            _layer(e.source) == "tools"
            and _layer(e.target) == "runtime"
            and e.target not in TOOLS_SEE_OF_RUNTIME
        )
    ]
    assert not wrong, "imports against the layering:\n  " + "\n  ".join(wrong)


if __name__ == "__main__":
    _nodes, _edges = _build_graph_here()
    json.dump({"nodes": sorted(_nodes), "edges": [asdict(e) for e in _edges]}, sys.stdout)
