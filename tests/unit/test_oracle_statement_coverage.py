"""docs/engines/oracle.md and the live test agree on the Oracle statements (issue 35 §6).

The document lists every statement the engine's modules define (``*_SQL`` constants), and only those; the
live test (tests/integration/test_oracle_live.py) checks on a real Oracle that each listed statement was sent
(its last test, ``test_every_documented_statement_was_sent_to_oracle``), but for the ones it names in
``NOT_SENT_HERE`` with why, each a statement of the document. The live test cannot be imported without
Oracle (it skips at import), so it is read as source."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.oracle_statements import BUILT, MODULES, defined, documented

LIVE = Path(__file__).resolve().parents[1] / "integration" / "test_oracle_live.py"


def live_tree() -> ast.Module:
    return ast.parse(LIVE.read_text(encoding="utf-8"))


def not_sent_here() -> dict[str, str]:
    for node in live_tree().body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "NOT_SENT_HERE" for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError("tests/integration/test_oracle_live.py defines no NOT_SENT_HERE")


def test_the_document_lists_every_statement_the_engine_defines_and_no_other() -> None:
    doc, code = documented(), set(defined())
    assert not code - doc, f"defined, not in docs/engines/oracle.md: {sorted(code - doc)}"
    assert not doc - code, f"in docs/engines/oracle.md, defined nowhere in {MODULES}: {sorted(doc - code)}"


def test_the_live_test_checks_every_documented_statement_but_those_it_names_with_why() -> None:
    skipped = not_sent_here()
    assert set(skipped) <= documented(), f"not documented: {sorted(set(skipped) - documented())}"
    assert all(isinstance(why, str) and len(why) > 20 for why in skipped.values())
    functions = [n for n in live_tree().body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
    last = functions[-1]
    assert last.name == "test_every_documented_statement_was_sent_to_oracle"  # runs after every other test
    source = ast.unparse(last)
    assert "documented()" in source and "NOT_SENT_HERE" in source and "BUILT" in source
    fixtures = {n.name for n in live_tree().body if isinstance(n, ast.FunctionDef)}
    assert "record_statements" in fixtures


def test_every_builder_the_live_test_checks_exists() -> None:
    import importlib

    found = {name for m in MODULES for name in vars(importlib.import_module(f"cutover_prep.engines.oracle.{m}"))}
    assert set(BUILT) <= found
