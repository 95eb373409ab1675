"""The census of a MySQL / MariaDB volume (issue 21): everything on it the server can name, as
``CensusObject`` rows (pure: rows in, objects out; ``MySQLEngine.census`` asks the server).

- Every InnoDB tablespace, from ``INNODB_SYS_TABLES`` + ``INNODB_SYS_TABLESPACES`` (MariaDB) or
  ``INNODB_TABLESPACES`` + ``INNODB_DATAFILES`` (MySQL 8). These views need only PROCESS and list
  every tablespace, including those of databases the run's user may not read;
  ``INFORMATION_SCHEMA.TABLES`` lists only what the user may read, so a tablespace of a table it
  does not list is one object, ``no privilege``, with the file's size (``FILE_SIZE``). MariaDB
  knows the size only of a tablespace opened since it started (a just restored instance: none);
  else the persistent statistics' pages (``mysql.innodb_table_stats``, where readable), else the
  size is not known (``size_known`` false). On MariaDB such a table's ``.frm`` and its database's
  ``db.opt`` (no privilege either) are named too, without a size.
- A file-per-table tablespace (``db/t``, ``db/t#P#p0``) of a table the user can see holds the
  segments the plan gives that table (partition): its clustered index and each secondary index.
  Each is one object with the plan's key and bytes and the tablespace's ``file``, so the census
  joins the plan key for key; the extents no index holds (``DATA_FREE``) are one more object,
  ``free space``, ``not readable by SQL`` (no query reads them; a file with many is named).
- FULLTEXT auxiliary tablespaces (``db/FTS_...``) have the plan's ``fulltext_aux`` key and no
  SQL read path, and a user's general tablespace (MySQL 8) holds the application's tables: both
  ``not readable by SQL``, unread as any object of the application.
- ``engine-internal`` (issue 33): the engine's own files, which no SQL reads and no application query
  touches: the system and undo tablespaces (``(innodb).<name>#system_tablespace``, the key
  ``discover(include_system=True)`` gives them), MySQL 8's data dictionary (the ``mysql`` tablespace,
  ``mysql.ibd``), the temporary tablespace (recreated at every start: named with its bytes all the
  same), a tablespace's free extents, and the redo log (``CensusRows.redo``). The findings count them
  apart; the verdict's ENGINE_INTERNAL judges them by RDS's initialization of the whole volume.
- MyISAM / Aria tables the user can see: the plan's segments, the table's with its ``.MYD``
  (``.MAD``) file, the indexes' with ``.MYI`` (``.MAI``); other engines with storage (CSV,
  ARCHIVE ...) without a file. A MyISAM/Aria table of a database the user cannot see is in no
  view it may read: it cannot be named.
- An object of a schema the input does not select is ``excluded by input`` (a waiver): by an
  explicit ``exclude_schemas`` / ``include_schemas`` / ``databases`` pattern, or a system schema
  (``mysql``, ``sys``, ``performance_schema``, ``information_schema``) while ``include_system`` is off
  (the default): the system schemas follow the selection (issue 33).

``file`` is the path relative to the data directory.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any

from cutover_prep.engines import base, keys
from cutover_prep.engines.base import CensusObject, DiscoveryOptions, Segment
from cutover_prep.engines.locators import MysqlLocator
from cutover_prep.engines.mysql.sql import SYSTEM_SCHEMAS, decode_filename, split_file_name, stats_table_key

NO_PRIVILEGE, NOT_SQL, EXCLUDED = "no privilege", "not readable by SQL", "excluded by input"
ENGINE_INTERNAL = base.ENGINE_INTERNAL
DATA_DICTIONARY = "mysql"  # MySQL 8's data dictionary tablespace (mysql.ibd); no other tablespace may take the name
SIZE_KNOWN = "size_known" in {f.name for f in fields(CensusObject)}  # the server may not say a size
NO_FILES_SCHEMAS = ("information_schema", "performance_schema")  # in memory: nothing on the volume
FILE_SUFFIXES = {"myisam": (".MYD", ".MYI"), "aria": (".MAD", ".MAI")}


@dataclass
class CensusRows:
    """What ``MySQLEngine.census`` read from the server."""

    datadir: str
    tablespaces: list[tuple]  # Dialect.census_tablespaces_sql rows: space, name, file_size, path, type
    tables: list[tuple]  # TABLES_SQL rows (what the user may see)
    partitions: list[tuple]  # PARTITIONS_SQL rows
    segments: list[Segment]  # the plan of every table the user may see (all schemas selected)
    names: dict[str, str] = field(default_factory=dict)  # file-name encoded piece -> name (the server's decoding)
    free: dict[tuple[str, str, str | None], int] = field(default_factory=dict)  # InnoDB DATA_FREE per (partition)
    stats: dict[str, int] = field(default_factory=dict)  # "db/table" (as the file is named) -> pages, persistent stats
    page_size: int = 16384
    frm: bool = False  # MariaDB: each table has its definition in db/table.frm, each database db/db.opt
    redo: list[tuple[str, int]] = field(default_factory=list)  # the redo log: (file or directory, bytes)

    def decode(self, text: str) -> str:
        return self.names.get(text) or decode_filename(text)


def excluded(schema: str, options: DiscoveryOptions) -> bool:
    """Left out by the input: an explicit pattern, or a system schema while ``include_system`` is off."""
    if not options.include_system and schema.lower() in SYSTEM_SCHEMAS:
        return True
    if options.databases and not any(fnmatch.fnmatchcase(schema, p) for p in options.databases):
        return True
    if options.include_schemas and not any(fnmatch.fnmatchcase(schema, p) for p in options.include_schemas):
        return True
    return any(fnmatch.fnmatchcase(schema, p) for p in options.exclude_schemas)


def relative(path: str | None, datadir: str) -> str | None:
    """``./db/t.ibd`` or ``/rdsdbdata/db/db/t.ibd`` (under the data directory) as ``db/t.ibd``."""
    if not path:
        return None
    path = str(path)
    if path.startswith("./"):
        return path[2:]
    root = datadir.rstrip("/") + "/"
    if datadir and path.startswith(root):
        return path[len(root):]
    return path  # outside the data directory (CREATE TABLE ... DATA DIRECTORY): as written


def _by_table(segments: Iterable[Segment]) -> dict[tuple[str, str, str | None], list[Segment]]:
    """(schema, table, partition in lower case) -> the plan's segments of it (FULLTEXT aux aside)."""
    out: dict[tuple[str, str, str | None], list[Segment]] = {}
    for seg in segments:
        if seg.kind != "fulltext_aux":
            part = seg.partition.lower() if seg.partition else None
            out.setdefault((seg.schema, str(MysqlLocator.of(seg.locator).table or seg.name), part), []).append(seg)
    return out


