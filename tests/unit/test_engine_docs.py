"""docs/engines/<engine>.md stays true: every SQL statement constant of an engine is on its page.

A DBA reviews these pages before granting access (issue 22, "docs"). A statement constant is a
module-level ``NAME_SQL = <str>`` of the engine's statement modules (``sql``, ``census``,
``engine``, ``bench``, ``discovery``, ``datafiles``, ``preflight``, ``hotset``, where the engine has them); its
page must name it. (Tuple assignments such as ``NO_PRIVILEGE, NOT_SQL, EXCLUDED = ...`` are census
reasons, not statements, and are not collected.)
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ENGINES = REPO / "lambdas" / "cutover_prep" / "engines"
STATEMENT_MODULES = ("sql", "read_sql", "rowids", "census", "engine", "bench", "discovery", "datafiles", "preflight",
                     "hotset")
ENGINE_NAMES = ("oracle", "postgres", "mysql")


def statement_constants(engine: str) -> dict[str, str]:
    """``NAME_SQL`` -> the module (``engine/module.py``) defining it, for every str constant."""
    found: dict[str, str] = {}
    for module in STATEMENT_MODULES:
        path = ENGINES / engine / f"{module}.py"
        if not path.exists():
            continue
        loaded = importlib.import_module(f"cutover_prep.engines.{engine}.{module}")
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else \
                [node.target] if isinstance(node, ast.AnnAssign) else []
            for target in targets:
                if isinstance(target, ast.Name) and target.id.endswith("_SQL") \
                        and isinstance(getattr(loaded, target.id, None), str):
                    found[target.id] = f"{engine}/{module}.py"
    return found


def test_every_engine_has_a_page_and_statements():
    for engine in ENGINE_NAMES:
        assert (REPO / "docs" / "engines" / f"{engine}.md").exists(), engine
        assert len(statement_constants(engine)) >= 3, engine  # the collector finds them


def test_census_reasons_are_not_statements():
    assert "NOT_SQL" not in statement_constants("mysql")
    assert "NOT_SQL" not in statement_constants("oracle")


@pytest.mark.parametrize("engine", ENGINE_NAMES)
def test_every_statement_constant_is_on_its_engine_page(engine):
    page = (REPO / "docs" / "engines" / f"{engine}.md").read_text()
    missing = sorted(f"{name} ({where})" for name, where in statement_constants(engine).items()
                     if not re.search(rf"\b{name}\b", page))
    assert missing == [], f"docs/engines/{engine}.md does not name: {', '.join(missing)}"
