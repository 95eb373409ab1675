"""docs/verdict.md has a row, with what to do, for every reason code and every named error the code can give,
and names none the code no longer has (issue 33 §6: the table cannot drift from the code).

The codes are read from the code itself: every ``_reason("CODE", ...)`` call in lambdas/ (the verdict's
rules; found by the AST, so a new rule anywhere is seen), the not-started codes of the completion event, and
the run's named errors (``findings.failures.KNOWN_ERRORS`` and the two names ``record_failure`` maps every
other error to)."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from cutover_prep.findings import failures
from cutover_prep.live import completion

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "verdict.md"
LAMBDAS = ROOT / "lambdas" / "cutover_prep"


CODE = re.compile(r"[A-Z]+(?:_[A-Z0-9]+)+")


def _is_reason_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "_reason" and bool(
        node.args)


@functools.cache
def reason_codes() -> frozenset[str]:
    """``_reason("CODE", ...)``; and where a function passes the code in a variable (``for code, ... in
    (("BASELINE_IOPS", ...), ...)``), every CODE-shaped string constant of that function."""
    codes = set()
    for path in LAMBDAS.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for func in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            calls = [n for n in ast.walk(func) if _is_reason_call(n)]
            codes |= {c.args[0].value for c in calls
                      if isinstance(c.args[0], ast.Constant) and isinstance(c.args[0].value, str)}
            if any(not isinstance(c.args[0], ast.Constant) for c in calls):
                codes |= {n.value for n in ast.walk(func) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                          and CODE.fullmatch(n.value)}
    return frozenset(codes)


def not_started_codes() -> set[str]:
    trigger = completion.not_started_detail.__kwdefaults__["code"]
    return set(failures.NOT_STARTED_CODES.values()) | {trigger}


def run_errors() -> set[str]:
    source = Path(failures.__file__).read_text()
    fallbacks = set(re.findall(r'name = "(\w+)" if name == "States\.Timeout" else "(\w+)"', source)[0])
    return set(failures.KNOWN_ERRORS) | fallbacks


def rows() -> dict[str, list[str]]:
    """First-column code spans of every table row -> the row's other cells."""
    out: dict[str, list[str]] = {}
    for line in DOC.read_text().splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        for code in re.findall(r"`(\w+)`", cells[0]):
            out[code] = cells[1:]
    return out


def test_the_code_gives_the_codes_this_test_expects():
    """The collectors work: the verdict's rules, the not-started codes and the errors are found."""
    assert {"UNITS_FAILED", "COVERAGE", "UNREAD_OBJECTS", "WARM_VS_COLD", "STORAGE_INITIALIZING",
            "BASELINE_IOPS"} <= reason_codes()  # BASELINE_IOPS: passed to _reason in a variable
    assert not_started_codes() == {"INPUT_REJECTED", "RUN_ID_REUSED", "TRIGGER_REJECTED"}
    assert {"InvalidInput", "PreflightFailed", "StepTimedOut", "CutoverPrepFailed"} <= run_errors()


def test_every_code_and_error_has_a_row_that_says_what_to_do():
    documented = rows()
    missing = sorted((reason_codes() | not_started_codes() | run_errors()) - set(documented))
    assert missing == [], f"docs/verdict.md has no row for: {', '.join(missing)}"
    empty = sorted(code for code, cells in documented.items() if not cells or not all(c.strip("` ") for c in cells))
    assert empty == [], f"rows with an empty cell: {empty}"


def test_the_table_names_no_code_the_code_does_not_give():
    local_only = {"RunIdInUse", "ScratchExists", "UnsupportedWarmupMode"}  # named errors of the local run
    for name in local_only:  # each is still an exception class of the code
        assert re.search(rf"class {name}\(", "\n".join(p.read_text() for p in LAMBDAS.rglob("*.py"))), name
    stale = sorted(set(rows()) - reason_codes() - not_started_codes() - run_errors() - local_only)
    assert stale == [], f"docs/verdict.md names codes the code no longer gives: {stale}"


def test_the_reason_rows_say_when_they_fail_and_what_to_do():
    """The NOT_READY table has three columns: code, when it fails, what to do."""
    text = DOC.read_text()
    section = text[text.index("## NOT_READY reasons"):text.index("## A run that did not start")]
    header = next(line for line in section.splitlines() if line.startswith("| code"))
    assert header == "| code | fails when | what to do |"
    for code in reason_codes() - {"PROBES_OFF", "PROBES_COLD"}:  # these two never fail: a table of their own
        assert re.search(rf"^\| [^|]*`{code}`", section, re.M), code


def guides() -> dict[str, str] | None:
    """code -> the report's "what to do" text, from ``cutover_prep.models.verdict_reasons`` (the report's module, issue
    33 §5) when it exists; None before it does."""
    try:
        from cutover_prep.models import verdict_reasons
    except ImportError:
        return None
    return {code: g.to_do for code, g in {**verdict_reasons.REASONS, **verdict_reasons.RUN_ERRORS}.items()}


def test_the_what_to_do_column_is_the_reports():
    """One text per code: where the report's module exists, the table's "what to do" is its text (run this module
    as a script, ``python tests/unit/test_verdict_doc.py --write``, to copy them into docs/verdict.md)."""
    known = guides()
    if known is None:
        import pytest

        pytest.skip("cutover_prep.models.verdict_reasons does not exist on this branch")
    documented = rows()
    differ = sorted(code for code, to_do in known.items() if code in documented and documented[code][-1] != to_do)
    assert differ == [], f"docs/verdict.md's what-to-do differs from cutover_prep.models.verdict_reasons for {differ}"


def write() -> None:
    """Copy the report's what-to-do texts into docs/verdict.md's last column, code by code."""
    known = guides() or {}
    lines = DOC.read_text().split("\n")
    for i, line in enumerate(lines):
        if line.startswith("| `"):
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            texts = {known.get(code) for code in re.findall(r"`(\w+)`", cells[0])}
            if len(texts) == 1 and None not in texts:
                lines[i] = "| " + " | ".join([*cells[:-1], texts.pop()]) + " |"
    DOC.write_text("\n".join(lines))


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--write"]:
        write()
