"""Outside ``engines/`` nothing names an engine: it asks the registry (``engines.registry``).

Read from the syntax tree (``ast``), not with a regex, so that every form that matters is seen:

- an import of an engine's own modules (``cutover_prep.engines.postgres…``, also relative, also
  ``from cutover_prep.engines import oracle``) or of a database driver (psycopg, pymysql, oracledb…),
  also through ``importlib.import_module("…")``;
- an engine name used as a condition: ``engine == "oracle"``, ``!=``, ``in ("mysql", "mariadb")``,
  ``match engine: case "postgres":``, ``engine.startswith("oracle")``;
- any other string that is exactly an engine name (``family("oracle")``, a default of "postgres").

Mentioning a name inside a docstring, a message or a comment is not a violation.
The checker itself is tested on small synthetic sources below, so this test can fail.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

from cutover_prep.engines import registry
from cutover_prep.engines.registry import accepted_names, engine_names

LAMBDAS = Path(__file__).resolve().parents[2] / "lambdas"
ENGINES_DIR = LAMBDAS / "cutover_prep" / "engines"

# Every name the registry accepts for an engine (family names, RDS engine names, aliases).
ENGINE_NAMES = frozenset(accepted_names()) | frozenset(engine_names())
# The engines' own packages: engines/<name>/ (mysql serves mariadb too).
ENGINE_PACKAGES = frozenset(p.parent.name for p in ENGINES_DIR.glob("*/__init__.py"))
# Database drivers, by top-level package (``mysql.connector`` is matched as a whole name below).
DRIVERS = frozenset({"psycopg", "psycopg2", "psycopg_pool", "psycopg_binary", "pg8000", "asyncpg", "pgserver",
                     "pymysql", "MySQLdb", "mariadb", "oracledb", "cx_Oracle"})
DRIVER_MODULES = frozenset({"mysql.connector"})
# The registry's own constants for one family (POSTGRES, ORACLE…): comparing with one is naming it too.
FAMILY_CONSTANTS = frozenset(k for k, v in vars(registry).items() if isinstance(v, registry.EngineFamily))


@dataclass(frozen=True, order=True)
class Naming:
    path: str  # relative to lambdas/
    what: str  # stable across edits (no line number): "import psycopg", '== "oracle"'
    line: int = 0

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _names_engine_module(module: str) -> bool:
    parts = module.split(".")
    if parts[0] in DRIVERS or any(module == m or module.startswith(m + ".") for m in DRIVER_MODULES):
        return True
    return parts[:2] == ["cutover_prep", "engines"] and len(parts) > 2 and parts[2] in ENGINE_PACKAGES


def _is_engine_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.strip().lower() in ENGINE_NAMES


def _engine_literals(node: ast.AST, seen: set[int] | None = None) -> list[str]:
    """The engine names a string constant (shown quoted), a registry family constant (shown bare), or a
    tuple/list/set/frozenset of them holds; the constants found are added to ``seen``."""
    if _is_engine_name(node):
        if seen is not None:
            seen.add(id(node))
        return [f'"{node.value}"']  # type: ignore[attr-defined]
    if isinstance(node, ast.Constant):
        return []
    while isinstance(node, ast.Attribute | ast.Subscript):  # ORACLE.name, registry.MYSQL, POSTGRES.rds_engines[0]
        if isinstance(node, ast.Attribute) and node.attr in FAMILY_CONSTANTS:
            return [node.attr]
        node = node.value
    if isinstance(node, ast.Name) and node.id in FAMILY_CONSTANTS:
        return [node.id]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [name for elt in node.elts for name in _engine_literals(elt, seen)]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set", "tuple")
            and len(node.args) == 1):
        return _engine_literals(node.args[0], seen)
    return []


_OPS = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in", ast.Is: "is", ast.IsNot: "is not"}


def _package_of(path: Path) -> list[str]:
    """The package a module's relative imports start from (a package's ``__init__`` is its own)."""
    parts = list(path.relative_to(LAMBDAS).with_suffix("").parts)
    return parts[:-1]


def namings(source: str, path: str = "cutover_prep/example.py") -> list[Naming]:
    """Where ``source`` (a module at ``path`` under lambdas/) names an engine outside the registry."""
    found: list[Naming] = []
    package = _package_of(LAMBDAS / path)
    in_conditions: set[int] = set()  # engine-name constants already reported as a condition

    def add(node: ast.AST, what: str) -> None:
        found.append(Naming(path, what, getattr(node, "lineno", 0)))

    for node in ast.walk(ast.parse(source, filename=path)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _names_engine_module(alias.name):
                    add(node, f"import {alias.name}")
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against the module's own package
                base = package[:len(package) - node.level + 1] if node.level <= len(package) else []
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                full = f"{module}.{alias.name}" if module else alias.name
                if _names_engine_module(module) or _names_engine_module(full):
                    add(node, f"from {module} import {alias.name}")
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                symbol = _OPS.get(type(op))
                if symbol is None:
                    continue
                for side in (operands[i], operands[i + 1]):
                    for name in _engine_literals(side, in_conditions):
                        add(node, f"{symbol} {name}")
        elif isinstance(node, ast.match_case):
            for pattern in ast.walk(node.pattern):
                if isinstance(pattern, ast.MatchValue):
                    for name in _engine_literals(pattern.value, in_conditions):
                        add(pattern, f"case {name}")
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in ("startswith", "endswith") and node.args:
                for name in _engine_literals(node.args[0], in_conditions):
                    add(node, f"{func.attr}({name})")
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called in ("import_module", "__import__") and node.args:
                arg = node.args[0]
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str) and _names_engine_module(arg.value):
                    add(node, f'{called}("{arg.value}")')
        elif _is_engine_name(node) and id(node) not in in_conditions:  # ast.walk: a condition comes first
            add(node, f'literal "{node.value}"')  # type: ignore[attr-defined]  # e.g. family("oracle"), a default
    return sorted(set(found))


def outside_engines() -> list[Naming]:
    found: list[Naming] = []
    for p in sorted(LAMBDAS.rglob("*.py")):
        if ENGINES_DIR in p.parents:
            continue
        found += namings(p.read_text(), p.relative_to(LAMBDAS).as_posix())
    return found


# Places outside engines/ that still name an engine, each with the reason it may. Keyed by (path, what) so
# an edit elsewhere in the file does not move it; an entry that no longer matches fails the test below
# (remove it then). Found when this check replaced the quoted-string regex (issue 24 §4, 2026-11-25): all
# four are local-only code (cutover_prep/local, compare.py included since issue 24 §3, kept out of the Lambda package),
# none is a branch on an engine name; each is a candidate for a registry hook, not moved in that change.
STILL_NAMING_ENGINES: dict[tuple[str, str], str] = {
    # pgserver fixes its lock directory from tempfile.tempdir when first imported; the compare run imports
    # it before redirecting tempfile.tempdir to the run's own directory. Belongs with engines/postgres/sample_db.
    ("cutover_prep/local/compare.py", "from cutover_prep.engines.postgres.sample_db import pgserver_module"):
        "import-time side effect of the demo database's embedded server, ordered before the tempdir switch",
    # The demo's sample database is PostgreSQL by design (docs: `make demo`); no registry hook names a
    # family's sample database yet.
    ("cutover_prep/local/emulated.py", "from cutover_prep.engines.postgres.sample_db import embedded_postgres"):
        "the demo database is the PostgreSQL sample by design; wants a family.sample_db hook",
    # libpq's keyword conninfo (host=... dbname=...) is parsed by libpq's own parser; the registry already
    # names the family that accepts it (KEYWORD_CONNINFO_ENGINE) but not the parser.
    ("cutover_prep/local/dsn.py", "from psycopg import ProgrammingError"):
        "libpq keyword conninfo parser for --dsn; wants a family.parse_conninfo hook",
    ("cutover_prep/local/dsn.py", "from psycopg.conninfo import conninfo_to_dict"):
        "libpq keyword conninfo parser for --dsn; wants a family.parse_conninfo hook",
    # The emulated volume's daemon builds its profile without importing the engine registry (0.4 s a mount); the
    # default is the demo database's engine, held equal to the registry's by the test below.
    ("cutover_prep/local/volume/profile.py", 'literal "postgres"'):
        "the emulated volume daemon's profile default, without the registry's import; equal to POSTGRES.name",
}


def test_the_emulated_volumes_default_engine_is_the_registrys_postgresql() -> None:
    from cutover_prep.engines.registry import POSTGRES
    from cutover_prep.local.volume.profile import VolumeProfile

    assert VolumeProfile.__dataclass_fields__["engine"].default == POSTGRES.name


def test_outside_the_engines_folder_nothing_else_names_an_engine() -> None:
    found = outside_engines()
    new = [n for n in found if (n.path, n.what) not in STILL_NAMING_ENGINES]
    assert not new, ("outside engines/ these name an engine (ask engines.registry instead, or add an entry with "
                     "its reason to STILL_NAMING_ENGINES):\n" + "\n".join(map(str, new)))
    stale = set(STILL_NAMING_ENGINES) - {(n.path, n.what) for n in found}
    assert not stale, f"STILL_NAMING_ENGINES entries that no longer match, remove them: {sorted(stale)}"


def test_the_checker_looks_at_the_real_tree() -> None:
    files = [p for p in LAMBDAS.rglob("*.py") if ENGINES_DIR not in p.parents]
    assert len(files) > 50 and {"postgres", "oracle", "mysql"} <= ENGINE_PACKAGES
    assert {"postgres", "postgresql", "oracle", "oracle-se2-cdb", "mysql", "mariadb"} <= ENGINE_NAMES


# Each of these, written outside engines/, must be caught: the checker (and so the test above) can fail.
BAD = [
    ("import psycopg", "import psycopg"),
    ("import psycopg.rows as rows", "import psycopg.rows"),
    ("from pymysql.cursors import SSCursor", "from pymysql.cursors import SSCursor"),
    ("def f():\n    import oracledb\n    return oracledb", "import oracledb"),
    ("import mysql.connector", "import mysql.connector"),
    ("from cutover_prep.engines.postgres import sample_db", "from cutover_prep.engines.postgres import sample_db"),
    ("from cutover_prep.engines import oracle", "from cutover_prep.engines import oracle"),
    ("import cutover_prep.engines.mysql.sql", "import cutover_prep.engines.mysql.sql"),
    ("from ..engines.postgres import engine", "from cutover_prep.engines.postgres import engine"),
    ("from ..engines import mysql", "from cutover_prep.engines import mysql"),
    ("import importlib\nm = importlib.import_module('oracledb')", 'import_module("oracledb")'),
    ("if spec.engine == 'oracle':\n    pass", '== "oracle"'),
    ("ok = 'postgres' != engine", '!= "postgres"'),
    ("x = 1 if engine in ('mysql', 'mariadb') else 2", 'in "mariadb"'),
    ("x = engine not in {'postgresql'}", 'not in "postgresql"'),
    ("x = engine in frozenset(['oracle-ee'])", 'in "oracle-ee"'),
    ("match engine:\n    case 'oracle':\n        pass", 'case "oracle"'),
    ("match engine:\n    case 'mysql' | 'mariadb':\n        pass", 'case "mariadb"'),
    ("x = rds_engine.startswith('oracle')", 'startswith("oracle")'),
    ('x = [e for e in engines if e == "mariadb"]', '== "mariadb"'),
    ("x = spec.engine == ORACLE.name", '== ORACLE'),
    ("x = family(e) is registry.MYSQL", 'is MYSQL'),
    ("x = e in POSTGRES.rds_engines", 'in POSTGRES'),
    ("DEFAULT_ENGINE = 'postgres'", 'literal "postgres"'),  # any exact engine name, as the old regex had it
    ("port = family('Oracle').default_port", 'literal "Oracle"'),
]


@pytest.mark.parametrize(("source", "what"), BAD, ids=[b[1] for b in BAD])
def test_the_checker_catches(source: str, what: str) -> None:
    assert what in [n.what for n in namings(source, "cutover_prep/warmup/example.py")]


# A mention is not a branch: these must stay quiet, or every docstring would be a violation.
GOOD = [
    '"""Reads PostgreSQL and "oracle" databases; psycopg is imported by engines/postgres."""',
    "# engine == 'oracle' in a comment",
    "message = f\"target.engine 'oracle' is not {engine!r}\"",
    "from cutover_prep.engines import registry, ConnectionSpec",
    "from cutover_prep.engines.registry import family",
    "import cutover_prep.engines.base",
    "if family(engine).upper_case_identifiers:\n    pass",
    "x = engine == DEFAULT_ENGINE",
    "x = name == 'postgres_stats'",
    "import mysqlish",
    "def f(engine=POSTGRES.name):\n    return engine",  # a default is not a branch
]


@pytest.mark.parametrize("source", GOOD)
def test_the_checker_leaves_alone(source: str) -> None:
    assert namings(source, "cutover_prep/warmup/example.py") == []
