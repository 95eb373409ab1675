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

from collections.abc import Sequence

ANSI = '"'  # PostgreSQL and Oracle: "name", a " inside doubled ("Quoted Identifiers", SQL standard)
MYSQL = "`"  # MySQL and MariaDB: `name`, a ` inside doubled (MySQL manual, "Schema Object Names")
QUOTES = (ANSI, MYSQL)
SEPARATORS = "/.:#"
NOT_BARE = frozenset(SEPARATORS + "\"`'")


def bare(name: str) -> bool:
    """Whether ``name`` is written as it is (see the module's docstring)."""
    return bool(name) and not any(ch in NOT_BARE or ch.isspace() or not ch.isprintable() for ch in name)


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
