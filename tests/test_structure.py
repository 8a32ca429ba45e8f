"""The project's own structural checks, read from the syntax trees of the sources (no third-party
tool): no import circle, nothing outside tests/ importing the tests, the app never importing the
test kit, and the import direction of docs/ARCHITECTURE.md."""

from __future__ import annotations

import ast
import functools
import itertools
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from testkit import ROOT

PACKAGES = ("app", "testkit", "benchmarks", "tests")

# docs/ARCHITECTURE.md, "Import direction": contracts <- probes/bench <- agent; contracts <- db <- server.
# (importer, what it must never import, unless the import is one of) -- by module-name prefix. The
# contracts import nothing else of the app (not even app.errors): every side may depend on them.
LAYERS = [
    ("app.agent", "app.server", ()),
    ("app.agent", "app.db", ()),
    ("app.db", "app.server", ()),
    ("app.contracts", "app", ("app.contracts",)),
    # the performance model is pure: the server predicts from its shipped data without torch or a database
    ("app.perfmodel", "app.db", ()),
    ("app.perfmodel", "app.server", ()),
    ("app.perfmodel", "app.bench", ()),
    ("app.perfmodel", "app.recommender", ()),
]


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str  # a module of the project when the name resolves to one, else the name as written
    where: str  # path:line
    at_import_time: bool  # runs when the importer is imported: not in a function, not under TYPE_CHECKING
    type_only: bool  # under `if TYPE_CHECKING:`


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@functools.cache
def _modules() -> dict[str, Path]:
    return {_module_name(path): path for package in PACKAGES for path in sorted((ROOT / package).rglob("*.py"))}


def _under(name: str, prefix: str) -> bool:
    return name == prefix or name.startswith(prefix + ".")


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> Iterator[str]:
    """The modules an import statement names: `from x import y` names x.y when y is a submodule."""
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        anchor = package[: len(package) - (node.level - 1)]
        base = ".".join([*anchor, *([node.module] if node.module else [])])
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield submodule if submodule in _modules() else base


