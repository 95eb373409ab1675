"""Issue 32, finding 1: no two objects of one database ever share a key.

Keys were ``db/schema.name[:partition]#kind`` with the names pasted in: ``"b"."c.t"`` and ``"b.c"."t"``
were one key, the census kept the last, and a 14.5 MiB table nobody read was named nowhere (READY).
Here every engine's key builder, as the product calls it (``Segment.key`` as discovery makes segments,
each census's keys), is fed names generated from pieces an identifier may hold (the engines accept any
character in a quoted identifier: PostgreSQL "Identifiers and Key Words", MySQL "Schema Object Names",
Oracle "Database Object Names and Qualifiers"): separators, quotes of every engine, case twins and
Unicode twins (NFC ``é`` and NFD ``e`` + U+0301 are different names to all three engines, which compare
identifiers byte for byte). Distinct name tuples must give distinct keys. A deterministic generator (no
hypothesis in the project's environment): every combination of the pieces, so a failure names its case.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Iterable

from cutover_prep.engines.base import DiscoveryOptions, Extent, Segment
from cutover_prep.engines.mysql import census as mysql_census
from cutover_prep.engines.mysql import discovery
from cutover_prep.engines.oracle import census as oracle_census
from cutover_prep.engines.oracle.datafiles import datafile_segment
from cutover_prep.engines.postgres import census as pg_census

NFC, NFD = unicodedata.normalize("NFC", "é"), unicodedata.normalize("NFD", "é")
PIECES = ["b", "c", "t", "B", "b.c", "c.t", "c.t.i", 'a"b', '"', "a`b", "`", "a'b", "a#b", "#", "a:b", "a/b", "/",
          "x y", NFC, NFD, "p0", "t(toast)"]
assert NFC != NFD


def _unique(keys: Iterable[tuple[object, str]]) -> None:
    """Every key was made from one tuple only."""
    seen: dict[str, object] = {}
    for fields, key in keys:
        assert seen.setdefault(key, fields) == fields, f"{fields!r} and {seen[key]!r} share the key {key!r}"


def _segment(schema: str, name: str, kind: str, **more: object) -> Segment:
    return Segment(schema=schema, name=name, kind=kind, bytes=8192, block_size=8192, extents=(Extent(0, 0, 1),),
                   locator={}, **more)  # type: ignore[arg-type]


def test_postgres_keys_are_one_per_relation_fork_and_the_census_gives_the_plans_key() -> None:
    rows, out = [], []
    for database, schema, name in itertools.product(("test", "a/b", NFD), PIECES, PIECES):
        for relkind, fork in (("r", "main"), ("r", "fsm"), ("i", "main")):
            rows.append((database, pg_census.RelationRow(
                oid=len(rows), schema=schema, relname=name, relkind=relkind, is_partition=False, shared=False,
                logical_schema=schema, logical_name=name, fork=fork, bytes=8192, path=None, may_select=True)))
    for database in ("test", "a/b", NFD):
        mine = [r for d, r in rows if d == database]
        objs = pg_census.relation_objects(database, mine, DiscoveryOptions(), method="pg_prewarm",
                                          can_read_files=False)
        for row, obj in zip(mine, objs, strict=True):
            schema, name, kind = pg_census.segment_name(row)
            out.append(((database, schema, name, kind), obj.key))
            # discovery's segment of the same fork has the census's key: the plan and the census join
            assert _segment(schema, name, kind, database=database).key == obj.key
    _unique(out)
    # a database the census does not go into is one object, never another's key
    _unique([((name, "database"), pg_census.database_object(name, 1, "no privilege", readable=False).key)
             for name in PIECES] + out)


def test_postgres_toast_is_never_a_table_of_the_same_name() -> None:
    """TOAST is named after its table, ``t(toast)``: a real table called ``t(toast)`` differs by its kind."""
    fork = {"oid": 16390, "is_partition": False, "shared": False, "fork": "main", "bytes": 8192, "path": None,
            "may_select": True}
    toast = pg_census.segment_name(pg_census.RelationRow(relkind="t", relname="pg_toast_16384", schema="pg_toast",
                                                         logical_schema="s", logical_name="t", **fork))
    table = pg_census.segment_name(pg_census.RelationRow(relkind="r", relname="t(toast)", schema="s",
                                                         logical_schema="s", logical_name="t(toast)", **fork))
    assert toast[:2] == table[:2] and toast[2] != table[2]
    assert _segment(*toast, database="d").key != _segment(*table, database="d").key


def test_oracle_keys_of_segments_and_datafiles_are_one_per_object() -> None:
    out = []
    for owner, name, part in itertools.product(PIECES, PIECES, (None, *PIECES[:8])):
        for seg_type in ("TABLE PARTITION", "INDEX"):
            key = oracle_census.segment_key(owner, name, part, seg_type)
            assert _segment(owner, name, seg_type, partition=part).key == key  # discovery's segment joins it
            out.append(((owner, name, part, seg_type), key))
    for file_id, tablespace in enumerate(PIECES):
        seg = datafile_segment(file_id, tablespace, 10, 8192)
        (obj,) = oracle_census.datafile_objects([(file_id, tablespace, "/f", 10, 8192, "AVAILABLE", "ONLINE")])
        assert seg.key == obj.key
        out.append(((tablespace, file_id), obj.key))
    _unique(out)


def test_mysql_keys_of_tables_indexes_and_partitions_are_one_per_object() -> None:
    """Discovery's segments from a catalogue of every (schema, table, index) of the pieces: ``b``.``c.t`` and
    ``b.c``.``t``, index ``t.i`` of table ``c`` and index ``i`` of table ``c.t``, partitions ``p:0`` ..."""
    names = PIECES[:14]
    tables, statistics, columns, partitions = [], [], [], []
    for schema, table in itertools.product(names, names):
        tables.append((schema, table, "InnoDB", 16384, 16384, 1, ""))
        columns.append((schema, table, "id", "int", "NO", 0, ""))
        statistics.append((schema, table, "PRIMARY", 0, 1, "id", None, "BTREE", "NO"))
        for index in ("i", "t.i", "c.t.i", "a`b"):
            statistics.append((schema, table, index, 1, 1, "id", None, "BTREE", "NO"))
        if table in ("c", "t"):
            partitions += [(schema, table, part, None, 16384, 16384, 1) for part in ("p0", "p:0", "p0#i")]
    cat = discovery.Catalogue(page_size=16384, tables=tables, partitions=partitions, statistics=statistics,
                              columns=columns, index_pages=None, fulltext_aux=[])
    segs = discovery.segments(cat, DiscoveryOptions(include_system=True))
    out = [((s.schema, s.locator.table, s.locator.index, s.partition, s.kind), s.key) for s in segs]
    assert len(out) == len({f for f, _ in out})  # the generator made each object once
    _unique(out)
    # the census of the same tables (the user sees them all): the plan's keys, none twice
    spaces = [(i, f"{mysql_census._encode(s)}/{mysql_census._encode(t)}", 16384, None, "Single")
              for i, (s, t, *_) in enumerate(tables)]
    objs = mysql_census.objects(mysql_census.CensusRows(datadir="/d/", tablespaces=spaces, tables=tables,
                                                        partitions=partitions, segments=segs), DiscoveryOptions())
    assert {o.key for o in objs} >= {s.key for s in segs if not s.partition}
    # ... and of tables the user cannot see: one tablespace object each
    hidden = mysql_census.objects(mysql_census.CensusRows(datadir="/d/", tablespaces=spaces, tables=[],
                                                          partitions=[], segments=[]), DiscoveryOptions())
    _unique([((o.schema, o.name, o.kind), o.key) for o in hidden])
    assert len([o for o in hidden if o.kind == "tablespace"]) == len(tables)


def test_plain_names_keep_their_keys_and_others_are_quoted_by_the_engines_rules() -> None:
    """Stored plans and profiles of plain names still match; ``"b"."c.t"`` as PostgreSQL writes it."""
    assert _segment("public", "orders", "table.main", database="test").key == "test/public.orders#table.main"
    assert _segment("b", "c.t", "table.main", database="d").key == 'd/b."c.t"#table.main'
    assert _segment("b.c", "t", "table.main", database="d").key == 'd/"b.c".t#table.main'
    assert _segment("s", 'say "hi"', "TABLE").key == 's."say ""hi"""#TABLE'
    assert oracle_census.segment_key("APP", "T", "P:1", "TABLE PARTITION") == 'APP.T:"P:1"#TABLE PARTITION'
    mysql = {s.key for s in discovery.segments(discovery.Catalogue(
        page_size=16384, tables=[("b", "c.t", "InnoDB", 16384, 16384, 1, "")], partitions=[],
        statistics=[("b", "c.t", "PRIMARY", 0, 1, "id", None, "BTREE", "NO"),
                    ("b", "c.t", "k`1", 1, 1, "id", None, "BTREE", "NO")],
        columns=[("b", "c.t", "id", "int", "NO", 0, "")], index_pages=None, fulltext_aux=[]), DiscoveryOptions())}
    assert mysql == {"b.`c.t`#clustered", "b.`c.t`.`k``1`#index"}


