"""The Oracle statements docs/engines/oracle.md lists, and the statements the engine's modules define
(issue 35 §6): shared by the offline agreement test (tests/unit/test_oracle_statement_coverage.py) and the
live test (tests/integration/test_oracle_live.py), which checks that a real Oracle was sent each of them.

A statement is a module constant named ``*_SQL`` (its text is what the engine sends), or one a builder
function makes (``BUILT``: the function, and a marker every statement it builds contains)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "engines" / "oracle.md"
NAME = re.compile(r"\b([A-Z][A-Z0-9_]*_SQL)\b")
MODULES = ("sql", "read_sql", "rowids", "datafiles", "preflight", "bench", "hotset")
# statements built per object (identifiers quoted in): the builder, and a marker of everything it builds
BUILT = {
    "rowid_range_count_sql": "WHERE t.ROWID BETWEEN :start_id AND :end_id",
    "index_ffs_sql": "INDEX_FFS(t ",
    "lob_read_block": "DBMS_LOB.READ(",
    "iot_overflow_sql": "COUNT(t.",
    "view_probe_sql": "WHERE ROWNUM < 1",
    "iot_key_range_sql": "SELECT MIN(t.",
}


def documented() -> set[str]:
    """Every ``*_SQL`` name docs/engines/oracle.md lists."""
    return set(NAME.findall(DOC.read_text(encoding="utf-8")))


def defined() -> dict[str, str]:
    """Every ``*_SQL`` string constant of the Oracle engine's modules: name -> text."""
    import importlib

    out: dict[str, str] = {}
    for module in MODULES:
        mod = importlib.import_module(f"cutover_prep.engines.oracle.{module}")
        for name, value in vars(mod).items():
            if NAME.fullmatch(name) and isinstance(value, str):
                out[name] = value
    return out


def normal(text: str) -> str:
    """A statement's text with its whitespace runs made one space (as compared with what was sent)."""
    return " ".join(str(text).split())
