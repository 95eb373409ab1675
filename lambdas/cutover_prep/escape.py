"""Text that came from a database (or from a run's input), made safe for the output it lands in.

Names and messages from the customer's database are data: a table may be called
``"z\\n  verdict: READY\\x1b[8m"``. One function per output, applied where the output is written:

- ``for_terminal``: every character Python does not call printable (``str.isprintable``: the C0
  and C1 controls with ESC, DEL, line and paragraph separators, the Unicode format characters
  such as bidi overrides and zero-width ones, surrogates, unassigned code points) is shown as its
  escape (``\\x1b``, ``\\n``, ``\\u202e``), so nothing reaches the terminal as a control and a
  name cannot start a line of its own.
- ``for_markdown``: the text as a CommonMark code span (after ``for_terminal``, so it holds no line
  ending and no control either): nothing in it is parsed as Markdown or HTML. In a GFM table cell,
  ``|`` is escaped as well, which GFM requires even inside a code span.
- HTML: jinja2's autoescape (``report/html.py``, ``comparison/page.py``).

No imports beyond the standard library: the CLI-only install (``cutover-prep[cli]``) uses it.
"""

from __future__ import annotations

import re

_BACKTICKS = re.compile(r"`+")


def _visible(char: str) -> str:
    return char if char.isprintable() else repr(char)[1:-1]


def for_terminal(text: object) -> str:
    """``text`` with every non-printable character written as its Python escape (``\\x1b``, ``\\u202e``).

    A backslash already in the text is left as it is: the output may be ambiguous to read
    (a name may contain the four characters ``\\x1b``) but never sends a control."""
    text = str(text)
    return text if text.isprintable() else "".join(_visible(c) for c in text)


def for_markdown(text: object, *, cell: bool = False) -> str:
    """``text`` as one CommonMark code span, shown literally (no emphasis, link, HTML, heading).

    CommonMark 0.31.2, 6.1 "Code spans": a code span ends at the first backtick string of the
    same length as the one that opened it, so the fence is one backtick longer than the longest
    run inside; when the content begins or ends with a backtick or a space, one space is added on
    each side, which the parser strips again. ``cell``: the code span is in a GFM table cell,
    where an unescaped ``|`` ends the cell even inside a code span (GFM spec, 4.10 "Tables").
    """
    content = for_terminal(text)
    if not content:
        return ""
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(content)), default=0) + 1)
    if content.strip(" ") and (content[0] in " `" or content[-1] in " `"):
        content = f" {content} "
    span = f"{fence}{content}{fence}"
    return span.replace("|", "\\|") if cell else span
