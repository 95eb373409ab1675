"""What a MySQL / MariaDB server holds that must be read, as ``Segment`` objects (pure: rows in, segments out).

Per table (and per partition or subpartition, each its own segment):
- InnoDB with a primary key, or a UNIQUE index on NOT NULL columns (InnoDB's clustered index
  then): ``clustered``, read by key ranges (``pk_walk``), splittable: its "blocks" are the
  pages of ``DATA_LENGTH`` and the rows are spread over them by the row estimate;
- InnoDB without one (the hidden ``GEN_CLUST_INDEX``): ``clustered (GEN_CLUST_INDEX)``, one
  whole-table scan (``full_scan``), not splittable;
- MyISAM, Aria and other engines with files: ``table``, one whole-table scan;
- every secondary index (all indexes of MyISAM/Aria): ``index``, a covering scan
  (``index_scan``); sizes from ``mysql.innodb_index_stats`` when readable, else
  ``INDEX_LENGTH`` shared evenly;
- FULLTEXT and SPATIAL indexes, MariaDB's IGNORED indexes (no hint can name them) and InnoDB's
  FULLTEXT auxiliary tables: no complete SQL read path, so ``not_readable`` segments: the plan
  names them and reading them is a ``PermanentReadError`` naming them (never silently skipped).
MEMORY and BLACKHOLE tables have nothing on disk and are not listed.
"""

from __future__ import annotations

import fnmatch
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from cutover_prep.engines import keys
from cutover_prep.engines.base import DiscoveryOptions, Extent, Segment
from cutover_prep.engines.locators import MysqlLocator
from cutover_prep.engines.mysql.sql import SYSTEM_SCHEMAS, decode_filename, is_offpage

NO_STORAGE_ENGINES = {"memory", "blackhole", "sequence"}
INTEGER_TYPES = {"tinyint", "smallint", "mediumint", "int", "integer", "bigint"}
NOT_READABLE_INDEX = {"FULLTEXT": "a FULLTEXT index has no scan a query can force",
                      "SPATIAL": "a SPATIAL (R-tree) index has no full scan a query can force"}
IGNORED_INDEX = ("an IGNORED index (MariaDB 10.6+) is maintained on disk but no query can use it: FORCE INDEX "
                 "treats it as absent (ALTER TABLE ... ALTER INDEX ... NOT IGNORED would make it readable)")


@dataclass
class Index:
    name: str
    unique: bool
    index_type: str
    columns: list[tuple[str, int | None]] = field(default_factory=list)  # (column, prefix length)
    ignored: bool = False  # MariaDB's IGNORED: no hint can name it


@dataclass
class Column:
    name: str
    data_type: str
    nullable: bool
    octet_length: int
    stored: bool


@dataclass
class Catalogue:
    """The INFORMATION_SCHEMA rows discovery needs (see ``sql``)."""

    page_size: int
    tables: list[tuple]  # TABLES_SQL rows
    partitions: list[tuple]  # PARTITIONS_SQL rows
    statistics: list[tuple]  # STATISTICS_SQL rows
    columns: list[tuple]  # COLUMNS_SQL rows
    index_pages: dict[tuple[str, str, str | None, str], int] | None  # (schema, table, partition, index) -> pages
    fulltext_aux: list[tuple[str, int]]  # (tablespace name, bytes)


def schema_selected(schema: str, options: DiscoveryOptions) -> bool:
    if not options.include_system and schema.lower() in SYSTEM_SCHEMAS:
        return False
    if options.databases and not any(fnmatch.fnmatchcase(schema, p) for p in options.databases):
        return False
    if options.include_schemas and not any(fnmatch.fnmatchcase(schema, p) for p in options.include_schemas):
        return False
    return not any(fnmatch.fnmatchcase(schema, p) for p in options.exclude_schemas)


def _indexes(rows: Iterable[tuple]) -> dict[tuple[str, str], dict[str, Index]]:
    out: dict[tuple[str, str], dict[str, Index]] = {}
    for schema, table, name, non_unique, _seq, column, sub_part, index_type, *ignored in rows:
        index = out.setdefault((schema, table), {}).setdefault(
            name, Index(name, not int(non_unique), str(index_type or "BTREE").upper(),
                        ignored=bool(ignored) and str(ignored[0]).upper() == "YES"))
        if column is not None:  # a functional key part (MySQL 8) has no column
            index.columns.append((column, int(sub_part) if sub_part is not None else None))
    return out


def _columns(rows: Iterable[tuple]) -> dict[tuple[str, str], list[Column]]:
    out: dict[tuple[str, str], list[Column]] = {}
    for schema, table, name, data_type, nullable, octets, extra in rows:
        out.setdefault((schema, table), []).append(Column(
            name, str(data_type).lower(), nullable == "YES", int(octets or 0), "VIRTUAL" not in str(extra).upper()))
    return out


def clustered_key(engine: str, indexes: dict[str, Index], columns: list[Column]) -> Index | None:
    """InnoDB's clustered index: the PRIMARY KEY, else the first UNIQUE index whose columns are all
    NOT NULL (whole columns); None means the hidden GEN_CLUST_INDEX (or not InnoDB)."""
    if engine != "innodb":
        return None
    if "PRIMARY" in indexes:
        return indexes["PRIMARY"]
    not_null = {c.name for c in columns if not c.nullable}
    for index in indexes.values():
        if index.unique and index.index_type == "BTREE" and index.columns and all(
                col in not_null and prefix is None for col, prefix in index.columns):
            return index
    return None


def pages_of(nbytes: int, page_size: int) -> int:
    return max(1, math.ceil(int(nbytes) / page_size))


