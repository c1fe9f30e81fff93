"""server/ reads in one walk: imports point down the layer picture, with no circles
(docs/architecture.md), not even under TYPE_CHECKING."""

from __future__ import annotations

import ast
from pathlib import Path

SERVER = Path(__file__).resolve().parents[2] / "server"


def server_imports() -> dict[str, set[str]]:
    """module -> the server modules it imports anywhere in its source."""
    graph: dict[str, set[str]] = {}
    for path in SERVER.glob("*.py"):
        module = path.stem
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module:
                if node.module == "server":
                    deps.update(alias.name for alias in node.names)
                elif node.module.startswith("server."):
                    deps.add(node.module.split(".")[1])
            elif isinstance(node, ast.Import):
                deps.update(a.name.split(".")[1] for a in node.names if a.name.startswith("server."))
        graph[module] = deps - {module}
    return graph


def test_no_module_of_server_imports_a_module_that_imports_it_back() -> None:
    graph = server_imports()
    cycles = []

    def visit(module: str, path: list[str]) -> None:
        for dep in sorted(graph.get(module, ())):
            if dep in path:
                cycles.append([*path[path.index(dep):], dep])
            elif len(path) < len(graph):
                visit(dep, [*path, dep])

    for module in sorted(graph):
        visit(module, [module])
    assert not cycles, f"import circles in server/: {cycles[:5]}"


def test_connection_http_and_router_never_reach_the_app() -> None:
    graph = server_imports()

    def reach(module: str) -> set[str]:
        seen: set[str] = set()
        todo = [module]
        while todo:
            for dep in graph.get(todo.pop(), ()):
                if dep not in seen:
                    seen.add(dep)
                    todo.append(dep)
        return seen

    for low in ("connection", "http", "router", "room", "lobby", "store"):
        assert "app" not in reach(low), low
        assert "cli" not in reach(low), low
