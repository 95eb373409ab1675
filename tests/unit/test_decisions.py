"""The decision records (issue 34 §5): docs/decisions/ holds one file per decision, ``NNNN-short-slug.md``, each with
its title, a status and the three sections; the numbers are unique and run without a gap but the ones the index
says were never filed; the index (docs/decisions/README.md) lists every record with the status the record gives;
a decision amended or superseded names a later one that exists. The checker is tried on bad records too."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DECISIONS = Path(__file__).resolve().parents[2] / "docs" / "decisions"
INDEX = DECISIONS / "README.md"
NAME = re.compile(r"(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md")
LINK = r"\[\d{4}\]\(\d{4}-[a-z0-9-]+\.md\)"
STATUS = re.compile(rf"accepted(?:; amended by {LINK}(?:, {LINK})*)?|superseded by {LINK}")
SECTIONS = ["## Context", "## Decision", "## Consequences"]
NEVER_FILED = re.compile(r"^\| (\d{4}) \| never filed", re.M)


def problems(number: int, text: str) -> list[str]:
    """What is wrong with the record of decision ``number`` (its file's text), in words; [] when nothing."""
    found = []
    lines = text.splitlines()
    if not lines or not re.fullmatch(rf"# {number:04d}\. \S.*", lines[0]):
        found.append(f"the first line is not '# {number:04d}. Title'")
    status = re.search(r"^Status: (.*)$", text, re.M)
    if status is None or not STATUS.fullmatch(status.group(1)):
        found.append("no 'Status: accepted', 'accepted; amended by [NNNN](…)' or 'superseded by [NNNN](…)' line")
    at = [text.find(f"\n{s}\n") for s in SECTIONS]
    if -1 in at or at != sorted(at):
        found.append(f"not the sections {', '.join(SECTIONS)} in that order")
    else:
        bodies = [text[a:b] for a, b in zip(at, [*at[1:], len(text)], strict=True)]
        found += [f"{s} is empty" for s, body in zip(SECTIONS, bodies, strict=True)
                  if not body.split("\n", 2)[-1].strip()]
    return found


def later(number: int, text: str) -> list[int]:
    """The decisions a record's status says amended or superseded it."""
    status = re.search(r"^Status: (.*)$", text, re.M)
    return [int(n) for n in re.findall(r"\[(\d{4})\]", status.group(1))] if status else []


def records() -> dict[int, Path]:
    files = [p for p in DECISIONS.glob("*.md") if p.name != "README.md"]
    assert all(NAME.fullmatch(p.name) for p in files), [p.name for p in files if not NAME.fullmatch(p.name)]
    numbers = [int(p.name[:4]) for p in files]
    assert len(numbers) == len(set(numbers)), "a number is used twice"
    return {int(p.name[:4]): p for p in files}


GOOD = """# 0007. Something decided

Status: accepted; amended by [0009](0009-a-later-one.md)

## Context

Why.

## Decision

What.

## Consequences

What follows.
"""


@pytest.mark.parametrize(("text", "words"), [
    (GOOD.replace("# 0007.", "# 7."), "first line"),
    (GOOD.replace("Status: accepted; amended by [0009](0009-a-later-one.md)", "Status: proposed"), "Status"),
    (GOOD.replace("Status: accepted; amended by [0009](0009-a-later-one.md)", "Status: superseded by 9"), "Status"),
    (GOOD.replace("## Consequences\n\nWhat follows.\n", ""), "sections"),
    (GOOD.replace("## Decision\n\nWhat.\n\n", "").replace("## Context", "## Decision\n\nWhat.\n\n## Context"),
     "sections"),
    (GOOD.replace("Why.", ""), "## Context is empty"),
])
def test_the_checker_finds_a_bad_record(text: str, words: str) -> None:
    assert problems(7, GOOD) == [] and later(7, GOOD) == [9]
    assert any(words in p for p in problems(7, text)), problems(7, text)


def test_every_record_has_its_title_status_and_sections() -> None:
    found = {path.name: bad for number, path in records().items() if (bad := problems(number, path.read_text()))}
    assert found == {}


def test_the_numbers_run_without_a_gap_but_the_ones_never_filed() -> None:
    numbers = set(records())
    never = {int(n) for n in NEVER_FILED.findall(INDEX.read_text())}
    assert len(numbers) > 80 and 59 in never
    assert not numbers & never, "a number the index says was never filed has a record"
    assert set(range(1, max(numbers) + 1)) - numbers == never


def test_the_index_lists_every_record_with_its_status() -> None:
    index = INDEX.read_text()
    rows = {int(m.group(1)): (m.group(2), m.group(3)) for m in re.finditer(
        r"^\| \[(\d{4})\]\((\d{4}-[a-z0-9-]+\.md)\) \| [^|]+ \| (.+) \|$", index, re.M)}
    assert sorted(rows) == sorted(records())
    for number, path in records().items():
        status = re.search(r"^Status: (.*)$", path.read_text(), re.M).group(1)
        assert rows[number] == (path.name, status), number


def test_an_amended_or_superseded_decision_names_a_later_one_that_exists() -> None:
    files = records()
    for number, path in files.items():
        for successor in later(number, path.read_text()):
            assert successor in files and successor > number, (path.name, successor)
            assert f"({files[successor].name})" in path.read_text(), (path.name, "links a file that is not there")


def test_the_index_says_how_to_add_one_with_the_next_number() -> None:
    index = INDEX.read_text()
    assert f"**{max(records()) + 1:04d}**" in index
    template = re.search(r"```markdown\n(.*?)```", index, re.S).group(1)
    assert problems(1, template.replace("NNNN", "0001")) == []
