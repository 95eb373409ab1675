"""The floors of docs/architecture.md hold: no import cycle, and no module imports from a floor above its own.

Read from the syntax tree (``ast``) of every module under ``lambdas/cutover_prep/`` and ``lambdas/handlers/``,
without importing them. Every import counts wherever it stands: at module level, inside a function (a lazy
import hides a cycle, it does not end it), under ``if TYPE_CHECKING:``, and ``importlib.import_module("…")``
with a constant name. Importing ``a.b.c`` also runs ``a/__init__.py`` and ``a/b/__init__.py``, so those
packages count as imported too, except the importer's own packages (Python has loaded them before it runs).

The floors come from one place, the table under "## Floors" in docs/architecture.md: a row per floor, its
number first, its paths in the second column (relative to ``lambdas/cutover_prep/``, or to ``lambdas/``, or
to the repository). A module is on the floor of the longest path that holds it.

On the floor whose name starts with "phases" each named path is a room of its own (a phase: the restore,
the warm-up, the benchmark, the findings, the report, ...): a phase imports the floors below it, never
another phase (``phase_crossings``); a phase that needs another's result reads it as a record (``dal/records/``).

The checker itself is tested on small synthetic packages below, so these tests can fail.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
LAMBDAS = REPO / "lambdas"
PKG = LAMBDAS / "cutover_prep"
ARCHITECTURE = REPO / "docs" / "architecture.md"
PACKAGES = ("cutover_prep", "handlers")  # the top-level packages under lambdas/ that are checked


# ---- the checker -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Module:
    name: str  # dotted: cutover_prep.engines.registry
    path: Path
    is_package: bool  # an __init__.py


def modules_under(root: Path, packages: Iterable[str] = PACKAGES) -> dict[str, Module]:
    """Every module of ``packages`` (folders under ``root``), by dotted name."""
    found = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            name = ".".join(parts[:-1] if is_package else parts)
            found[name] = Module(name, path, is_package)
    return found


def _ancestors(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _imported_names(module: Module) -> list[str]:
    """The dotted names ``module`` imports, anywhere in its source: ``import a.b`` gives ``a.b``, ``from a import
    b`` gives ``a.b`` (a module, or a name ``a`` defines)."""
    package = module.name.split(".") if module.is_package else module.name.split(".")[:-1]
    names: list[str] = []
    for node in ast.walk(ast.parse(module.path.read_text(), filename=str(module.path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the module's own package, one level up per extra dot
                base = package[:len(package) - node.level + 1] if node.level <= len(package) else []
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            names += [f"{source}.{alias.name}" if alias.name != "*" else source for alias in node.names]
        elif isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    names.append(arg.value)
    return names


def imports_of(module: Module, known: Mapping[str, Module]) -> set[str]:
    """The modules of ``known`` that importing ``module`` runs: each one it names (for a name that is not a
    module, the module that defines it), and the packages of those, except ``module``'s own packages: they
    run before it. A name its own package defines (``from a import C`` in ``a/b.py``) is an import of ``a``."""
    own = set(_ancestors(module.name))
    found: set[str] = set()
    for name in _imported_names(module):
        while name and name not in known:  # ``from a.b import C``: the class C is defined in a.b
            name = name.rpartition(".")[0]
        if name:
            found |= {name} | (set(_ancestors(name)) & known.keys()) - own
    return found - {module.name}


def import_graph(modules: Mapping[str, Module]) -> dict[str, set[str]]:
    return {name: imports_of(module, modules) for name, module in modules.items()}


def strongly_connected(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (or a module importing itself)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
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
            if len(component) > 1 or v in graph.get(v, ()):
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return components


def cycle_in(graph: Mapping[str, set[str]], component: list[str]) -> list[str]:
    """A shortest cycle through the component's first module, as a path ``[a, b, …, a]`` (breadth first)."""
    start, members = component[0], set(component)
    came_from: dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v] & members):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return [start, *reversed(path[:-1]), start] if v != start else [start, start]
            if w not in came_from:
                came_from[w] = v
                queue.append(w)
    raise AssertionError(f"no cycle through {start}")  # not a strongly connected component


def cycles(graph: Mapping[str, set[str]]) -> list[str]:
    """One line per import cycle: ``a -> b -> a`` (every module of the cycle's component is on some cycle)."""
    found = []
    for component in strongly_connected(graph):
        cycle = cycle_in(graph, component)
        more = f"  (its component: {len(component)} modules, {', '.join(component)})" \
            if len(component) > len(cycle) - 1 else ""
        found.append(" -> ".join(cycle) + more)
    return found