def test_every_key_reads_back_to_the_names_it_was_made_of() -> None:
    """The builders are injective because each key parses back to its fields (``keys.parse``)."""
    from cutover_prep.engines import keys

    for q in keys.QUOTES:
        for database, schema, name, part in itertools.product((None, "test", "a/b"), PIECES, PIECES,
                                                              (None, "p0", "p:0", "`", '"')):
            key = keys.object_key((schema, name), "table.main", database=database, partition=part, q=q)
            assert keys.parse(key) == (database, (schema, name), part, "table.main", q if not all(
                map(keys.bare, filter(None, (database, schema, name, part)))) else keys.ANSI), key
        for database in PIECES:
            assert keys.parse(keys.database_key(database, q=q))[:4] == (database, (), None, "database")
    assert keys.display('db/b."c.t"#table.main') == 'b."c.t"' and keys.display("app.t:P0#clustered") == "app.t:P0"
    assert keys.display("db/#database") is None


def test_the_report_names_the_two_objects_apart() -> None:
    """The report's census rows wrote ``schema.name``: ``b.c.t`` for both; now each as its key writes it."""
    from cutover_prep.dal.records.census import census_json
    from cutover_prep.report import engineer
    from tests.unit.stored_sections import census_section

    rows = [pg_census.RelationRow(oid=i, schema=s, relname=n, relkind="r", is_partition=False, shared=False,
                                  logical_schema=s, logical_name=n, fork="main", bytes=8192 * (i + 1), path=None,
                                  may_select=False) for i, (s, n) in enumerate((("b", "c.t"), ("b.c", "t")))]
    objects = pg_census.relation_objects("d", rows, DiscoveryOptions(), method="pg_prewarm", can_read_files=False)
    section = census_section(census_json(objects), {})
    names = sorted(r["name"] for r in engineer.census({"census": section})["rows"])
    assert names == ['"b.c".t', 'b."c.t"']


