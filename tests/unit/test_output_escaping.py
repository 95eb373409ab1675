"""Issue 20, finding 4: names and messages from the database reach the terminal, summary.md and
report.html only escaped for that output (``cutover_prep.escape``).

The judges are independent of the code under test: for Markdown, markdown-it-py (a CommonMark
parser, with GFM tables and linkify as GitHub renders a step summary); for the terminal, the bytes
themselves (no C0 control but the line feeds between lines, no DEL, no C1, no Unicode format or
separator character); for HTML, Python's html.parser (the elements and attributes the page holds).
"""

from __future__ import annotations

import copy
import html.parser
import re
import unicodedata
from typing import Any

import pytest
from markdown_it import MarkdownIt

from cutover_prep.escape import for_markdown, for_terminal
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.report import render_report, summary_markdown
from cutover_prep.report.terminal import terminal_lines
from tests.unit.stored_sections import build_findings
from tests.unit.test_report import sample_findings
from tests.unit.test_report_engineer import BS, at, done, rng, seg, unit
from tests.unit.verdict_of_documents import decide

# The table name: a fake verdict line, then a conceal escape (SGR 8) over what follows.
FAKE_VERDICT = "z\n  verdict: READY\x1b[8m"
TERMINAL = [FAKE_VERDICT,
            "clear\x1b[2J\x1b[H",  # erase the screen, cursor home
            "title\x1b]0;owned\x07",  # OSC 0: the window title, ended by BEL
            "csi\x9b8m c1",  # C1 CSI (U+009B) with SGR 8
            "nel\x85del\x7fbs\x08cr\rtab\t",
            "bidi\u202eoverride\u2066isolate\u2069",  # RIGHT-TO-LEFT OVERRIDE, LEFT-TO-RIGHT ISOLATE
            "zero\u200bwidth\ufeff", "line\u2028para\u2029sep"]
MARKDOWN = ["<img src=x onerror=alert(1)>", "<script>alert(1)</script>", "x\n# Fake heading\n",
            "[click](javascript:alert(1))", "![pixel](https://evil.example/p.png)", "<https://evil.example>",
            "https://evil.example/x and www.evil.example", "**bold** _em_ ~~gone~~", "cell | split",
            "`tick` and `` two ``", "<!-- comment -->", "&lt;b&gt;entity&#60;"]
HOSTILE = TERMINAL + MARKDOWN


def _name(i: int) -> str:
    return HOSTILE[i % len(HOSTILE)]


def hostile_findings() -> dict[str, Any]:
    """A NOT_READY run on a database whose names (databases, schemas, tables), error messages,
    instance id and priority patterns are all hostile, built by the findings' own code; the
    verdict from the verdict's own rules; the benchmark's texts hostile too."""
    names = [(f"db {_name(i)}", f"schema {_name(i + 1)}", f"table {_name(i + 2)}") for i in range(len(HOSTILE))]
    segments, units, items = [], [], {}
    for i, (db, schema, table) in enumerate(names):
        uid = f"u{i}"
        s = seg(db, schema, table, "table.main", 10 + i, [uid])
        segments.append(s)
        units.append(unit(uid, 0 if i == 0 else 1, rng(s["key"], 10 + i)))
        if i % 3 == 0:
            items[uid] = done(i, i + 1, 10 + i)
        elif i % 3 == 1:
            items[uid] = {"status": "FAILED", "error": f"ProgrammingError {_name(i)}",
                          "cause": f"relation \"{table}\" does not exist: {_name(i + 3)}",
                          "bytes_read": BS, "blocks_read": 1, "started_at": at(i), "finished_at": at(i + 1)}
    plan = {"engine": "postgres", "summary": {"units": len(units), "read_methods": {}},
            "options": {"priority": [f"{schema}.*" for _, schema, _ in names[:4]]}, "segments": segments}
    run = {"run_id": "r1", "target": {"db_instance_identifier": FAKE_VERDICT}, "started_at": at(0)}
    f = build_findings(run, plan, units, items)
    bench = copy.deepcopy(sample_findings()["benchmark"])
    bench["points"][0]["point_id"] = _name(0)
    bench["points"].append({"point_id": _name(5), "kind": "sequential", "status": "FAILED", "error": _name(6),
                            "cause": _name(7), "notes": [_name(8)]})
    bench["conclusions"] += MARKDOWN[:3] + TERMINAL[:2]
    bench["probes"]["warm"]["note"] = _name(9)
    f.update(benchmark=bench, engine="postgres", instance=sample_findings()["instance"],
             storage_emulation={"emulated": False, "reason": _name(10)},
             scratch={"created": [_name(11)], "removed": [], "left": [_name(12)]},
             plan={"connection": {"transport": _name(13), "read_only_guard": _name(14)}})
    f["verdict"] = decide(f, Thresholds(), None)
    f["verdict"]["reasons"].append({"code": "EXTRA", "ok": True, "message": f"passed {_name(15)}"})
    f["verdict"]["reasons"].append({"code": "NOTE", "ok": True, "judged": False, "message": _name(16)})
    assert f["verdict"]["verdict"] == "NOT_READY"
    return f