@dataclass(frozen=True)
class Floor:
    number: int
    name: str
    paths: tuple[Path, ...]


def _resolve(named: str, roots: Iterable[Path]) -> Path | None:
    for root in roots:
        if (root / named).exists():
            return (root / named).resolve()
    return None


def floors_from(text: str, roots: Iterable[Path] = (PKG, LAMBDAS, REPO)) -> list[Floor]:
    """The table under ``## Floors``: ``| N name | `path`, `path` | what |``; a path that does not exist fails."""
    found = re.search(r"^## Floors\b.*?$(.*?)(?=^## |\Z)", text, re.S | re.M)
    section = found[1] if found else ""
    floors = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        head = re.match(r"(\d+)\s+(.*)", cells[0]) if line.startswith("|") and len(cells) >= 2 else None
        if not head:
            continue
        paths = []
        for named in re.findall(r"`([^`]+)`", cells[1]):
            path = _resolve(named, roots)
            assert path is not None, f"floor {head[1]}: {named} does not exist"
            paths.append(path)
        floors.append(Floor(int(head[1]), head[2].strip(), tuple(paths)))
    return floors


def floor_of(module: Module, floors: Iterable[Floor]) -> Floor | None:
    """The floor of the longest named path that holds ``module`` (a folder holds its files and folders)."""
    path = module.path.resolve()
    best: tuple[int, Floor] | None = None
    for floor in floors:
        for named in floor.paths:
            if (path == named or named in path.parents) and (best is None or len(named.parts) > best[0]):
                best = (len(named.parts), floor)
    return best[1] if best else None


def upward_imports(graph: Mapping[str, set[str]], floors: Mapping[str, Floor | None]) -> list[str]:
    """``a (floor 1 engines) imports b (floor 3 logic)`` for each import from a lower floor to a higher one
    (a module on no floor is left to ``test_every_module_is_on_a_floor``)."""
    found = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            low, high = floors.get(a), floors.get(b)
            if low is not None and high is not None and high.number > low.number:
                found.append(f"{a} (floor {low.number} {low.name}) imports {b} (floor {high.number} {high.name})")
    return found


def room_of(module: Module, floor: Floor) -> Path | None:
    """The path of ``floor`` that holds ``module`` (the longest), or None."""
    path = module.path.resolve()
    held = [named for named in floor.paths if path == named or named in path.parents]
    return max(held, key=lambda named: len(named.parts)) if held else None


def phase_crossings(modules: Mapping[str, Module], graph: Mapping[str, set[str]], floors: Iterable[Floor]) -> list[str]:
    """``a (phase warmup/) imports b (phase findings/)`` for each import between two rooms of the phases floor."""
    [phases] = [f for f in floors if f.name.startswith("phases")] or [None]
    if phases is None:
        return []
    placed = {name: floor_of(m, floors) for name, m in modules.items()}
    rooms = {name: room_of(m, phases) for name, m in modules.items() if placed[name] is phases}
    found = []
    for a in sorted(rooms):
        for b in sorted(graph.get(a, ())):
            if b in rooms and rooms[b] != rooms[a]:
                found.append(f"{a} (phase {rooms[a].name}) imports {b} (phase {rooms[b].name})")  # type: ignore[union-attr]
    return found


# ---- the project -------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def modules() -> dict[str, Module]:
    return modules_under(LAMBDAS)


@pytest.fixture(scope="module")
def graph(modules: dict[str, Module]) -> dict[str, set[str]]:
    return import_graph(modules)


@pytest.fixture(scope="module")
def floors() -> list[Floor]:
    return floors_from(ARCHITECTURE.read_text())


def test_the_checker_reads_the_real_tree(modules: dict[str, Module], graph: dict[str, set[str]],
                                         floors: list[Floor]) -> None:
    assert len(modules) > 150
    assert {"handlers.plan_sweep", "cutover_prep.engines.registry", "cutover_prep.engines.postgres.bench",
            "cutover_prep.models.run_input", "cutover_prep.benchmark.steps"} <= modules.keys()
    assert sum(len(v) for v in graph.values()) > 400
    assert "cutover_prep.engines.registry" in graph["cutover_prep.models.run_input"]
    # an import inside a function
    assert "cutover_prep.comparison.ownership" in graph["cutover_prep.steps.validate_input"]
    assert "cutover_prep.engines.base" in graph["cutover_prep.engines.postgres"]  # under TYPE_CHECKING
    assert [f.number for f in floors] == sorted({f.number for f in floors}, reverse=True) and len(floors) >= 4
    assert all(f.paths for f in floors)


