"""Every Oracle statement docs/engines/oracle.md lists cites the page it follows (issue 35, "Done when").

Each row of the page's statement tables (``| Statement | Why | Privilege | Documentation |``) must name, in its
Documentation cell, an https page of Oracle's documentation (docs.oracle.com) or of AWS's (docs.aws.amazon.com,
for the ``rdsadmin`` packages), or say in words that what it uses is undocumented: ``undocumented:`` with why it
is used and what confirms it (an underscore parameter no manual describes, say). A manual's
name alone ("Database Reference, `DBA_USERS`") is not a citation a DBA can open."""

from __future__ import annotations

import re

from tests.oracle_statements import DOC

HEADER = "| Statement | Why | Privilege | Documentation |"
URL = re.compile(r"https://docs\.(?:oracle\.com|aws\.amazon\.com)/\S+")
UNDOCUMENTED = re.compile(r"\bundocumented:\s*(?P<reason>.+)", re.IGNORECASE)


def statement_rows(text: str) -> list[tuple[str, str]]:
    """(the row's first cell, its Documentation cell) for each row of every statement table of ``text``.

    The Documentation cell is the row's last: a statement cell may hold ``|`` inside code (``ALWAYS | NEVER``)."""
    rows: list[tuple[str, str]] = []
    in_table = False
    for line in text.splitlines():
        if line.strip() == HEADER:
            in_table = True
            continue
        if in_table and line.startswith("|---"):
            continue
        if in_table and line.startswith("| "):
            body = line.strip()[2:-2]
            first = body.split(" | ", 1)[0]
            last = body.rsplit(" | ", 1)[-1]
            rows.append((first, last))
            continue
        in_table = False
    return rows


def uncited(documentation: str) -> str | None:
    """Why a Documentation cell is not a citation, or None when it is one."""
    if URL.search(documentation):
        return None
    match = UNDOCUMENTED.search(documentation)
    if match is None:
        return "neither a docs.oracle.com / docs.aws.amazon.com page nor 'undocumented: <why, what confirms it>'"
    reason = match.group("reason")
    if len(reason.split()) < 12 or "confirm" not in reason.lower():
        return "'undocumented' without why it is used and what confirms it"
    return None


def test_every_statement_row_cites_a_documentation_page_or_says_it_is_undocumented_and_why() -> None:
    rows = statement_rows(DOC.read_text(encoding="utf-8"))
    assert len(rows) >= 40, f"only {len(rows)} statement rows found: has the table header changed from {HEADER!r}?"
    bad = [f"{first[:70]}: {why}" for first, cell in rows if (why := uncited(cell))]
    assert not bad, "rows of docs/engines/oracle.md without a citation:\n" + "\n".join(bad)


def test_a_manuals_name_without_its_page_is_not_a_citation() -> None:
    assert uncited("Database Reference, `DBA_USERS`") is not None
    assert uncited("PL/SQL Packages, `DBMS_ROWID` (`ROWID_CREATE`)") is not None
    assert uncited("python-oracledb, [`call_timeout`](https://python-oracledb.readthedocs.io/en/latest/)") is not None
    assert uncited("underscore parameter; its effect is seen in `V$SESSION_EVENT`") is not None


def test_undocumented_needs_its_reason_and_what_confirms_it() -> None:
    assert uncited("undocumented") is not None
    assert uncited("undocumented: an underscore parameter") is not None
    assert uncited("undocumented: a hidden parameter no manual describes, used so that scans read from "
                   "storage; what confirms it: the session's direct path read waits") is None


def test_a_page_of_oracles_or_awss_documentation_is_a_citation() -> None:
    assert uncited("[`V$MYSTAT`](https://docs.oracle.com/database/122/REFRN/V-MYSTAT.htm)") is None
    assert uncited("https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/"
                   "Appendix.Oracle.CommonDBATasks.ValidateDBFiles.html") is None


def test_the_parser_reads_the_last_cell_even_when_a_statement_holds_a_pipe() -> None:
    text = "\n".join([HEADER, "|---|---|---|---|",
                      "| `SET x = ALWAYS | NEVER` | why | none | Database Reference |", "", "after"])
    assert statement_rows(text) == [("`SET x = ALWAYS", "Database Reference")]