def make_segment(schema: str, name: str, kind: str, pages: int, page_size: int, locator: MysqlLocator,
                 partition: str | None, splittable: bool, key_names: tuple[str, ...] = ()) -> Segment:
    """A segment keyed with MySQL's quotes (``engines.keys``); ``key_names``: (table, index) of an index."""
    return Segment(schema=schema, name=name, kind=kind, bytes=pages * page_size, block_size=page_size,
                   extents=(Extent(0, 0, pages),), locator=locator, partition=partition, splittable=splittable,
                   quote_char=keys.MYSQL, key_names=key_names)


def segments(cat: Catalogue, options: DiscoveryOptions) -> list[Segment]:
    indexes, columns = _indexes(cat.statistics), _columns(cat.columns)
    parts: dict[tuple[str, str], list[tuple[str, int, int, int]]] = {}
    for schema, table, part, sub, data_len, index_len, rows in cat.partitions:
        parts.setdefault((schema, table), []).append((sub or part, int(data_len), int(index_len), int(rows)))
    out: list[Segment] = []
    for schema, table, engine, data_len, index_len, rows, _options in cat.tables:
        engine = str(engine or "").lower()
        if not schema_selected(schema, options) or not engine or engine in NO_STORAGE_ENGINES:
            continue
        out.extend(_table_segments(cat, schema, table, engine, indexes.get((schema, table), {}),
                                   columns.get((schema, table), []),
                                   parts.get((schema, table)) or [(None, int(data_len), int(index_len), int(rows))]))
    for name, size in cat.fulltext_aux:
        db, _, rest = name.partition("/")
        schema = decode_filename(db)
        if schema_selected(schema, options):
            aux = decode_filename(rest)
            out.append(make_segment(schema, aux, "fulltext_aux", pages_of(size, cat.page_size), cat.page_size,
                                    MysqlLocator(read="not_readable", schema=schema, table=aux,
                                                 why="an InnoDB FULLTEXT auxiliary table has no SQL read path"),
                                    None, False))
    return out


def _table_segments(cat: Catalogue, schema: str, table: str, engine: str, indexes: dict[str, Index],
                    columns: list[Column], parts: list[tuple[str | None, int, int, int]]) -> list[Segment]:
    page = cat.page_size
    key = clustered_key(engine, indexes, columns)
    stored = [c for c in columns if c.stored]
    offpage = [c.name for c in stored if is_offpage(c.data_type, c.octet_length)]
    key_columns = [c for c, _ in key.columns] if key else []
    secondary = [i for i in indexes.values() if i is not key]
    base = {"schema": schema, "table": table, "engine": engine}
    out: list[Segment] = []
    for part, data_len, index_len, rows in parts:
        pages = pages_of(data_len, page)
        if key is not None:
            locator = {**base, "read": "pk_walk", "partition": part, "key_index": key.name,
                       "key_columns": key_columns, "offpage": offpage, "rows": rows, "pages": pages}
            types = {c.name: c.data_type for c in columns}
            if len(key_columns) == 1 and types.get(key_columns[0]) in INTEGER_TYPES:
                locator["probe"] = {"column": key_columns[0]}  # single-row lookups for the probes and the sweep
            out.append(make_segment(schema, table, "clustered", pages, page, MysqlLocator.model_validate(locator),
                                    part, True))
        else:
            kind = "clustered (GEN_CLUST_INDEX)" if engine == "innodb" else "table"
            out.append(make_segment(schema, table, kind, pages, page, MysqlLocator.model_validate({
                **base, "read": "full_scan", "partition": part, "rows": rows,
                "indexes": sorted(n for n, i in indexes.items() if not i.ignored),  # IGNORE INDEX (ignored): 1176
                "columns": [c.name for c in stored]}), part, False))
        out.extend(_index_segments(cat, schema, table, engine, part, index_len, secondary, key_columns))
    return out


def _index_segments(cat: Catalogue, schema: str, table: str, engine: str, part: str | None, index_len: int,
                    secondary: list[Index], key_columns: list[str]) -> list[Segment]:
    if not secondary:
        return []
    page = cat.page_size
    stats_part = part.lower() if part else None  # see sql.stats_table_key
    known = {i.name: cat.index_pages.get((schema, table, stats_part, i.name)) for i in secondary} \
        if cat.index_pages else {}
    even = pages_of(index_len, page) // len(secondary) or 1
    out = []
    for index in secondary:
        pages = known.get(index.name) or even
        names = {"schema": schema, "table": table, "engine": engine, "partition": part, "index": index.name}
        why = IGNORED_INDEX if index.ignored else NOT_READABLE_INDEX.get(index.index_type)
        if why:
            locator = MysqlLocator.model_validate({**names, "read": "not_readable", "why": why})
        else:
            whole = [c for c, prefix in index.columns if prefix is None]
            # InnoDB secondary entries also hold the clustered key: reading it stays covering.
            extra = [c for c in key_columns if c not in whole] if engine == "innodb" else []
            prefixed = bool(index.columns and index.columns[0][1] is not None)  # a prefix first: no covering scan
            locator = MysqlLocator.model_validate({**names, "read": "index_scan", "index_columns": whole + extra,
                                                   **({"range_column": index.columns[0][0]} if prefixed else {})})
        # named table.index (each quoted where needed), keyed by the two names apart: `b`.`c.t` index i and
        # `b`.`c` index `t.i` are two keys (issue 32)
        out.append(make_segment(schema, keys.label((table, index.name), q=keys.MYSQL), "index", max(1, int(pages)),
                                page, locator, part, False, key_names=(table, index.name)))
    return out