def test_no_import_cycle(graph: dict[str, set[str]]) -> None:
    found = cycles(graph)
    assert not found, "import cycles (a lazy import counts too):\n" + "\n".join(found)


def test_every_module_is_on_a_floor(modules: dict[str, Module], floors: list[Floor]) -> None:
    assert [name for name, m in modules.items() if floor_of(m, floors) is None] == []


def test_no_module_imports_from_a_higher_floor(modules: dict[str, Module], graph: dict[str, set[str]],
                                              floors: list[Floor]) -> None:
    placed = {name: floor_of(m, floors) for name, m in modules.items()}
    found = upward_imports(graph, placed)
    assert not found, "imports from a lower floor to a higher one (docs/architecture.md#floors):\n" + "\n".join(found)


def test_no_phase_imports_another(modules: dict[str, Module], graph: dict[str, set[str]],
                                  floors: list[Floor]) -> None:
    assert any(f.name.startswith("phases") for f in floors), "docs/architecture.md#floors names no phases floor"
    found = phase_crossings(modules, graph, floors)
    assert not found, "a phase imports another (docs/architecture.md#floors):\n" + "\n".join(found)


def test_the_code_stands_on_at_most_eight_floors() -> None:
    """Issue 34: counted from the code's own imports, each folder and root module one unit standing one floor above
    the highest unit it imports (``benchmarks/house_figures.py``, the figure the issue is judged by), not from the
    table above: a unit that imports a neighbour on its own floor of the table stands a floor higher here."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    try:
        import house_figures
    finally:
        sys.path.remove(str(REPO / "benchmarks"))
    code = house_figures.floor_figures(REPO)["code"]
    assert code["floors"] <= 8, f"the imports make {code['floors']} floors: {code['by_floor']}"


def test_the_engines_are_on_the_ground_floor(modules: dict[str, Module], floors: list[Floor]) -> None:
    engines = [m for name, m in modules.items() if name.startswith("cutover_prep.engines")]
    assert len(engines) > 30
    assert {floor_of(m, floors).name for m in engines} == {"engines (the ground floor)"}  # type: ignore[union-attr]


# The benchmark's Lambda functions are loaded often and briefly: they never load the report's renderer.
BENCHMARK_HANDLERS = ("plan_sweep", "probe", "run_point", "cleanup_scratch", "benchmark_failed")


def test_the_benchmark_handlers_load_no_report_and_no_jinja2() -> None:
    code = ("import importlib, sys\n"
            f"for handler in {BENCHMARK_HANDLERS!r}:\n"
            "    importlib.import_module(f'handlers.{handler}')\n"
            "    print(handler, sorted(m for m in sys.modules\n"
            "                          if m == 'jinja2' or m.startswith('cutover_prep.report')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(LAMBDAS), "AWS_DEFAULT_REGION": "us-east-1"})
    assert out.stdout.splitlines() == [f"{handler} []" for handler in BENCHMARK_HANDLERS]


# ---- the checker on synthetic packages: it can fail --------------------------------------------------------

def _tree(root: Path, files: Mapping[str, str]) -> dict[str, set[str]]:
    for rel, source in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(source)
    return import_graph(modules_under(root, ["pkg"]))


def test_the_checker_finds_a_cycle_through_a_lazy_import(tmp_path: Path) -> None:
    graph = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/a.py": "from pkg.b import f\n",
                             "pkg/b.py": "def f():\n    from pkg import a\n    return a\n"})
    assert cycles(graph) == ["pkg.a -> pkg.b -> pkg.a"]


def test_the_checker_finds_a_cycle_through_type_checking_and_relative_imports(tmp_path: Path) -> None:
    graph = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/x/__init__.py": "", "pkg/x/a.py": "from ..y import b\n",
                             "pkg/y/__init__.py": "", "pkg/y/b.py": "from typing import TYPE_CHECKING\n"
                             "if TYPE_CHECKING:\n    from pkg.z import C\n",
                             "pkg/z.py": "import importlib\nimportlib.import_module('pkg.x.a')\nclass C: ...\n"})
    assert cycles(graph) == ["pkg.x.a -> pkg.y.b -> pkg.z -> pkg.x.a"]


def test_the_checker_counts_the_packages_an_import_runs(tmp_path: Path) -> None:
    files = {"pkg/__init__.py": "", "pkg/top.py": "from pkg.sub.leaf import X\n",
             "pkg/sub/__init__.py": "from pkg.top import Y\n", "pkg/sub/leaf.py": "from pkg.sub import other\nX = 1\n",
             "pkg/sub/other.py": "Z = 0\n"}
    graph = _tree(tmp_path, files)
    assert graph["pkg.top"] == {"pkg.sub", "pkg.sub.leaf"}  # sub/__init__ runs first
    assert graph["pkg.sub.leaf"] == {"pkg.sub.other"}  # its own package ran before it
    assert cycles(graph) == ["pkg.sub -> pkg.top -> pkg.sub"]
    # a module's own package is not a cycle ...
    graph = _tree(tmp_path, {**files, "pkg/sub/__init__.py": "from pkg.sub.leaf import X\n"})
    assert cycles(graph) == []
    # ... unless it takes a name its package defines, while the package imports it
    graph = _tree(tmp_path, {**files, "pkg/sub/__init__.py": "from pkg.sub.leaf import X\nY = 2\n",
                             "pkg/sub/leaf.py": "from pkg.sub import Y\nX = 1\n"})
    assert cycles(graph) == ["pkg.sub -> pkg.sub.leaf -> pkg.sub"]


def test_the_checker_finds_an_upward_import(tmp_path: Path) -> None:
    doc = ("# A\n\n## Floors\n\n| floor | paths | what |\n| --- | --- | --- |\n| 2 top | `pkg/top.py` | x |\n"
           "| 1 logic | `pkg/` | the rest |\n| 0 ground | `pkg/low/` | y |\n\n## Next\n\n| 9 not | `pkg/` | z |\n")
    graph = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/top.py": "import pkg.mid\n",
                             "pkg/mid.py": "from pkg.low.base import B\n",
                             "pkg/low/__init__.py": "", "pkg/low/base.py": "def f():\n    from pkg import top\n"})
    floors = floors_from(doc, roots=[tmp_path])
    assert [(f.number, f.name) for f in floors] == [(2, "top"), (1, "logic"), (0, "ground")]
    modules = modules_under(tmp_path, ["pkg"])
    placed = {name: floor_of(m, floors) for name, m in modules.items()}
    assert {n: f.number for n, f in placed.items()} == {"pkg": 1, "pkg.top": 2, "pkg.mid": 1, "pkg.low": 0,  # type: ignore[union-attr]
                                                        "pkg.low.base": 0}
    assert upward_imports(graph, placed) == [
        "pkg.low.base (floor 0 ground) imports pkg.top (floor 2 top)"]


def test_a_floor_naming_a_path_that_does_not_exist_fails(tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="gone.py does not exist"):
        floors_from("## Floors\n\n| 1 x | `gone.py` | y |\n", roots=[tmp_path])


def test_the_checker_finds_a_phase_importing_another(tmp_path: Path) -> None:
    doc = ("## Floors\n\n| 2 entry | `pkg/main.py` | x |\n| 1 phases | `pkg/warm/`, `pkg/find/` | y |\n"
           "| 0 records | `pkg/` | z |\n")
    graph = _tree(tmp_path, {"pkg/__init__.py": "", "pkg/rec.py": "", "pkg/main.py": "import pkg.warm.a, pkg.find.b\n",
                             "pkg/warm/__init__.py": "", "pkg/warm/a.py": "import pkg.rec\nimport pkg.warm.c\n",
                             "pkg/warm/c.py": "", "pkg/find/__init__.py": "",
                             "pkg/find/b.py": "def f():\n    from pkg.warm import c\n"})
    floors = floors_from(doc, roots=[tmp_path])
    modules = modules_under(tmp_path, ["pkg"])
    assert upward_imports(graph, {n: floor_of(m, floors) for n, m in modules.items()}) == []
    assert phase_crossings(modules, graph, floors) == [
        "pkg.find.b (phase find) imports pkg.warm (phase warm)",
        "pkg.find.b (phase find) imports pkg.warm.c (phase warm)"]
