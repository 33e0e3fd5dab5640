"""The import contract of src/explore: a package imports only the packages below it, rich and the
live view only from cli/, and no two modules import each other (also not for types).

Read from the source with ast: every import counts — at the top, under `if TYPE_CHECKING:`, inside a
function. The known violations are listed by name so that any new one fails."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"

LAYERS: list[set[str]] = [
    {"pytest_plugin"},
    {"model"},
    {"decide"},
    {"edges"},
    {"generators"},
    {"executors"},
    {"fanout"},
    {"run"},
    {"bench"},
    {"cli"},
]
"""Low → high. A package may import its own layer's packages and every layer below."""
RANK = {package: rank for rank, packages in enumerate(LAYERS) for package in packages}
TOP_LEVEL = {"explore", "explore.__main__"}
"""The only modules outside a layer package."""
ALLOWED_ONLY_FROM = {"model": set(), "decide": {"model"}, "pytest_plugin": set()}
"""Stricter than the order: decide is pure (model only); model and the plugin import nothing of explore."""
DISPLAY = {"rich", "explore.cli.live"}
"""The terminal display: rich and explore's live view."""
DISPLAY_USERS = {"cli"}

KNOWN_VIOLATIONS: set[tuple[str, str]] = set()
"""(importer, imported) pairs that break the layer order or the display rule."""
KNOWN_CYCLES: set[frozenset[str]] = set()
"""Strongly connected groups of modules that import each other."""


def modules() -> dict[str, tuple[Path, bool]]:
    """Dotted name → (file, is a package's __init__)."""
    found = {}
    for path in sorted((SRC / "explore").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = modules()


def imports_in(source: str, name: str, is_package: bool) -> set[str]:
    """Everything module `name` imports: explore modules resolved to the module (a name imported from
    a package that is itself a module counts as that module), other imports by their top name."""
    package = name.split(".") if is_package else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(
                alias.name if alias.name.startswith("explore") else alias.name.split(".")[0] for alias in node.names
            )
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, node.module] if node.module else base)
            else:
                module = node.module or ""
            if module != "explore" and not module.startswith("explore."):
                found.add(module.split(".")[0])
                continue
            for alias in node.names:
                target = f"{module}.{alias.name}"
                found.add(target if target in MODULES else module)
    found.discard(name)
    return found


def imports_of(name: str) -> set[str]:
    path, is_package = MODULES[name]
    return imports_in(path.read_text(encoding="utf-8"), name, is_package)


GRAPH = {name: imports_of(name) for name in MODULES}


def layer_of(name: str) -> str | None:
    parts = name.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in RANK else None


def violations() -> set[tuple[str, str]]:
    found = set()
    for name, imported in GRAPH.items():
        mine = layer_of(name)
        for target in imported:
            if target in DISPLAY:
                if mine not in DISPLAY_USERS:
                    found.add((name, target))
                continue
            if not target.startswith("explore"):
                continue
            theirs = layer_of(target)
            if mine is None or theirs is None or mine == theirs:
                continue  # the top-level modules (checked below) and imports inside a package
            if (mine in ALLOWED_ONLY_FROM and theirs not in ALLOWED_ONLY_FROM[mine]) or RANK[theirs] > RANK[mine]:
                found.add((name, target))
    return found


def cycles(graph: dict[str, set[str]]) -> set[frozenset[str]]:
    """Tarjan's strongly connected components of more than one module, or of one importing itself."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: set[frozenset[str]] = set()

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph[node]:
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.add(frozenset(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def test_every_module_sits_in_a_layer_package() -> None:
    outside = {name for name in MODULES if layer_of(name) is None} - TOP_LEVEL
    assert not outside, f"modules outside a layer package: {sorted(outside)}"
    assert all(MODULES[f"explore.{package}"][1] for package in RANK), "every layer is a package with an __init__"


def test_packages_import_only_the_layers_below() -> None:
    found = violations()
    new = found - KNOWN_VIOLATIONS
    assert not new, (
        "imports against the layer order (low → high: "
        + " ; ".join(", ".join(sorted(layer)) for layer in LAYERS)
        + "):\n"
        + "\n".join(f"  {a} imports {b}" for a, b in sorted(new))
    )
    gone = KNOWN_VIOLATIONS - found
    assert not gone, f"fixed, so remove from KNOWN_VIOLATIONS: {sorted(gone)}"


def test_the_plugin_imports_nothing_of_explore() -> None:
    plugin = {name: GRAPH[name] for name in MODULES if layer_of(name) == "pytest_plugin"}
    assert plugin, "the plugin package is found"
    assert not {target for imported in plugin.values() for target in imported if target.startswith("explore")}


def test_no_import_cycle() -> None:
    found = cycles(GRAPH)
    new = found - KNOWN_CYCLES
    assert not new, "modules that import each other:\n" + "\n".join(f"  {sorted(group)}" for group in new)
    gone = KNOWN_CYCLES - found
    assert not gone, f"fixed, so remove from KNOWN_CYCLES: {sorted(sorted(group) for group in gone)}"


@pytest.mark.parametrize(
    "source, expected",
    [
        ("from ..cli.live import Display", {("explore.decide.fake", "explore.cli.live")}),
        ("from ..run import loop", {("explore.decide.fake", "explore.run.loop")}),
        ("from ..edges import procs", {("explore.decide.fake", "explore.edges.procs")}),
        ("from explore.fanout.scheduler import fan_out", {("explore.decide.fake", "explore.fanout.scheduler")}),
        ("import rich.console", {("explore.decide.fake", "rich")}),
        ("from ..model import runstate", set()),
    ],
)
def test_the_checker_sees_a_planted_import(source: str, expected: set[tuple[str, str]]) -> None:
    """The checker itself, on a planted decide module: an import under TYPE_CHECKING and one in a function."""
    fake = "explore.decide.fake"
    before = violations()
    for body in (f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    {source}\n", f"def f():\n    {source}\n"):
        GRAPH[fake] = imports_in(body, fake, is_package=False)
        try:
            assert violations() - before == expected
        finally:
            del GRAPH[fake]


def test_the_checker_sees_a_planted_cycle() -> None:
    graph = {name: set(imported) for name, imported in GRAPH.items()}
    graph["explore.model.testfiles"].add("explore.model.config")  # config imports testfiles
    assert frozenset({"explore.model.testfiles", "explore.model.config"}) in cycles(graph) - cycles(GRAPH)