def test_the_reports_coverage_names_the_two_relations_and_schemas_apart() -> None:
    """The coverage rows wrote ``schema.name`` (largest relations) and ``database.schema``: ``b.c.t`` twice and
    ``d.b.c`` for the database ``d`` schema ``b.c`` and the database ``d.b`` schema ``c``."""
    from cutover_prep.report import engineer
    from tests.unit.stored_sections import coverage_section

    segs = [_segment(s, n, "table.main", database=db) for db, s, n in
            (("d", "b", "c.t"), ("d", "b.c", "t"), ("d", "b.c", "t2"), ("d.b", "c", "t"))]
    section = coverage_section([{"key": s.key, "database": s.database, "schema": s.schema, "name": s.name,
                                 "kind": s.kind, "bytes": 8192, "bytes_read": 8192, "status": "READ"} for s in segs])
    view = engineer.coverage({"coverage": section})
    assert sorted(r["name"] for r in view["largest"]) == ['"b.c".t', '"b.c".t2', 'b."c.t"', "c.t"]
    assert sorted(r["name"] for r in view["schemas"]) == ['"d.b".c', 'd."b.c"', "d.b"]


class _Rows:
    def __init__(self, rows: list[tuple]) -> None:
        self.rows = rows

    def fetchall(self) -> list[tuple]:
        return self.rows


class _PgStats:
    """pg_statio_user_tables / _indexes as PostgreSQL answers them (engines.postgres.hotset's statements)."""

    def __init__(self, tables: list[tuple], indexes: list[tuple]) -> None:
        self.tables, self.indexes = tables, indexes

    def execute(self, statement: str) -> _Rows:
        return _Rows(self.indexes if "pg_statio_user_indexes" in statement.split("FROM")[-1] else self.tables)


def test_the_hot_set_names_two_relations_apart_and_the_plan_reads_only_the_hot_one() -> None:
    """``cutover-prep hotset`` printed both as ``b.c.t``, and the name matched both tables' segments."""
    from datetime import UTC, datetime

    from cutover_prep.engines.hotset import SOURCE_STATISTICS, Source, Taken
    from cutover_prep.engines.postgres import hotset as pg_hotset
    from cutover_prep.hotset import lines, rank
    from cutover_prep.warmup.planning import MIB, PlanOptions, plan_units

    figures = [0] * 10
    conn = _PgStats([("b", "c.t", 900, *figures[1:], 8192, False), ("b.c", "t", 0, *figures[1:], 8192, False)], [])
    relations = pg_hotset.relations_of(conn, "d")
    profile = rank(Taken(engine="postgres", server="PostgreSQL", relations=relations,
                         sources=[Source(SOURCE_STATISTICS, ["pg_statio_user_tables"], "blocks")]),
                   now=lambda: datetime(2026, 11, 27, tzinfo=UTC))
    assert profile.names() == ['d/b."c.t"']  # "b.c"."t" had no accesses
    assert any(line.strip().startswith('1. d/b."c.t" (table') for line in lines(profile))
    segments = [Segment(schema=s, name=n, kind="table.main", bytes=MIB, block_size=8192,
                        extents=(Extent(0, 0, MIB // 8192),), locator={}, database="d")
                for s, n in (("b.c", "t"), ("b", "c.t"))]
    plan = plan_units(segments, PlanOptions(unit_bytes=MIB, hot_set=tuple(profile.names())))
    assert [r.segment_key for u in plan.units if u.priority == 0 for r in u.ranges] == ['d/b."c.t"#table.main']
