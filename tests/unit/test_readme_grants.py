"""The least-privilege grants (docs/grants.md, moved there from the README) stay true: every DBA_/V$ view the
Oracle engine queries is named in its Oracle grants (a DBA granting views one by one, without
SELECT_CATALOG_ROLE, needs them all)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

from tests.unit.test_engine_docs import statement_constants  # the engine pages' collector

REPO = Path(__file__).resolve().parents[2]
VIEW = re.compile(r"\b(dba_\w+|v\$\w+)", re.IGNORECASE)


def oracle_grants_block() -> str:
    text = (REPO / "docs" / "grants.md").read_text()
    start = text.index("**Oracle** (warm-up and read benchmark):")
    end = text.index("**MySQL / MariaDB** (warm-up and read benchmark):", start)
    return text[start:end]


def oracle_views() -> set[str]:
    """Every DBA_/V$ view in the Oracle engine's statements, by the name it is granted under (V_$...)."""
    views = set()
    for name, where in statement_constants("oracle").items():
        module = importlib.import_module("cutover_prep.engines." + where.removesuffix(".py").replace("/", "."))
        views |= {v.upper().replace("V$", "V_$") for v in VIEW.findall(getattr(module, name))}
    return views


def test_the_oracle_statements_name_views():
    views = oracle_views()
    assert {"DBA_SEGMENTS", "DBA_TAB_COLS", "V_$MYSTAT", "V_$RMAN_OUTPUT"} <= views
    assert len(views) >= 20


def test_every_oracle_view_is_in_the_documented_grants():
    block = oracle_grants_block()
    missing = sorted(v for v in oracle_views() if not re.search(rf"`{re.escape(v)}`", block))
    assert missing == [], f"docs/grants.md's Oracle grants do not name: {', '.join(missing)}"


def test_the_documented_grants_name_no_view_the_engine_does_not_use():
    named = {v for v in re.findall(r"`((?:DBA|V_\$)[A-Z_$]+)`", oracle_grants_block())}
    assert named - oracle_views() == set()