@functools.cache
def _imports(module: str) -> tuple[Import, ...]:
    path = _modules()[module]
    where = path.relative_to(ROOT)
    found: list[Import] = []

    def visit(node: ast.AST, in_function: bool, type_only: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(node, module, path.name == "__init__.py"):
                at_import_time = not in_function and not type_only
                found.append(Import(module, target, f"{where}:{node.lineno}", at_import_time, type_only))
            return
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for child in node.body:
                visit(child, in_function, True)
            for child in node.orelse:
                visit(child, in_function, type_only)
            return
        inner = in_function or isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
        for child in ast.iter_child_nodes(node):
            visit(child, inner, type_only)

    visit(ast.parse(path.read_text(), filename=str(path)), False, False)
    return tuple(found)


def _all_imports(*packages: str) -> list[Import]:
    return [i for name in _modules() if any(_under(name, p) for p in packages) for i in _imports(name)]


def _cycles(graph: dict[str, dict[str, str]]) -> list[tuple[list[str], set[str]]]:
    """Each strongly connected group of modules (Tarjan, iterative) with one shortest circle through it."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    groups: list[set[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1 or node in graph[node]:
                    groups.append(group)
    cycles = []
    for group in groups:
        start = min(group)
        came_from: dict[str, str] = {}
        queue = deque([start])
        while queue:
            node = queue.popleft()
            if start in graph[node]:
                path = [start]
                while node != start:
                    path.insert(1, node)
                    node = came_from[node]
                cycles.append(([*path, start], group))
                break
            for child in sorted(graph[node]):
                if child in group and child not in came_from:
                    came_from[child] = node
                    queue.append(child)
    return sorted(cycles, key=lambda found: found[0])


def test_the_circle_finder_finds_each_knot_once_with_a_shortest_circle() -> None:
    graph: dict[str, dict[str, str]] = {
        "a": {"b": ""},
        "b": {"c": "", "d": ""},
        "c": {"a": "", "b": ""},
        "d": {"e": ""},
        "e": {"e": ""},
        "f": {"a": ""},
    }
    assert _cycles(graph) == [(["a", "b", "c", "a"], {"a", "b", "c"}), (["e", "e"], {"e"})]


@pytest.mark.parametrize(
    ("source", "module", "is_package", "expected"),
    [
        ("from app.bench import primitives, BenchConfig", "app.cli", False, ["app.bench.primitives", "app.bench"]),
        ("from .primitives import primitives", "app.bench.config", False, ["app.bench.primitives"]),
        ("from . import energy", "app.bench.config", False, ["app.bench.energy"]),
        ("from .. import errors", "app.bench.config", False, ["app.errors"]),
        ("from . import runner", "app.bench", True, ["app.bench.runner"]),
        ("import app.db.models, torch", "app.cli", False, ["app.db.models", "torch"]),
    ],
)
def test_an_import_names_the_module_it_loads(source: str, module: str, is_package: bool, expected: list[str]) -> None:
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.Import | ast.ImportFrom)
    assert list(_targets(node, module, is_package)) == expected


def _circles(package: str, *, lazy: bool) -> str:
    """The import circles among ``package``'s modules, drawn for a failure message ('' when none)."""
    graph: dict[str, dict[str, str]] = {name: {} for name in _modules() if _under(name, package)}
    for i in _all_imports(package):
        runs = i.at_import_time or (lazy and not i.type_only)
        if runs and i.imported in graph and i.imported not in graph[i.importer]:
            graph[i.importer][i.imported] = i.where
    shown = []
    for circle, group in _cycles(graph):
        sites = ", ".join(graph[a][b] for a, b in itertools.pairwise(circle))
        others = sorted(group - set(circle))
        knot = f"\n    with {', '.join(others)} in the same knot" if others else ""
        shown.append(" -> ".join(circle) + f"\n    at {sites}{knot}")
    return "\n  ".join(shown)


@pytest.mark.parametrize("package", ["app", "testkit"])
def test_no_import_circle(package: str) -> None:
    # what runs at import: module-level imports, not those in functions or under TYPE_CHECKING
    circles = _circles(package, lazy=False)
    assert not circles, f"import circles in {package}:\n  {circles}"


@pytest.mark.parametrize("package", ["app", "testkit"])
def test_no_import_inside_a_function_closes_a_circle(package: str) -> None:
    # an import moved into a function to dodge a circle leaves the circle in the design (pylint's
    # cyclic-import and import-linter count these too); only TYPE_CHECKING imports are left out
    circles = _circles(package, lazy=True)
    assert not circles, f"import circles in {package}, counting imports inside functions:\n  {circles}"


def test_no_product_or_benchmark_code_imports_the_tests() -> None:
    imports = _all_imports("app", "benchmarks", "testkit")
    bad = [f"{i.where}: {i.importer} imports {i.imported}" for i in imports if _under(i.imported, "tests")]
    assert not bad, "only tests/ may import tests (shared helpers live in testkit/):\n" + "\n".join(bad)


def test_the_app_never_imports_the_test_kit() -> None:
    bad = [
        f"{i.where}: {i.importer} imports {i.imported}" for i in _all_imports("app") if _under(i.imported, "testkit")
    ]
    assert not bad, "testkit/ is not shipped; app/ must not import it:\n" + "\n".join(bad)


def _reached(module: str) -> dict[str, list[tuple[str, str]]]:
    """Every project module that importing ``module`` (and calling into it) can load, with the chain
    of (import site, module) steps that gets there. Importing a.b.c also runs a and a.b;
    TYPE_CHECKING imports never run."""
    chains: dict[str, list[tuple[str, str]]] = {module: []}
    queue = deque([module])
    while queue:
        current = queue.popleft()
        steps = [(i.where, i.imported) for i in _imports(current) if not i.type_only and i.imported in _modules()]
        parts = current.split(".")
        steps += [(f"(package of {current})", ".".join(parts[:n])) for n in range(1, len(parts))]
        for where, target in steps:
            if target not in chains:
                chains[target] = [*chains[current], (where, target)]
                queue.append(target)
    return chains


@pytest.mark.parametrize(("importer", "forbidden", "allowed"), LAYERS, ids=[f"{a}-x-{b}" for a, b, _ in LAYERS])
def test_imports_go_one_way(importer: str, forbidden: str, allowed: tuple[str, ...]) -> None:
    # followed through other modules, and an import inside a function counts: running the agent
    # must not load the database layer by any road. One line per import that crosses, with a road to it.
    crossings: dict[str, str] = {}
    for module in (name for name in _modules() if _under(name, importer)):
        parts = module.split(".")
        own_packages = {".".join(parts[:n]) for n in range(1, len(parts) + 1)}

        def crosses(target: str, own_packages: set[str] = own_packages) -> bool:
            allowed_here = target in own_packages or any(_under(target, a) for a in allowed)
            return _under(target, forbidden) and not allowed_here

        for chain in _reached(module).values():
            first = next((n for n, (_, target) in enumerate(chain) if crosses(target)), None)
            if first is not None:
                road = " -> ".join([module] + [f"{target} ({where})" for where, target in chain[: first + 1]])
                crossings.setdefault(f"{chain[first][0]} imports {chain[first][1]}", road)
    shown = [f"{site}\n    {road}" for site, road in sorted(crossings.items())]
    rule = f"{importer} must not import {forbidden}" + (f" other than {', '.join(allowed)}" if allowed else "")
    assert not shown, f"{rule} (docs/ARCHITECTURE.md):\n" + "\n".join(shown)
