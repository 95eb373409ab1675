"""Which databases a run reads (issue 33 §1): the database the user named is the database the run reads.

One rule for every command (``local``, ``estimate``, ``preflight``, ``hotset``) and the deployed run, first
that applies:

1. ``--all-databases`` / ``target.databases: "all"``: every database on the instance (PostgreSQL: all but the
   templates, which a name must select; MySQL/MariaDB: every schema but the system ones);
2. ``target.databases: [names]``: those databases (names, matched exactly);
3. ``--database`` / ``warmup.databases``: those globs (the older, glob spelling);
4. the database the DSN (``target.database``) names: that database. PostgreSQL: the database, its own
   catalogue. MySQL/MariaDB: a DSN's database is a schema, so it is the default of the schema selection:
   ``--include-schema`` (``warmup.include_schemas``) names the schemas itself and replaces it, and a DSN naming
   a system schema (``mysql``, ``information_schema`` ...: where one logs in without choosing) selects none.
   Oracle: the DSN names a service, not a selection;
5. nothing named: every database on the instance. A snapshot restores the whole instance and the cutover moves
   all of it; the secret's ``dbname`` (or the instance's initial ``DBName``) is where to log in, not what the
   user chose to warm (docs/decisions/0082-selection-named-database.md).

What the selection leaves out is still on the volume: the census names it, waived (``excluded by input``),
and ``selection_line`` says it in one line before the warm-up reads.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from cutover_prep.dal.records.census import CensusObjectJson
from cutover_prep.engines.registry import family

ALL = "all"
NAMES_SHOWN = 4  # databases or schemas named in the line; the rest are counted
MIB = 2**20


class SelectionProblem(ValueError):
    """Two ways of choosing the databases at once (one line, a usage error)."""


@dataclass(frozen=True)
class Choice:
    """``patterns``: ``DiscoveryOptions.databases`` (globs; empty: every database); ``how``: where it came from,
    in the user's words (the line before the warm-up, the estimate's selection)."""

    patterns: tuple[str, ...]
    how: str


class AskedTarget(BaseModel):
    """What a run input's ``target`` says of the databases to read: ``databases`` (names, or ``ALL``), the
    ``database`` its DSN names, the ``engine``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    databases: list[str] | str | None = None
    database: str | None = None
    engine: str | None = None


class AskedWarmup(BaseModel):
    """What a run input's ``warmup`` says of the databases to read: ``databases`` (globs), ``include_schemas``."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    databases: list[str] | None = None
    include_schemas: list[str] | None = None


class LeftOut(BaseModel):
    """A census object (``dal.records.census.census_json``) as the selection line reads it."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    reason: str | None = None
    bytes: int | None = None
    kind: str | None = None
    database: str | None = None
    schema_: str | None = Field(default=None, alias="schema")
    name: str | None = None


def exact(name: str) -> str:
    """A name as a glob that matches that name only (``[`` ``*`` ``?`` bracketed, as fnmatch reads them)."""
    return glob.escape(name)


def choose(engine: str, *, named: Sequence[str] | str | None = None, globs: Sequence[str] = (),
           connected: str | None = None, include_schemas: Sequence[str] = (), words: Mapping[str, str] | None = None
           ) -> Choice:
    """The databases a run on ``engine`` reads (the module's rule). ``named``: ``target.databases`` (or ``ALL``
    for ``--all-databases``); ``globs``: ``warmup.databases`` / ``--database``; ``connected``: the database the
    DSN or ``target.database`` names (None: none named). ``words``: how to call each source in ``how``."""
    say = {"all": 'target.databases "all" (--all-databases)', "named": "target.databases",
           "globs": "warmup.databases (--database)", "connected": "target.database, the DSN's database",
           "none": "no database named: every one", **(words or {})}
    if named is not None and globs:
        raise SelectionProblem(f"{say['named' if named != ALL else 'all']} and {say['globs']} both choose the "
                               "databases: give one")
    if named == ALL:
        return Choice((), say["all"])
    if named is not None:
        return Choice(tuple(exact(n) for n in named), say["named"])
    if globs:
        return Choice(tuple(globs), say["globs"])
    fam = family(engine)
    if connected and fam.database_is_identifier:
        if fam.database_is_schema and (include_schemas or connected.lower() in fam.catalogue_schemas):
            return Choice((), say["none"])
        return Choice((exact(connected),), say["connected"])
    return Choice((), say["none"])


def choose_for_run(engine: str, target: Mapping[str, Any], warmup: Mapping[str, Any]) -> Choice:
    """``choose`` for a run input's ``target`` and ``warmup`` (dicts, as the state carries them)."""
    asked, warm = AskedTarget.model_validate(target), AskedWarmup.model_validate(warmup)
    return choose(engine, named=asked.databases, globs=tuple(warm.databases or ()), connected=asked.database,
                  include_schemas=tuple(warm.include_schemas or ()))