def objects(rows: CensusRows, options: DiscoveryOptions) -> list[CensusObject]:
    visible = {(str(s), str(t)) for s, t, *_ in rows.tables}
    engines = {(str(s), str(t)): str(e or "").lower() for s, t, e, *_ in rows.tables}
    planned = _by_table(rows.segments)
    out: list[CensusObject] = []

    def add(schema: str, name: str, kind: str, nbytes: int | None, key: str, reason: str | None,
            file: str | None, space: Any = None) -> None:
        if excluded(schema, options):  # the input's waiver says why, whatever else holds
            reason = EXCLUDED
        unknown = {"size_known": False} if nbytes is None and SIZE_KNOWN else {}
        # InnoDB's space id: a table rebuilt (TRUNCATE, OPTIMIZE, ALTER ... FORCE) or created again has a new one
        identity = {"identity": f"space {space}"} if space is not None else {}
        out.append(CensusObject(database=None, schema=schema, name=name, kind=kind, bytes=max(0, int(nbytes or 0)),
                                key=key, readable=reason is None, reason=reason, file=file, **unknown, **identity))

    def add_planned(segs: list[Segment], file_of: Any, space: Any = None) -> None:
        for seg in segs:
            add(seg.schema, seg.name + (f":{seg.partition}" if seg.partition else ""), seg.kind, seg.bytes, seg.key,
                None, file_of(seg), space)

    defined: set[tuple[str, str]] = set()  # invisible tables whose .frm is named
    opts: set[str] = set()  # invisible databases whose db.opt is named
    for space, name, size, path, space_type in rows.tablespaces:
        name, file = str(name), relative(path, rows.datadir)
        space_type = str(space_type or "")
        if space_type in ("System", "Undo", "Temporary") or "/" not in name:
            kind = _engine_kind(name, space_type)
            # the key discover(include_system=True) gives the system and undo tablespaces
            key_kind = kind if kind not in ("system_tablespace", "undo_tablespace") else "system_tablespace"
            out.append(CensusObject(database=None, schema="(innodb)", name=name, kind=kind,
                                    bytes=int(size or 0),
                                    key=_key(("(innodb)", name), key_kind), readable=False,
                                    reason=NOT_SQL if kind == "general_tablespace" else ENGINE_INTERNAL, file=file))
            continue
        db, _, rest = name.partition("/")
        if rest.upper().startswith("FTS_"):  # named as discovery names it (sql.decode_filename)
            schema, aux = decode_filename(db), decode_filename(rest)
            add(schema, aux, "fulltext_aux", int(size or 0) or None, _key((schema, aux), "fulltext_aux"), NOT_SQL, file,
                space)
            continue
        schema = rows.decode(db)
        table, part = stats_table_key(rest, rows.decode)
        partition = f":{part}" if part else ""
        segs = planned.get((schema, table, part))
        if (schema, table) in visible and segs:
            add_planned(segs, lambda _seg, file=file: file, space)
            free = rows.free.get((schema, table, part), 0)
            if free > 0:  # extents of the file no index holds: no query reads them
                add(schema, f"{table}{partition}", "free space", free, _key((schema, table), "free space", part),
                    ENGINE_INTERNAL, file, space)
        else:  # not listed by INFORMATION_SCHEMA.TABLES: the user has no privilege on it
            if not size:  # not opened since the server started (MariaDB says 0): the persistent statistics, if any
                pages = rows.stats.get(name)
                size = pages * rows.page_size if pages else None
            reason = None if (schema, table) in visible else NO_PRIVILEGE
            add(schema, f"{table}{partition}", "tablespace", size, _key((schema, table), "tablespace", part),
                reason, file, space)
            if rows.frm and reason and (schema, table) not in defined:  # its definition is on the volume too
                defined.add((schema, table))
                raw_table = split_file_name(rest)[0]
                add(schema, table, "table definition", None, _key((schema, table), "table definition"), reason,
                    f"{db}/{raw_table}.frm")
                if schema not in {s for s, _ in visible} and schema not in opts:
                    opts.add(schema)
                    add(schema, "db.opt", "database options", None, _key((schema,), "database options"), reason,
                        f"{db}/db.opt")
    for (schema, table, _part), segs in planned.items():  # MyISAM, Aria and other engines with files
        engine = engines.get((schema, table), "")
        if engine == "innodb" or schema.lower() in NO_FILES_SCHEMAS:
            continue
        suffixes = FILE_SUFFIXES.get(engine)
        stem = f"{_encode(schema)}/{_encode(table)}"
        stem += f"#P#{_encode(segs[0].partition)}" if segs[0].partition else ""
        add_planned(segs, lambda seg, stem=stem, suffixes=suffixes: None if suffixes is None
                    else stem + suffixes[1 if seg.kind == "index" else 0])
    for file, size in rows.redo:  # written by every change, read at crash recovery: no SQL reads it
        out.append(CensusObject(database=None, schema="(innodb)", name="redo_log", kind="redo_log",
                                bytes=max(0, int(size or 0)), key=_key(("(innodb)", "redo_log"), "redo_log"),
                                readable=False, reason=ENGINE_INTERNAL, file=file))
    return out


