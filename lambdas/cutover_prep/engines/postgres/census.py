"""The PostgreSQL census (issue 21): everything on the volume that the server can name.

Every database in ``pg_database`` (connectable or not, templates too) and, in each database the
run may connect to, every relation with storage and each of its forks: tables, partitions,
indexes, TOAST, materialized views, sequences, unlogged relations (their ``init`` fork), the
system catalogues and ``pg_largeobject``. Catalogues shared by the whole cluster
(``pg_class.relisshared``: ``pg_database``, ``pg_authid`` ...) are counted once, in the first
database taken. Temporary relations belong to a session, not to the restored volume, and are
left out.

What the run may read decides ``readable``: ``pg_prewarm`` and a ``ctid`` scan need SELECT on the
relation (``has_table_privilege``), for an index on its table. Tried on PostgreSQL 15.20 as a role
with SELECT on a table it does not own: ``pg_prewarm`` read the table and its primary key, and
refused the table's TOAST relation ("permission denied for table pg_toast_NNN") and
``pg_largeobject`` (not readable by PUBLIC since PostgreSQL 9.0). ``pg_read_binary_file`` needs no
privilege on the relation. A database the run cannot connect to (``datallowconn`` false, no
CONNECT privilege) is one object, sized by ``pg_database_size`` where the server allows it (CONNECT
privilege or ``pg_read_all_stats``, PostgreSQL's "Database Object Size Functions"), else of unknown
size.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from typing import Any, NamedTuple

from cutover_prep.engines import keys
from cutover_prep.engines.base import CensusObject, DiscoveryOptions

# Every database, whether the run may connect, and its size where the server will say it.
DATABASES_SQL = """
SELECT d.datname, d.datistemplate, d.datallowconn,
       has_database_privilege(d.oid, 'CONNECT') AS may_connect,
       CASE WHEN has_database_privilege(d.oid, 'CONNECT') OR pg_has_role('pg_read_all_stats', 'MEMBER')
            THEN pg_database_size(d.oid) END AS bytes
FROM pg_database d
ORDER BY d.datname
"""

# Every relation with storage, attributed to the table it belongs to (indexes -> their table,
# TOAST and TOAST indexes -> the owning table), each fork's size, file and privilege.
RELATIONS_SQL = """
SELECT c.oid::bigint, n.nspname, c.relname, c.relkind, c.relispartition, c.relisshared,
       ln.nspname AS logical_schema, lc.relname AS logical_name, f.fork,
       pg_relation_size(c.oid, f.fork) AS bytes,
       pg_relation_filepath(c.oid) AS path,
       has_table_privilege(COALESCE(i.indrelid, c.oid), 'SELECT') AS may_select
FROM pg_class c
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_index i ON i.indexrelid = c.oid
LEFT JOIN pg_class owner_of_toast ON owner_of_toast.reltoastrelid = COALESCE(i.indrelid, c.oid)
JOIN pg_class lc ON lc.oid = COALESCE(owner_of_toast.oid, i.indrelid, c.oid)
JOIN pg_namespace ln ON ln.oid = lc.relnamespace
CROSS JOIN (VALUES ('main'), ('fsm'), ('vm'), ('init')) AS f(fork)
WHERE c.relkind IN ('r', 'i', 't', 'm', 'S')
  AND c.relpersistence <> 't'
  AND pg_relation_size(c.oid, f.fork) > 0
ORDER BY ln.nspname, lc.relname, c.oid, f.fork
"""

KIND_BY_RELKIND = {"r": "table", "i": "index", "t": "toast", "m": "matview", "S": "sequence"}


def database_selected(name: str, is_template: bool, options: DiscoveryOptions) -> bool:
    """``warmup.databases``: globs of the databases to read (none: every database but the templates,
    which a glob must name to be read)."""
    if options.databases:
        return any(fnmatch.fnmatchcase(name, p) for p in options.databases)
    return not is_template


def schema_selected(schema: str, options: DiscoveryOptions) -> bool:
    """The catalogues (``pg_catalog``, ``information_schema``) are on the volume and read like any
    schema; ``include_schemas`` / ``exclude_schemas`` may leave them out (a waiver the findings name)."""
    if schema.startswith("pg_temp"):
        return False
    if options.include_schemas and not any(fnmatch.fnmatchcase(schema, p) for p in options.include_schemas):
        return False
    return not any(fnmatch.fnmatchcase(schema, p) for p in options.exclude_schemas)


class RelationRow(NamedTuple):
    """One relation fork (``RELATIONS_SQL``): ``schema``/``relname`` its own names, ``logical_schema``/
    ``logical_name`` those of the table it belongs to; ``bytes`` the fork's size, ``path`` its main file."""

    oid: int
    schema: str
    relname: str
    relkind: str
    is_partition: bool
    shared: bool
    logical_schema: str
    logical_name: str
    fork: str
    bytes: int
    path: str | None
    may_select: bool


def segment_name(row: RelationRow) -> tuple[str, str, str]:
    """(schema, name, kind) of a relation fork as discovery and the census name it (``Segment.key``)."""
    kind = KIND_BY_RELKIND[row.relkind]
    if kind == "table" and row.is_partition:
        kind = "partition"
    name = row.relname
    if row.schema == "pg_toast":  # name TOAST data after the table it belongs to
        name = f"{row.logical_name}(toast{' index' if row.relkind == 'i' else ''})"
        kind = "toast" if row.relkind == "t" else "toast_index"
    return row.logical_schema, name, f"{kind}.{row.fork}"


def relation_rows(conn: Any, *, with_shared: bool) -> list[RelationRow]:
    rows = [RelationRow(*r) for r in conn.execute(RELATIONS_SQL)]
    return [r for r in rows if with_shared or not r.shared]


TID_READABLE = ("r", "m", "t")  # a ctid range scan reads the main fork of these only


def unreadable_because(row: RelationRow, method: str, can_read_files: bool) -> str | None:
    """Why the run cannot read this relation fork by ``method`` (None: it can)."""
    if not (row.may_select or can_read_files):
        return "no privilege"
    if method == "tid_range_scan" and (row.fork != "main" or row.relkind not in TID_READABLE):
        return "not readable by SQL"  # without pg_prewarm or pg_read_binary_file: heaps only
    return None


def relation_objects(database: str, rows: Iterable[RelationRow], options: DiscoveryOptions, *,
                     method: str, can_read_files: bool) -> list[CensusObject]:
    out = []
    for row in rows:
        schema, name, kind = segment_name(row)
        key = keys.object_key((schema, name), kind, database=database)  # Segment.key of discovery's segment
        fork = row.fork
        path = row.path + ("" if fork == "main" else f"_{fork}") if row.path else None
        readable, reason = True, None
        if not schema_selected(schema, options):
            reason = "excluded by input"
        elif why := unreadable_because(row, method, can_read_files):
            readable, reason = False, why
        out.append(CensusObject(database=database, schema=schema, name=name, kind=kind, bytes=int(row.bytes),
                                key=key, readable=readable, reason=reason, file=path,
                                # a rewrite (VACUUM FULL, TRUNCATE, CLUSTER) keeps the OID but not the file
                                identity=f"{row.oid}/{row.path}"))
    return out


def database_object(name: str, bytes_: int | None, reason: str, *, readable: bool) -> CensusObject:
    """A database the census does not go into, as one object (``pg_database_size``; unknown: 0)."""
    return CensusObject(database=name, schema="", name=name, kind="database", bytes=int(bytes_ or 0),
                        key=keys.database_key(name), readable=readable, reason=reason, size_known=bytes_ is not None)