# ---- the escaping functions on their own -------------------------------------------------------

def _unsafe_for_terminal(ch: str) -> bool:
    """A character a terminal may act on or that changes how the text around it reads: C0 and C1
    controls, DEL (category Cc), Unicode format characters such as the bidi overrides and
    zero-width ones (Cf), line and paragraph separators (Zl, Zp), surrogates (Cs)."""
    return unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs")


@pytest.mark.parametrize("text", HOSTILE)
def test_for_terminal_leaves_no_control_and_keeps_the_text_readable(text: str) -> None:
    shown = for_terminal(text)
    assert not [c for c in shown if _unsafe_for_terminal(c)]
    assert all(c in shown for c in text if not _unsafe_for_terminal(c))  # the printable part stays as it was
    for c in text:
        if _unsafe_for_terminal(c):  # each control is named where it was, as Python writes it
            assert repr(c)[1:-1] in shown


@pytest.mark.parametrize("text", [*HOSTILE, "`", "``", "a`", "`a", " `a` ", "a ``` b", " ", "  x", "x  ", "|"])
def test_for_markdown_is_one_code_span_showing_the_text(text: str) -> None:
    """CommonMark 0.31.2, 6.1 "Code spans" (https://spec.commonmark.org/0.31.2/#code-spans): a
    backtick string opens a code span closed only by one of the same length, and one space is
    stripped on both sides when the content begins and ends with one. markdown-it-py parses it."""
    tokens = MarkdownIt("commonmark").parseInline(for_markdown(text))[0].children
    assert [t.type for t in tokens] == ["code_inline"]
    assert tokens[0].content == for_terminal(text)


@pytest.mark.parametrize("text", ["cell | split", "`|`", "a|b|c", FAKE_VERDICT])
def test_for_markdown_in_a_table_cell_stays_in_its_cell(text: str) -> None:
    """GFM spec 0.29, 4.10 "Tables" (https://github.github.com/gfm/#tables-extension-): a pipe in
    a cell, even inside a code span, must be escaped."""
    md = f"| name | n |\n| --- | --- |\n| {for_markdown(text, cell=True)} | 1 |\n"
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    cells = [t for t in tokens if t.type == "inline"]
    assert len(cells) == 4  # two header cells, two body cells: the name did not split its cell
    code = [c for c in cells[2].children if c.type == "code_inline"]
    assert len(code) == 1 and code[0].content == for_terminal(text) and cells[3].content == "1"


# ---- the terminal report -------------------------------------------------------------------------

def _assert_terminal_safe(text: str) -> None:
    raw = text.encode()
    assert not [b for b in raw if (b < 0x20 and b != 0x0A) or b == 0x7F], "a C0 control or DEL reached the terminal"
    assert not [c for c in text if c != "\n" and _unsafe_for_terminal(c)], "a C1/format/separator character"


