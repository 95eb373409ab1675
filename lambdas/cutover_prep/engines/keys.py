"""The one way an object's key and name label are built from its names (issue 32, finding 1).

A key is ``[database/]schema.name[.index][:partition]#kind``: stable and human-readable, and
injective: two objects whose names differ never share a key, even when the names hold the
separators (``b``.``c.t`` and ``b.c``.``t`` were one key ``b.c.t`` when names were pasted
together, and the census kept one of them). A name is written *bare* when it is a plain word,
else quoted by the engine's rules, the quote character doubled inside
(PostgreSQL and Oracle: ``"b"."c.t"``; MySQL and MariaDB: `` `b`.`c.t` ``).

A bare name is non-empty and holds no separator (``/ . : #``), no quote character of any engine
(``" ` '``), no whitespace and nothing unprintable: so a bare name never looks like a quoted one,
and a key reads back one way only (a name is either bare up to the next separator, or runs from
a quote to the undoubled quote that closes it; the kind, which the engines' code chooses and which
never holds ``#``, is what follows the last ``#``). Names that need no quotes keep the keys they
had before (``test/public.orders#table.main``), so stored plans and profiles of such names still
match. Quoting only where needed is not the whole of an engine's rule (PostgreSQL would also quote
``Orders``, Oracle ``orders``): the key is a label, not SQL, and case twins differ as they are.

Keys name what the engine identifies an object by only as far as names go; the engine's own
identity (PostgreSQL OID and file node, InnoDB space id, Oracle DATA_OBJECT_ID) is kept beside it,
in a segment's ``locator`` and a census object's ``file`` / ``identity``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ANSI = '"'  # PostgreSQL and Oracle: "name", a " inside doubled ("Quoted Identifiers", SQL standard)
MYSQL = "`"  # MySQL and MariaDB: `name`, a ` inside doubled (MySQL manual, "Schema Object Names")
QUOTES = (ANSI, MYSQL)
SEPARATORS = "/.:#"
NOT_BARE = frozenset(SEPARATORS + "\"`'")


# a separator, a quote or white space (``\s`` of a str pattern is ``str.isspace``): one scan in C, not a
# generator over the characters (``bare`` runs for every name of every key: 640,000 calls in a Finalize of 16,000
# objects)
_NOT_BARE_CHAR = re.compile("[" + re.escape("".join(sorted(NOT_BARE))) + r"\s]")


def bare(name: str) -> bool:
    """Whether ``name`` is written as it is (see the module's docstring)."""
    return bool(name) and name.isprintable() and _NOT_BARE_CHAR.search(name) is None


def quote(name: str, q: str = ANSI) -> str:
    """``name`` bare when it may be, else between ``q`` with every ``q`` inside doubled."""
    if q not in QUOTES:
        raise ValueError(f"quote character must be one of {QUOTES}")
    name = str(name)
    return name if bare(name) else f"{q}{name.replace(q, q + q)}{q}"


def label(names: Sequence[str], database: str | None = None, q: str = ANSI) -> str:
    """``[database/]schema.name[...]``: an object's names, each quoted as needed, without partition or kind
    (what a hot-set profile names and the planner matches)."""
    text = ".".join(quote(n, q) for n in names)
    return f"{quote(database, q)}/{text}" if database else text


def object_key(names: Sequence[str], kind: str, *, database: str | None = None, partition: str | None = None,
               q: str = ANSI) -> str:
    """``[database/]schema.name[...][:partition]#kind`` (``Segment.key``, ``CensusObject.key``). ``names`` are
    the identifiers outermost first (schema, table[, index]); an empty database or partition is none."""
    if "#" in kind:
        raise ValueError(f"a kind never holds '#': {kind!r}")
    part = f":{quote(partition, q)}" if partition else ""
    return f"{label(names, database, q)}{part}#{kind}"


def database_key(database: str, kind: str = "database", q: str = ANSI) -> str:
    """The key of a whole database the census does not go into: ``database/#database``."""
    return f"{quote(database, q)}/#{kind}"


class NotAKey(ValueError):
    """A text that no key builder of this module makes."""


def parse(key: str) -> tuple[str | None, tuple[str, ...], str | None, str, str]:
    """(database, names, partition, kind, quote character) of a key ``object_key`` or ``database_key`` made:
    the inverse of the builders (so two different objects cannot have one key). Raises ``NotAKey``."""
    body, sep, kind = str(key).rpartition("#")
    if not sep:
        raise NotAKey(f"not a key (no '#kind'): {key!r}")
    tokens: list[str] = []
    seps: list[str] = []
    q = ANSI
    i = 0
    while i < len(body):
        if body[i] in QUOTES:
            q, j, text = body[i], i + 1, []
            while True:
                end = body.find(q, j)
                if end < 0:
                    raise NotAKey(f"not a key (a quote is not closed): {key!r}")
                text.append(body[j:end])
                if body[end + 1:end + 2] == q:  # a doubled quote stands for one
                    text.append(q)
                    j = end + 2
                    continue
                i = end + 1
                break
            tokens.append("".join(text))
        else:
            j = i
            while j < len(body) and body[j] not in SEPARATORS and body[j] not in QUOTES:
                j += 1
            if j == i or not bare(body[i:j]):
                raise NotAKey(f"not a key (an empty or unquoted name): {key!r}")
            tokens.append(body[i:j])
            i = j
        if i < len(body):
            seps.append(body[i])
            i += 1
            if i == len(body) and seps[-1] != "/":
                raise NotAKey(f"not a key (ends with a separator): {key!r}")
    database = None
    if seps and seps[0] == "/":
        database, tokens, seps = tokens[0], tokens[1:], seps[1:]
    partition = None
    if seps and seps[-1] == ":":
        partition, tokens, seps = tokens[-1], tokens[:-1], seps[:-1]
    if any(s != "." for s in seps) or (not tokens and database is None):
        raise NotAKey(f"not a key (separators out of order): {key!r}")
    return database, tuple(tokens), partition, kind, q


def display(key: str) -> str | None:
    """An object's names as its key writes them, without database and kind (``b."c.t"``, ``app.t:P0``), for
    the report's rows; None when ``key`` is not one this module made."""
    try:
        _database, names, partition, _kind, q = parse(key)
    except NotAKey:
        return None
    if not names:
        return None
    return label(names, None, q) + (f":{quote(partition, q)}" if partition else "")
