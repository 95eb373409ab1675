"""The README and docs/ as a newcomer reads them (issue 33 §6): a README short enough to read (at most 300 lines),
its quick start the two commands CI and the demo run, and every relative link of the README and docs/ pointing
at a file that exists, and at a heading that exists when it names one (GitHub's anchors: the heading in lower
case, punctuation but ``-`` and ``_`` dropped, spaces as ``-``; a repeated heading gets ``-1``, ``-2``).
The examples/ and the reason table have tests of their own (test_example_inputs.py, test_verdict_doc.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
PAGES = [README, *sorted((ROOT / "docs").rglob("*.md")), ROOT / "benchmarks" / "README.md"]
LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading (github/cmark-gfm's extension; what github.com renders)."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # a link in a heading anchors by its text
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in FENCE.sub("", page.read_text()).splitlines():
        if m := re.match(r"#{1,6} (.+)", line):
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(page: Path) -> list[str]:
    return LINK.findall(FENCE.sub("", page.read_text()))


def relative_links() -> list[tuple[Path, str]]:
    return [(page, target) for page in PAGES for target in links(page)
            if not re.match(r"[a-z]+:", target)]  # http:, https:, mailto:


def test_the_slug_is_githubs():
    assert slug("Check the grants before the night: `preflight`") == "check-the-grants-before-the-night-preflight"
    assert slug("The deployer's permissions") == "the-deployers-permissions"
    assert slug('cdk-nag and Resource "*"') == "cdk-nag-and-resource-"
    assert slug("The live view (CloudWatch dashboard)") == "the-live-view-cloudwatch-dashboard"


def test_the_readme_is_at_most_300_lines():
    lines = README.read_text().splitlines()
    assert len(lines) <= 300, f"README.md has {len(lines)} lines: move the detail to a docs/ page"


def test_the_quick_start_is_make_demo_and_make_test_and_ci_runs_the_same_test_command():
    text = README.read_text()
    quick = text[text.index("## Quick start"):]
    block = re.search(r"```bash\n(.*?)```", quick, re.S).group(1)
    assert [line.split("#")[0].strip() for line in block.strip().splitlines()] == ["make demo", "make test"]
    assert re.search(r"^make test\b", (ROOT / ".ci" / "run").read_text(), re.M)


def test_the_docs_index_names_every_page():
    """docs/index.md names every page; the decision records are named by their own index, docs/decisions/README.md
    (which docs/index.md names, and tests/unit/test_decisions.py checks)."""
    index = (ROOT / "docs" / "index.md").read_text()
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")} - {"index.md"}
    records = {p for p in pages if re.fullmatch(r"decisions/\d{4}-[a-z0-9-]+\.md", p)}
    assert "decisions/README.md" in pages and len(records) > 80
    assert sorted(p for p in pages - records if f"]({p})" not in index) == []


def test_the_readme_links_the_docs_index():
    assert "](docs/index.md)" in README.read_text()


def test_there_are_links_to_check():
    found = relative_links()
    assert len(found) > 100 and any(target.endswith("verdict.md") for _, target in found)


@pytest.mark.parametrize(("page", "target"), relative_links(),
                         ids=lambda v: v.relative_to(ROOT).as_posix() if isinstance(v, Path) else v)
def test_every_relative_link_resolves(page: Path, target: str):
    path, _, anchor = target.partition("#")
    dest = (page.parent / path).resolve() if path else page
    assert dest.exists(), f"{page.relative_to(ROOT)}: {target}: no such file"
    if anchor and dest.suffix == ".md":
        assert anchor in anchors(dest), f"{page.relative_to(ROOT)}: {target}: no heading #{anchor} in {dest.name}"


NODE = re.compile(r"\bNode(?:\.js)? (\d\d)(?: or |, | and )(\d\d)(?:,? (?:or|and) (\d\d))?")


def test_one_statement_of_the_node_versions():
    """README, docs and the Makefile say the same Node versions (22 and 24 supported; 20 still works)."""
    said = {}
    for page in [*PAGES, ROOT / "Makefile"]:
        for m in NODE.finditer(page.read_text()):
            said.setdefault(tuple(v for v in m.groups() if v), []).append(page.name)
    assert set(said) == {("22", "24")}, said


def test_one_install_line():
    """In a clone the install is `make install` (or any make target); outside one, the CLI's own extra. No page
    says another way (`pip install -e` by hand installs other extras than the Makefile)."""
    for page in PAGES:
        text = page.read_text()
        assert "pip install -e" not in text, page.name
        for line in re.findall(r"pip install '[^']*'", text):
            assert line == "pip install 'cutover-prep[cli] @ git+https://github.com/YOUR-ORG/cutover-prep@main'", (
                page.name, line)


def cut_tables(text: str) -> list[str]:
    """Table rows that a blank line cut off their table: a row after a blank line that is not a new table's header
    (the next line not a delimiter row). GitHub renders such a row as a paragraph of pipes."""
    lines = FENCE.sub("", text).splitlines()
    return [line[:60] for i, line in enumerate(lines)
            if line.startswith("|") and i > 0 and not lines[i - 1].strip()
            and not (i + 1 < len(lines) and re.match(r"\|\s*:?-{3,}", lines[i + 1]))]


def test_no_table_is_cut_by_a_blank_line():
    """The README's "What it reads" table lost its MySQL row to a blank line (issue 33 §6)."""
    assert cut_tables("| a | b |\n| --- | --- |\n| 1 | 2 |\n\n| 3 | 4 |\n") == ["| 3 | 4 |"]
    assert {page.name: cut for page in PAGES if (cut := cut_tables(page.read_text()))} == {}


def test_the_readme_says_where_local_prints_the_verdict_as_the_cli_does(tmp_path, monkeypatch):
    """The README said the verdict comes on stderr; `cutover-prep local` prints its summary, verdict and reasons
    included, on stdout (progress and errors on stderr). The CLI is run here, the run itself faked."""
    import json

    from click.testing import CliRunner

    from cutover_prep.cli.main import app
    from cutover_prep.local import runner
    from cutover_prep.local.outcome import LocalRun

    (tmp_path / "findings.json").write_text(json.dumps({"verdict": {"verdict": "NOT_READY", "reasons": [
        {"code": "COVERAGE", "ok": False, "message": "warm-up coverage 97.4 % (threshold 100 %)"}]}}))
    monkeypatch.setattr(runner, "run_local", lambda options: LocalRun(
        run_id="r", status="SUCCEEDED", seconds=1, out=str(tmp_path),
        output=json.dumps({"verdict": "NOT_READY", "coverage_pct": 97.4})))
    done = CliRunner().invoke(app, ["local", "--no-benchmark"])
    assert done.exit_code == 1
    assert "verdict: NOT_READY" in done.stdout and "warm-up coverage 97.4 %" in done.stdout
    assert "verdict" not in done.stderr
    quick = README.read_text()[README.read_text().index("## Quick start"):]
    assert "the run's summary with the **verdict** and every reason goes to\n**stdout**" in quick