def _engine_kind(name: str, space_type: str) -> str:
    """The kind of a tablespace that is no table's own file: InnoDB's system, undo or temporary tablespace,
    MySQL 8's data dictionary, or a general tablespace a user created (``CREATE TABLESPACE``)."""
    if space_type == "Temporary" or name == "innodb_temporary":  # MySQL 8 says System for it
        return "temporary_tablespace"
    if space_type == "Undo":
        return "undo_tablespace"
    if space_type == "System":
        return "system_tablespace"
    return "data_dictionary" if name == DATA_DICTIONARY else "general_tablespace"


def with_engine_files(tablespaces: list[tuple], files: Iterable[tuple]) -> list[tuple]:
    """The tablespaces with the engine's files that their view left out (``Dialect.engine_files_sql``: MySQL 8's
    system and temporary tablespaces), each space once, in space order as the census SQL gives them."""
    known = {int(row[0]) for row in tablespaces if row[0] is not None}
    extra = [tuple(row) for row in files if row[0] is not None and int(row[0]) not in known]
    return sorted([*tablespaces, *extra], key=lambda row: int(row[0]) if row[0] is not None else -1)


def _key(names: tuple[str, ...], kind: str, partition: str | None = None) -> str:
    """A census key as discovery builds its segments' (``engines.keys``, MySQL's quotes)."""
    return keys.object_key(names, kind, partition=partition, q=keys.MYSQL)


def file_name_pieces(tablespaces: Iterable[tuple]) -> set[str]:
    """The file-name encoded pieces (database, table, partition) of the tablespace names that
    need decoding (they hold an ``@``), for the server to decode (``sql.DECODE_FILENAME_SQL``)."""
    out: set[str] = set()
    for _space, name, *_ in tablespaces:
        db, _, rest = str(name).partition("/")
        table, part = split_file_name(rest)
        out.update(p for p in (db, table, part) if p and "@" in p)
    return out


def _encode(name: str) -> str:
    """MySQL's file-name encoding of a name (letters, digits and ``_`` as written, the rest ``@xxxx``)."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch == "_") else f"@{ord(ch):04x}" for ch in name)
