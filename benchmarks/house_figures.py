"""The figures issue 34 judges the house by, from the code (no module is imported: read as text and syntax trees).

    .venv/bin/python benchmarks/house_figures.py [--json] [--repo DIR]

- ``dict[str, Any]`` annotations and ``.get("…")`` calls in ``lambdas/cutover_prep/`` outside ``local/volume/``
  and ``cli/`` (the issue's scope; the whole package too, as the issue first counted it). Each two ways: lines
  (what ``grep -rn 'dict\\[str, Any\\]'`` and ``grep -rnE '\\.get\\("'`` count, the engineers' own measure) and
  syntax-tree occurrences (every ``dict[str, Any]`` inside an annotation, nested ones too, e.g. in
  ``list[dict[str, Any]] | None``; every ``x.get("…", …)`` call with a string constant first). Of the
  ``.get("…")`` calls, those whose key is PascalCase (``"Contents"``, ``"DBInstances"``) read a boto3 answer,
  not a run document: counted apart.
- Modules over 500 lines (every module of the package and the handlers).
- Floors: the table of docs/architecture.md as tests/unit/test_import_floors.py reads it (its functions), the
  imports that run up it and the import cycles; and the floors the code's own imports make: each folder and
  root module of ``cutover_prep`` (and ``handlers``) a unit, a unit standing one floor above the highest unit it
  imports; where units import in a circle, the fewest module imports that make it a ladder run back up (listed,
  and left out of the floors).
- Phase folders importing each other (``PHASES``).
- DynamoDB and S3 calls outside ``dal/`` (a call of one of ``STORE_CALLS`` with ``TableName=``, ``Bucket=``,
  ``RequestItems=`` or ``TransactItems=``; a paginator of one), and ``boto3.client(`` outside ``dal/``; those of
  ``local/`` (it stands in for AWS) are counted apart.
- ``os.environ`` and ``os.getenv`` read outside ``settings.py`` (modules), and the handlers returning
  ``dict[str, Any]``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tests.unit.test_import_floors import (  # noqa: E402 - the floor test's own reading, not a second one
    cycles,
    floor_of,
    floors_from,
    import_graph,
    modules_under,
    strongly_connected,
    upward_imports,
)

EXCLUDED = ("local/volume/", "cli/")  # the scope of the dict figures: relative to lambdas/cutover_prep/
PHASES = ("restore", "warmup", "benchmark", "findings", "report", "comparison", "estimate", "gate", "preflight",
          "metrics", "analysis", "measure", "hotset", "live")
MAX_LINES = 500
STORE_CALLS = frozenset({
    "put_item", "get_item", "update_item", "delete_item", "query", "scan", "transact_write_items",
    "transact_get_items", "batch_write_item", "batch_get_item",  # DynamoDB
    "get_object", "put_object", "delete_object", "delete_objects", "head_object", "copy_object",
    "list_objects_v2"})  # S3
STORE_KEYWORDS = frozenset({"TableName", "Bucket", "RequestItems", "TransactItems"})
DICT_ANY = "dict[str, Any]"
DICT_ANY_LINE = re.compile(r"dict\[str, Any\]")
GET_LINE = re.compile(r'\.get\("')
# what stands in for dict[str, Any] without saying so: the figure counts these lines too, apart ("look-alikes"), and
# any name a module binds to one of them (``Document = dict[str, Any]``) where it is used in a line
LOOK_ALIKE = re.compile(r"(?<![\w.])(?:Mapping|MutableMapping|typing\.Mapping)\[str, (?:Any|object)\]"
                        r"|dict\[str, object\]")
ALIAS_DEF = re.compile(r"^(\w+)(?:: TypeAlias)? = (?:dict\[str, Any\]|(?:Mutable)?Mapping\[str, (?:Any|object)\]"
                       r"|dict\[str, object\])\s*(?:#.*)?$")
PASCAL = re.compile(r"[A-Z][a-z0-9]+[A-Za-z0-9]*")


def _files(pkg: Path) -> list[Path]:
    return sorted(pkg.rglob("*.py"))


def _rel(path: Path, pkg: Path) -> str:
    return path.relative_to(pkg).as_posix()


def _in_scope(rel: str) -> bool:
    return not rel.startswith(EXCLUDED)


def _annotations(tree: ast.AST) -> list[ast.expr]:
    found: list[ast.expr] = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None and arg.annotation is not None:
                    found.append(arg.annotation)
            if node.returns is not None:
                found.append(node.returns)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
    return found


def _dict_any_in(annotation: ast.expr) -> int:
    """``dict[str, Any]`` inside an annotation, nested ones too (a string annotation is parsed)."""
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = ast.parse(annotation.value, mode="eval").body
        except SyntaxError:
            return 0
    return sum(1 for node in ast.walk(annotation) if isinstance(node, ast.Subscript) and ast.unparse(node) == DICT_ANY)


def _get_calls(tree: ast.AST) -> tuple[int, int]:
    """(``x.get("…")`` calls with a string constant key, those of them with a PascalCase key: a boto3 answer)."""
    plain = pascal = 0
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get"
                and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            plain += 1
            pascal += bool(PASCAL.fullmatch(node.args[0].value))
    return plain, pascal


def _store_calls(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        name = node.func.attr
        if name in STORE_CALLS and STORE_KEYWORDS & {k.arg for k in node.keywords}:
            found.append((node.lineno, name))
        elif (name == "get_paginator" and node.args and isinstance(node.args[0], ast.Constant)
              and node.args[0].value in STORE_CALLS):
            found.append((node.lineno, f"get_paginator({node.args[0].value!r})"))
        elif name == "client" and isinstance(node.func.value, ast.Name) and node.func.value.id == "boto3":
            found.append((node.lineno, "boto3.client"))
    return found


def _reads_environ(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv") \
                and isinstance(node.value, ast.Name) and node.value.id == "os":
            return True
    return False


def _handlers(handlers: Path) -> dict[str, str]:
    """Each handler module's return annotation of ``handler`` (``-`` when it has none)."""
    out = {}
    for path in sorted(handlers.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == "handler":
                out[path.stem] = ast.unparse(node.returns) if node.returns is not None else "-"
    return out


def code_figures(repo: Path) -> dict[str, Any]:
    pkg = repo / "lambdas" / "cutover_prep"
    dict_lines = {"scope": 0, "package": 0}
    dict_ast = {"scope": 0, "package": 0}
    get_lines = {"scope": 0, "package": 0}
    get_ast = {"scope": 0, "package": 0}
    get_boto = {"scope": 0, "package": 0}
    alike = {"scope": 0, "package": 0}
    aliases: set[str] = set()
    long_modules: dict[str, int] = {}
    store: dict[str, list[str]] = {"product": [], "local": []}
    environ: list[str] = []
    sources = [(path, f"cutover_prep/{_rel(path, pkg)}") for path in _files(pkg)]
    sources += [(path, f"handlers/{path.name}") for path in _files(repo / "lambdas" / "handlers")]
    for path, name in sources:
        text = path.read_text()
        tree = ast.parse(text, filename=str(path))
        lines = text.splitlines()
        if len(lines) > MAX_LINES:
            long_modules[name] = len(lines)
        if not name.startswith("cutover_prep/"):
            continue
        rel = name.removeprefix("cutover_prep/")
        scopes = ("scope", "package") if _in_scope(rel) else ("package",)
        n_dict_lines = sum(1 for line in lines if DICT_ANY_LINE.search(line))
        named = {m.group(1) for line in lines if (m := ALIAS_DEF.match(line))}
        aliases |= named
        uses = re.compile(r"\b(?:" + "|".join(map(re.escape, sorted(named))) + r")\b") if named else None
        n_alike = sum(1 for line in lines if not DICT_ANY_LINE.search(line) and (
            LOOK_ALIKE.search(line) or (uses is not None and uses.search(line) and not ALIAS_DEF.match(line))))
        n_get_lines = sum(1 for line in lines if GET_LINE.search(line))
        n_dict = sum(_dict_any_in(a) for a in _annotations(tree))
        n_get, n_boto = _get_calls(tree)
        for scope in scopes:
            dict_lines[scope] += n_dict_lines
            alike[scope] += n_alike
            get_lines[scope] += n_get_lines
            dict_ast[scope] += n_dict
            get_ast[scope] += n_get
            get_boto[scope] += n_boto
        if not rel.startswith("dal/"):
            where = "local" if rel.startswith("local/") else "product"
            store[where] += [f"{name}:{line} {call}" for line, call in sorted(_store_calls(tree))]
        if rel != "settings.py" and _reads_environ(tree):
            environ.append(name)
    handlers = _handlers(repo / "lambdas" / "handlers")
    return {
        "dict_str_any": {"lines": dict_lines, "annotations_ast": dict_ast, "look_alike_lines": alike,
                         "aliases": sorted(aliases)},
        "get_string_key": {"lines": get_lines, "calls_ast": get_ast, "calls_ast_pascal_key_boto3": get_boto},
        "modules_over_500_lines": dict(sorted(long_modules.items(), key=lambda kv: -kv[1])),
        "store_calls_outside_dal": {"product": len(store["product"]), "local": len(store["local"]),
                                    "where": store},
        "os_environ_outside_settings": {"modules": len(environ), "where": environ},
        "handlers": {"count": len(handlers),
                     "returning_dict_str_any": sum(r == DICT_ANY for r in handlers.values()),
                     "returns": handlers},
    }


def _unit(module: str) -> str | None:
    """The folder or root module of ``cutover_prep`` (``handlers`` as one) a dotted module name belongs to."""
    parts = module.split(".")
    if parts[0] == "handlers":
        return "handlers"
    return parts[1] if len(parts) > 1 else None  # the package's own __init__: no unit


def unit_imports(graph: dict[str, set[str]]) -> dict[tuple[str, str], set[str]]:
    """(importing unit, imported unit) -> the modules of the first that import the second."""
    out: dict[tuple[str, str], set[str]] = defaultdict(set)
    for a, targets in graph.items():
        ua = _unit(a)
        for b in targets:
            ub = _unit(b)
            if ua and ub and ua != ub:
                out[(ua, ub)].add(a)
    return out


def code_floors(edges: dict[tuple[str, str], set[str]], units: list[str]) -> dict[str, Any]:
    """The floors the units' imports make: the fewest module imports that run back up (a minimum feedback arc set
    of the unit graph, each unit-to-unit import weighed by its importing modules: ``back_up``) are left out, and
    each unit stands one floor above the highest it imports."""
    pairs = sorted({tuple(sorted(k)) for k in edges if (k[1], k[0]) in edges})
    graph = {u: {b for (a, b) in edges if a == u} for u in units}
    back: set[tuple[str, str]] = set()
    for component in strongly_connected(graph):
        back |= back_up(component, {k: len(v) for k, v in edges.items()})
    below = {u: graph[u] - {b for (a, b) in back if a == u} for u in units}
    level: dict[str, int] = {}

    def floor(u: str) -> int:
        if u not in level:
            level[u] = 1 + max((floor(b) for b in below[u]), default=0)
        return level[u]

    for u in units:
        floor(u)
    return {"floors": max(level.values(), default=0), "units": len(units),
            "by_floor": {n: sorted(u for u in units if level[u] == n) for n in sorted(set(level.values()))},
            "imports_back_up": sorted(f"{m} -> {b}" for (a, b) in back for m in edges[(a, b)]),
            "pairs_importing_each_other": [f"{a} <-> {b}" for a, b in pairs]}


def back_up(component: list[str], weight: dict[tuple[str, str], int]) -> set[tuple[str, str]]:
    """The unit imports of a strongly connected ``component`` that run back up in an order of its units with the
    least weight running back up (dynamic programming over the subsets placed from the bottom; exact; a tie goes
    to the order first in the units' names)."""
    n = len(component)
    if n > 20:
        raise ValueError(f"a circle of {n} units: too many to order exactly")
    w = [[weight.get((a, b), 0) for b in component] for a in component]
    # into[v][s]: the weight of v's imports of the units of the subset s
    into = []
    for v in range(n):
        table = [0] * (1 << n)
        for s in range(1, 1 << n):
            low = s & -s
            table[s] = table[s ^ low] + w[v][low.bit_length() - 1]
        into.append(table)
    outgoing = [sum(row) - row[v] for v, row in enumerate(w)]
    best: list[tuple[int, tuple[int, ...]] | None] = [None] * (1 << n)
    best[0] = (0, ())
    for placed in range(1 << n):  # subsets in increasing order: every subset of ``placed`` comes before it
        if best[placed] is None:
            continue
        cost, order = best[placed]  # type: ignore[misc]
        for v in range(n):
            if placed & (1 << v):
                continue
            # v stands above every unit placed: its imports of the units not placed yet run back up
            candidate = (cost + outgoing[v] - into[v][placed], order + (v,))
            key = placed | (1 << v)
            if best[key] is None or candidate < best[key]:  # type: ignore[operator]
                best[key] = candidate
    order = best[(1 << n) - 1][1]  # type: ignore[index]
    position = {component[v]: i for i, v in enumerate(order)}
    return {(a, b) for (a, b), k in weight.items() if k and a in position and b in position
            and position[a] < position[b]}


def floor_figures(repo: Path) -> dict[str, Any]:
    lambdas, pkg = repo / "lambdas", repo / "lambdas" / "cutover_prep"
    modules = modules_under(lambdas)
    graph = import_graph(modules)
    floors = floors_from((repo / "docs" / "architecture.md").read_text(), roots=(pkg, lambdas, repo))
    placed = {name: floor_of(m, floors) for name, m in modules.items()}
    edges = unit_imports(graph)
    phases = [f"{a} <-> {b}" for a in PHASES for b in PHASES if a < b and (a, b) in edges and (b, a) in edges]
    return {
        "table": {"floors": len(floors), "upward_imports": upward_imports(graph, placed)},
        "import_cycles": cycles(graph),
        "code": code_floors(edges, sorted({u for u in map(_unit, modules) if u})),
        "phase_pairs_importing_each_other": phases,
        "phase_imports_of_phases": sorted(f"{a} -> {b} ({len(m)} modules)" for (a, b), m in edges.items()
                                          if a in PHASES and b in PHASES),
    }


def figures(repo: Path = REPO) -> dict[str, Any]:
    return {**code_figures(repo), **floor_figures(repo)}


def report(f: dict[str, Any]) -> list[str]:
    d, g = f["dict_str_any"], f["get_string_key"]
    code, table = f["code"], f["table"]
    out = [
        f"dict[str, Any] (outside {', '.join(EXCLUDED)}): {d['lines']['scope']} lines (grep), "
        f"{d['annotations_ast']['scope']} in annotations (AST); whole package {d['lines']['package']} lines, "
        f"{d['annotations_ast']['package']} (AST)",
        f"  look-alikes (Mapping[str, Any], dict[str, object], aliases {', '.join(d['aliases']) or 'none'}): "
        f"{d['look_alike_lines']['scope']} lines more; dict[str, Any] with them: "
        f"{d['lines']['scope'] + d['look_alike_lines']['scope']} lines",
        f'.get("…") (outside {", ".join(EXCLUDED)}): {g["lines"]["scope"]} lines (grep), {g["calls_ast"]["scope"]} '
        f"calls (AST), of which {g['calls_ast_pascal_key_boto3']['scope']} with a PascalCase key (boto3 answers); "
        f"whole package {g['lines']['package']} lines, {g['calls_ast']['package']} calls",
        f"modules over {MAX_LINES} lines: {len(f['modules_over_500_lines'])}"
        + "".join(f"\n  {name} {n}" for name, n in f["modules_over_500_lines"].items()),
        f"floors (docs/architecture.md's table): {table['floors']}; imports up it: {len(table['upward_imports'])}"
        + "".join(f"\n  {line}" for line in table["upward_imports"]),
        f"import cycles: {len(f['import_cycles'])}" + "".join(f"\n  {line}" for line in f["import_cycles"]),
        f"floors the code's imports make: {code['floors']} ({code['units']} folders and root modules); imports "
        f"that run back up: {len(code['imports_back_up'])}; unit pairs importing each other: "
        f"{len(code['pairs_importing_each_other'])}"
        + "".join(f"\n  {line}" for line in code["imports_back_up"])
        + "".join(f"\n  floor {n}: {', '.join(units)}" for n, units in code["by_floor"].items()),
        f"phase folders importing each other: {len(f['phase_pairs_importing_each_other'])} pairs"
        + (f" ({', '.join(f['phase_pairs_importing_each_other'])})" if f["phase_pairs_importing_each_other"] else "")
        + f"; phase -> phase imports: {len(f['phase_imports_of_phases'])}"
        + "".join(f"\n  {line}" for line in f["phase_imports_of_phases"]),
        f"DynamoDB/S3 calls and boto3.client( outside dal/: {f['store_calls_outside_dal']['product']} "
        f"(+ {f['store_calls_outside_dal']['local']} in local/, which stands in for AWS)"
        + "".join(f"\n  {line}" for line in f["store_calls_outside_dal"]["where"]["product"]),
        f"modules reading os.environ outside settings.py: {f['os_environ_outside_settings']['modules']} "
        f"({', '.join(f['os_environ_outside_settings']['where'])})",
        f"handlers returning dict[str, Any]: {f['handlers']['returning_dict_str_any']} of {f['handlers']['count']}",
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--repo", type=Path, default=REPO, help="the checkout to measure (default: this one)")
    args = parser.parse_args(argv)
    f = figures(args.repo)
    print(json.dumps(f, indent=1) if args.json else "\n".join(report(f)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