def input_text(target: Mapping[str, Any], warmup: Mapping[str, Any]) -> str:
    """What a run input reads, in words, before the engine is known (``cutover-prep validate``)."""
    asked, warm = AskedTarget.model_validate(target), AskedWarmup.model_validate(warmup)
    named, globs, connected = asked.databases, warm.databases or (), asked.database
    if named == ALL:
        return "every database on the instance (target.databases \"all\")"
    if named:
        return f"database(s) {', '.join(named)} (target.databases)"
    if globs:
        return f"the databases warmup.databases matches ({', '.join(globs)})"
    engine = asked.engine
    if connected and engine and not choose(engine, connected=connected,
                                           include_schemas=tuple(warm.include_schemas or ())).patterns:
        return "the schemas warmup selects" if family(engine).database_is_schema else "the database of the service"
    if connected:
        return f"database {connected} (target.database)"
    return "every database on the instance (no database named)"


def resolved_warmup(warmup: Any, target: Any, engine: str) -> Any:
    """The run's ``Warmup`` with ``databases`` set to what it reads (``choose_for_run``): discovery, the census,
    the preflight and the end census (which takes plan.json's options) then all read the same selection."""
    target_doc = target.model_dump(mode="json") if hasattr(target, "model_dump") else dict(target)
    choice = choose_for_run(engine, target_doc, warmup.model_dump(mode="json"))
    if tuple(warmup.databases) == choice.patterns:
        return warmup
    return warmup.model_copy(update={"databases": list(choice.patterns)})


def _names(names: Sequence[str]) -> str:
    shown = ", ".join(names[:NAMES_SHOWN])
    return shown + (f" and {len(names) - NAMES_SHOWN} more" if len(names) > NAMES_SHOWN else "")


def _mib(n: int) -> str:
    return f"{n / MIB:,.1f} MiB"


def selection_line(engine: str, segments: Iterable[Any], census: Iterable[CensusObjectJson] | None,
                   how: str = "") -> str:
    """One line, before the warm-up reads: the databases (MySQL: schemas) and schemas it will read with their
    bytes, and what the selection leaves out (the census's ``excluded by input``: on the volume, waived).

    ``selection (target.database, the DSN's database): database shop (schemas information_schema,
    pg_catalog, public), 99.0 MiB; the selection leaves out 4 databases (crm, postgres, …), 1,151.0 MiB, named in
    the census as waived (--all-databases reads them)``
    """
    fam = family(engine)
    reads: dict[str, set[str]] = {}
    total = 0
    for seg in segments:
        db = seg.schema if fam.database_is_schema else (seg.database or "")
        reads.setdefault(db, set()).add(seg.schema)
        total += int(seg.blocks) * int(seg.block_size)
    term = "schema" if fam.database_is_schema or not fam.database_is_identifier else "database"
    lead = f"selection ({how}):" if how else "selection:"
    if not reads:
        head = f"{lead} nothing to read"
    elif fam.database_is_schema or not fam.database_is_identifier:
        names = sorted(reads)
        head = f"{lead} {len(names)} {term}{'s' if len(names) > 1 else ''} ({_names(names)}), {_mib(total)}"
    else:
        parts = []
        for db in sorted(reads):
            schemas = sorted(reads[db])
            parts.append(f"{db} (schema{'s' if len(schemas) > 1 else ''} {_names(schemas)})")
        head = (f"{lead} {'database' if len(parts) == 1 else f'{len(parts)} databases'} "
                f"{_names(parts)}, {_mib(total)}")
    left_dbs: dict[str, int] = {}
    left_schemas: dict[str, int] = {}
    for obj in (LeftOut.model_validate(o) for o in census or ()):
        if obj.reason != "excluded by input":
            continue
        size = int(obj.bytes or 0)
        if fam.database_is_schema or not fam.database_is_identifier:
            key = str(obj.schema_ or obj.name or "")
            left_schemas[key] = left_schemas.get(key, 0) + size
        elif obj.kind == "database" or obj.database not in reads:
            key = str(obj.database or "")
            left_dbs[key] = left_dbs.get(key, 0) + size
        else:
            key = f"{obj.database}.{obj.schema_}"
            left_schemas[key] = left_schemas.get(key, 0) + size
    if census is None:
        return head + "; what it leaves out is not known (the engine takes no census)"
    if not left_dbs and not left_schemas:
        return head + "; the selection leaves nothing out"
    out = []
    if left_dbs:
        out.append(f"{len(left_dbs)} database{'s' if len(left_dbs) > 1 else ''} ({_names(sorted(left_dbs))})")
    if left_schemas:
        out.append(f"{len(left_schemas)} schema{'s' if len(left_schemas) > 1 else ''} "
                   f"({_names(sorted(left_schemas))})")
    widen = " (--all-databases reads them)" if left_dbs else ""
    left = sum(left_dbs.values()) + sum(left_schemas.values())
    return f"{head}; the selection leaves out {' and '.join(out)}, {_mib(left)}, named in the census as waived{widen}"