def test_terminal_report_of_hostile_names_has_no_control_and_one_verdict_line() -> None:
    f = hostile_findings()
    lines = terminal_lines(f)
    text = "\n".join(lines)
    _assert_terminal_safe(text)
    assert [line.strip() for line in text.split("\n") if line.strip().startswith("verdict:")] == [
        "verdict: NOT_READY"]  # the table's "verdict: READY" is shown inside its line, not as one
    assert "verdict: READY\\x1b[8m" in text  # the name is still there to read, its controls made visible
    assert "\\u202e" in text and "\\x9b8m" in text and "\\x1b]0;owned\\x07" in text


# ---- summary.md ----------------------------------------------------------------------------------

OUR_HEADINGS = {"Why not ready", "Checks passed", "Coverage", "Units not read", "Not judged"}


def _gfm() -> MarkdownIt:
    """CommonMark with GFM's tables, strikethrough and autolinks (linkify), as GitHub renders a step summary."""
    return MarkdownIt("commonmark", {"linkify": True}).enable(["table", "strikethrough", "linkify"])


def _inline_tokens(tokens: list[Any]) -> list[Any]:
    return [c for t in tokens for c in ([t, *(t.children or [])])]


def test_summary_md_of_hostile_names_has_no_active_markdown_or_html() -> None:
    md = summary_markdown(hostile_findings(), findings_uri="s3://bucket/runs/r1/findings.json",
                          report_uri="s3://bucket/runs/r1/report.html")
    _assert_terminal_safe(md)  # `cutover-prep report` prints it to the terminal too
    tokens = _inline_tokens(_gfm().parse(md))
    kinds = {t.type for t in tokens}
    assert not kinds & {"html_block", "html_inline", "link_open", "image", "s_open", "em_open", "strong_open"}
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert headings[0].startswith("Cutover Prep: NOT_READY — ")
    assert set(headings[1:]) <= OUR_HEADINGS | {"Benchmark (DONE)"}, headings
    # every hostile text is inside a code span: the plain text around them holds none of their markup
    plain = " ".join(t.content for t in tokens if t.type == "text")
    for needle in ("<img", "<script", "javascript:", "Fake heading", "evil.example", "verdict: READY", "bold"):
        assert needle not in plain, needle
    code = " ".join(t.content for t in tokens if t.type == "code_inline")
    assert "verdict: READY\\x1b[8m" in code and "<img src=x onerror=alert(1)>" in code


def _tables(tokens: list[Any]) -> list[list[list[Any]]]:
    """Each table as rows of cells, each cell its inline token."""
    tables: list[list[list[Any]]] = []
    for t in tokens:
        if t.type == "table_open":
            tables.append([])
        elif t.type == "tr_open":
            tables[-1].append([])
        elif t.type == "inline" and tables and tables[-1] and t.level >= 4:  # inside th/td
            tables[-1][-1].append(t)
        elif t.type == "table_close":
            tables[-1] = [row for row in tables[-1] if row]
    return tables


def test_summary_md_tables_keep_their_rows_and_cells_with_hostile_names() -> None:
    """A name with a newline or a pipe neither ends its row nor splits its cell: the coverage table
    has one row per database of the findings, each with four cells, the name in the first."""
    f = hostile_findings()
    tables = _tables(_gfm().parse(summary_markdown(f)))
    coverage = tables[0]
    assert [len(row) for row in coverage] == [4] * (1 + len(f["coverage"]["by_database"]))
    assert [row[0].children[0].content for row in coverage[1:]] == [
        for_terminal(g["database"]) for g in f["coverage"]["by_database"]]
    points = tables[-1]
    assert points[0][0].content == "point" and all(len(row) == 5 for row in points)
    assert points[1][0].children[0].content == for_terminal(f["benchmark"]["points"][0]["point_id"])


# ---- report.html -----------------------------------------------------------------------------------

class _Elements(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attrs += attrs


def test_report_html_of_hostile_names_holds_no_element_or_attribute_of_theirs() -> None:
    page = render_report(hostile_findings())
    parsed = _Elements()
    parsed.feed(page)
    assert not {"script", "img", "iframe", "a", "object", "embed"} & set(parsed.tags)
    assert not [name for name, _ in parsed.attrs if name.startswith("on")]
    assert not [value for _, value in parsed.attrs if value and "javascript:" in value.lower()]
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert not re.search(r"<(?:script|img)\b", page, re.I)
