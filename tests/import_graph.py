"""The project's import graph, read from the source with ``ast`` (nothing is imported).

Every ``import`` counts, including those inside functions: a function-level import is still a
dependency, only a hidden one. Used by ``tests/test_layers.py`` (issue 17: layers you can see) and
runnable on its own to print the package-level edges and the file-level cycles::

    python tests/import_graph.py
"""
from __future__ import annotations

import ast
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Top-level packages of the distribution; worldmind_ros lives in the colcon workspace.
PACKAGES = ("household", "planner", "memory", "perception", "sim_bridge", "privileged", "evaluation", "worldmind", "worldmind_ros")
SOURCE_DIRS = {name: ROOT / name for name in PACKAGES if name != "worldmind_ros"}
SOURCE_DIRS["worldmind_ros"] = ROOT / "ros_ws" / "src" / "worldmind_ros" / "worldmind_ros"


def module_files() -> dict[str, Path]:
    """Module name -> file for every module of the project's packages."""
    modules: dict[str, Path] = {}
    for package, folder in SOURCE_DIRS.items():
        for path in sorted(folder.rglob("*.py")):
            parts = [package, *path.relative_to(folder).with_suffix("").parts]
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _targets(node: ast.AST, module: str, is_package: bool) -> list[str]:
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:  # relative: resolve against this module's package
        base = module.split(".") if is_package else module.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    # ``from pkg import mod`` imports the submodule when there is one.
    return [target] + [f"{target}.{alias.name}" for alias in node.names]


def module_edges(modules: dict[str, Path] | None = None) -> dict[str, set[str]]:
    """Module -> the project modules it imports (resolved to the longest known module name)."""
    modules = module_files() if modules is None else modules
    edges: dict[str, set[str]] = defaultdict(set)
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            for target in _targets(node, module, path.name == "__init__.py"):
                parts = target.split(".")
                while parts and ".".join(parts) not in modules:
                    parts.pop()
                name = ".".join(parts)
                if name and name != module and not module.startswith(name + "."):
                    edges[module].add(name)
    return edges


def package_edges(edges: dict[str, set[str]]) -> set[tuple[str, str]]:
    """(importing package, imported package) for every cross-package import."""
    return {(a.split(".")[0], b.split(".")[0]) for a, targets in edges.items() for b in targets
            if a.split(".")[0] != b.split(".")[0]}


def file_cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of modules (size > 1): each is an import cycle between files."""
    import networkx as nx

    graph = nx.DiGraph([(a, b) for a, targets in edges.items() for b in targets])
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def main() -> int:
    edges = module_edges()
    for a, b in sorted(package_edges(edges)):
        print(f"{a} -> {b}")
    for cycle in file_cycles(edges):
        print("cycle:", " <-> ".join(cycle))
    return 0


if __name__ == "__main__":
    sys.exit(main())
