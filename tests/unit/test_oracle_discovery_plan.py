"""Issue 35 §3 and §4: what Oracle discovery plans, and discovery that finishes on a cold volume.

Against ``tests.unit.oracle_dictionary``: DBA_USERS, DBA_SEGMENTS and DBA_EXTENTS answering each statement as
the views would (no Oracle here). Judges are Oracle's documentation, cited in each test."""

from __future__ import annotations

import oracledb
import pytest

from cutover_prep.engines.base import DiscoveryOptions, Extent, TransientDatabaseError
from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle.engine import OracleEngine
from tests.unit.oracle_dictionary import Dictionary, segment
from tests.unit.stored_sections import unread_of as _unread_of
from tests.unit.test_oracle import FakeConnection

DATAFILE_ONLY = "read by the datafile pass only"  # the census's reason (findings.census.DATAFILE_ONLY)
USERS = [("SYS", "Y"), ("APP", "N"), ("HR", "N"), ("BIG", "N")]


def table(owner, name, extents, objd=100, **kw):
    return segment(owner, name, None, "TABLE", extents, objd=objd, **kw)


def test_a_table_and_an_index_of_one_name_each_keep_their_own_extents() -> None:
    """DBA_EXTENTS names a segment by OWNER, SEGMENT_NAME, PARTITION_NAME and SEGMENT_TYPE (Database Reference,
    https://docs.oracle.com/database/122/REFRN/DBA_EXTENTS.htm); a table and an index may share a name (they are
    in different namespaces), so extents keyed without the type give each one the other's blocks too."""
    db = Dictionary(USERS, [
        table("APP", "ORDERS", [(4, 128, 8), (4, 256, 8)]),
        segment("APP", "ORDERS", None, "INDEX", [(4, 512, 16)], idx_owner="APP", idx_table="ORDERS_OLD",
                index_type="NORMAL"),
    ])
    found = {s.key: s for s in OracleEngine(db).discover(DiscoveryOptions())}
    assert found["APP.ORDERS#TABLE"].extents == (Extent(4, 128, 8), Extent(4, 256, 8))
    assert found["APP.ORDERS#INDEX"].extents == (Extent(4, 512, 16),)
    assert found["APP.ORDERS#TABLE"].blocks == 16 and found["APP.ORDERS#INDEX"].blocks == 16


def test_only_the_selected_owners_segments_are_asked_of_dba_extents_and_dba_segments() -> None:
    """DBA_EXTENTS "describes the extents comprising the segments in all tablespaces in the database"
    (https://docs.oracle.com/database/122/REFRN/DBA_EXTENTS.htm): unfiltered, it reads every segment header of
    the database, on a cold volume each a first touch. The selection (include_schemas) goes into the SQL: here
    100 extents of schema BIG, which the run did not select, are never returned."""
    db = Dictionary(USERS, [table("APP", "T", [(4, 8, 8)]),
                            table("BIG", "HUGE", [(5, 8 + 8 * i, 8) for i in range(100)]),
                            table("HR", "PAY", [(6, 8, 8)])])
    found = OracleEngine(db).discover(DiscoveryOptions(include_schemas=("APP", "H*")))
    assert {s.key for s in found} == {"APP.T#TABLE", "HR.PAY#TABLE"}
    assert db.extent_rows_read == 2  # one extent each of APP.T and HR.PAY, none of BIG's 100
    asked = [binds for sql, binds in db.executed if "FROM dba_extents" in sql or "FROM dba_segments s" in sql]
    assert asked and all(b["owner"] in ("APP", "HR") for b in asked)


def test_system_schemas_stay_out_of_the_sql_too() -> None:
    """DBA_USERS.ORACLE_MAINTAINED = 'Y' marks Oracle's own schemas (Database Reference, "DBA_USERS":
    https://docs.oracle.com/en/database/oracle/oracle-database/19/refrn/DBA_USERS.html); not asked unless
    include_system."""
    db = Dictionary(USERS, [table("SYS", "OBJ$", [(1, 8, 8)]), table("APP", "T", [(4, 8, 8)])])
    assert [s.key for s in OracleEngine(db).discover(DiscoveryOptions())] == ["APP.T#TABLE"]
    assert all(b.get("owner") != "SYS" for sql, b in db.executed if "FROM dba_extents" in sql)


def test_discovery_goes_by_pages_and_resumes_at_the_page_it_had_not_found(monkeypatch) -> None:
    """A dictionary of 7 tables in pages of 3 names: a connection lost at the third page's extents query
    (ORA-03113) leaves two pages found; the next attempt, given the same ``pages``, asks only the third."""
    from cutover_prep.engines.oracle import discovery as od

    monkeypatch.setattr(od, "PAGE_NAMES", 3)
    names = [f"T{i}" for i in range(7)]
    db = Dictionary(USERS, [table("APP", n, [(4, 8 + 8 * i, 8)], objd=10 + i) for i, n in enumerate(names)])
    lost = oracledb.DatabaseError(type("E", (), {"code": 3113, "full_code": "ORA-03113",
                                                 "message": "ORA-03113: end-of-file on communication channel"})())
    db.fail_after, db.failure = 2, lost
    pages: dict = {}
    with pytest.raises(TransientDatabaseError, match="ORA-03113"):  # retried by Retries and the ASL
        OracleEngine(db).discover(DiscoveryOptions(), pages=pages)
    assert len([p for p in pages.values() if p["upto"]]) == 2
    db.executed.clear()
    found = OracleEngine(db).discover(DiscoveryOptions(), pages=pages)
    assert [s.name for s in found] == names
    extents_asked = [b for sql, b in db.executed if "FROM dba_extents" in sql]
    assert extents_asked == [{"owner": "APP", "after": "T5", "upto": "T6"}]  # only the page not found before
    assert found[6].extents == (Extent(4, 56, 8),) and found[6].locator.to_json()["data_object_id"] == 16


def test_a_global_index_whose_partitions_span_two_pages_is_still_one_segment(monkeypatch) -> None:
    """A page boundary falls between names, never inside one name's partitions; merging runs over all pages."""
    from cutover_prep.engines.oracle import discovery as od

    monkeypatch.setattr(od, "PAGE_NAMES", 1)
    rows = [segment("APP", "G_IDX", f"P{i}", "INDEX PARTITION", [(4, 100 + 8 * i, 8)], idx_owner="APP",
                    idx_table="T", index_type="NORMAL", locality="GLOBAL") for i in range(3)]
    db = Dictionary(USERS, [*rows, table("APP", "T", [(4, 8, 8)])])
    found = {s.key: s for s in OracleEngine(db).discover(DiscoveryOptions())}
    assert set(found) == {"APP.G_IDX#INDEX", "APP.T#TABLE"} and found["APP.G_IDX#INDEX"].blocks == 24


def lob_dictionary() -> Dictionary:
    """A partitioned BLOB column: per table partition a LOB PARTITION and its LOB index partition, an INDEX
    PARTITION segment of an index whose DBA_INDEXES.INDEX_TYPE is 'LOB' (Database Reference,
    "ALL_LOB_PARTITIONS": LOB_INDPART_NAME, "Name of the corresponding LOB index partition",
    https://docs.oracle.com/cd/B19306_01/server.102/b14237/statviews_1089.htm); a cluster, its cluster
    index (INDEX_TYPE 'CLUSTER'), a nested table's storage table and a LOBINDEX segment (DBA_SEGMENTS.SEGMENT_TYPE:
    https://docs.oracle.com/cd/E11882_01/server.112/e40402/statviews_4267.htm)."""
    return Dictionary(USERS, [
        segment("APP", "SYS_LOB0000071234C00002$$", "SYS_LOB_P21", "LOB PARTITION", [(4, 300, 16)],
                lob_table="DOCS", lob_column="BODY", lob_type="BLOB", lob_part="P1"),
        segment("APP", "SYS_IL0000071234C00002$$", "SYS_IL_P22", "INDEX PARTITION", [(4, 400, 8)],
                idx_owner="APP", idx_table="DOCS", index_type="LOB", locality="LOCAL"),
        segment("APP", "SYS_IL0000071299C00003$$", None, "LOBINDEX", [(4, 500, 8)]),
        segment("APP", "EMP_DEPT", None, "CLUSTER", [(4, 600, 32)]),
        segment("APP", "EMP_DEPT_IDX", None, "INDEX", [(4, 700, 8)], idx_owner="APP", idx_table="EMP_DEPT",
                index_type="CLUSTER"),
        segment("APP", "ITEMS_NT", None, "NESTED TABLE", [(4, 800, 8)]),
        table("APP", "DOCS", [(4, 8, 8)]),
    ])


def test_lob_index_partitions_cluster_and_nested_table_segments_are_not_planned_as_sql_reads() -> None:
    """An INDEX_FFS reads an index through a table column it keys; a LOB index keys no column (it maps LOB
    chunks), a cluster index keys a cluster no SELECT names. Planned as 'index' they fail every night; CLUSTER,
    NESTED TABLE and LOBINDEX segments were planned as units that always fail ('unsupported'), and a LOBINDEX
    as 'with_lob', counted read with no statement. None of them is a planned unit now."""
    found = {s.key: s for s in OracleEngine(lob_dictionary()).discover(DiscoveryOptions())}
    assert set(found) == {"APP.SYS_LOB0000071234C00002$$:SYS_LOB_P21#LOB PARTITION", "APP.DOCS#TABLE"}
    assert {s.locator.to_json()["read"] for s in found.values()} == {"lob", "rowid_range"}


def census_of(db: Dictionary, accessible_views: dict[str, list[tuple]]) -> dict[str, object]:
    """The census on the same dictionary; ALL_ views answered per the view each UNION ALL branch names."""
    census_rows = [(s["owner"], s["name"], s["partition"], s["seg_type"], s["size"], "USERS",
                    s.get("index_type"), s.get("locality")) for s in db.segments]

    def accessible(sql):
        out = []
        for branch in sql.split("UNION ALL"):
            column, view = branch.split("SELECT owner, ")[1].split(" FROM ")
            out += accessible_views.get(f"{view.strip()}.{column.strip()}", [])
        return out

    class Census(FakeConnection):
        def answer(self, sql, binds=None):
            if "FROM all_tables" in sql:
                return accessible(sql)
            return super().answer(sql, binds)

    conn = Census({"s.bytes, s.tablespace_name": census_rows, "FROM dba_data_files f": []})
    return {o.key: o for o in OracleEngine(conn).census(DiscoveryOptions())}


def test_the_census_names_them_read_by_the_datafile_pass_only_and_a_lob_index_is_no_privilege_gap() -> None:
    """ALL_LOBS.INDEX_NAME is "Name of the LOB index" (Database Reference, "ALL_LOBS":
    https://docs.oracle.com/database/122/REFRN/ALL_LOBS.htm): a LOB index of a LOB the user may read is
    readable by them; the ALL_INDEXES this fake answers holds no LOB index, as the issue found. Each of these
    segments is named 'read by the datafile pass only', with its bytes, by the key of its own segment."""
    objects = census_of(lob_dictionary(), {
        "all_tables.table_name": [("APP", "DOCS"), ("APP", "ITEMS_NT")],  # ALL_TABLES lists nested tables
        "all_indexes.index_name": [("APP", "EMP_DEPT_IDX")],
        "all_lobs.segment_name": [("APP", "SYS_LOB0000071234C00002$$")],
        "all_lobs.index_name": [("APP", "SYS_IL0000071234C00002$$"), ("APP", "SYS_IL0000071299C00003$$")],
        "all_clusters.cluster_name": [("APP", "EMP_DEPT")],
    })
    only = {k: (o.reason, o.bytes) for k, o in objects.items() if not o.readable}
    assert only == {
        "APP.SYS_IL0000071234C00002$$:SYS_IL_P22#INDEX PARTITION": (DATAFILE_ONLY, 8 * 8192),
        "APP.SYS_IL0000071299C00003$$#LOBINDEX": (DATAFILE_ONLY, 8 * 8192),
        "APP.EMP_DEPT#CLUSTER": (DATAFILE_ONLY, 32 * 8192),
        "APP.EMP_DEPT_IDX#INDEX": (DATAFILE_ONLY, 8 * 8192),
        "APP.ITEMS_NT#NESTED TABLE": (DATAFILE_ONLY, 8 * 8192),
    }
    from cutover_prep.engines.oracle import census as oc
    from cutover_prep.findings import census as fc

    assert oc.DATAFILE_ONLY == fc.DATAFILE_ONLY == DATAFILE_ONLY


def test_a_complete_datafile_pass_reads_what_only_it_can_read() -> None:
    obj = {"key": "APP.EMP_DEPT#CLUSTER", "kind": "CLUSTER", "bytes": 8192, "reason": DATAFILE_ONLY}
    assert _unread_of(obj, {}, by_datafiles=False) == (8192, DATAFILE_ONLY)
    assert _unread_of(obj, {}, by_datafiles=True) == (0, None)
    assert _unread_of({**obj, "reason": "no privilege"}, {}, by_datafiles=True) == (8192, "no privilege")


def test_the_page_sql_binds_owner_and_name_window() -> None:
    for sql in (q.SEGMENTS_SQL, q.EXTENTS_SQL):
        assert "owner = :owner" in sql and ":after IS NULL OR" in sql and "segment_name <= :upto" in sql
    assert "segment_type, relative_fno" in q.EXTENTS_SQL
    assert ":page_names" in q.PAGE_LAST_NAME_SQL and "index_name FROM all_lobs" in q.ACCESSIBLE_SQL


def test_a_lost_connection_in_discovery_is_transient_and_the_transaction_ends() -> None:
    """A lost connection (python-oracledb DPY-4011) during discovery is a TransientDatabaseError, which the
    Discover step retries (it raised the driver's own error before, which nothing retried); the read-only
    transaction is ended."""
    db = Dictionary(USERS, [table("APP", "T", [(4, 8, 8)])])
    db.fail_after, db.failure = 0, oracledb.OperationalError("DPY-4011: the database or network closed the connection")
    with pytest.raises(TransientDatabaseError):
        OracleEngine(db).discover(DiscoveryOptions())
    assert db.executed[-1] == ("ROLLBACK", None)


def test_the_discover_step_resumes_from_the_pages_it_stored_in_the_run_s_evidence(store, monkeypatch) -> None:
    """A Discover invocation that lost its connection on its third page (ORA-03113) raised TransientDatabaseError
    (the ASL retries Discover on it); the next invocation, with the run's stored pages (a new StoredPages over
    the same S3 evidence), asks DBA_EXTENTS for the pages not found yet only, and plans all 5 tables."""
    from cutover_prep.engines import ConnectionSpec
    from cutover_prep.engines.oracle import discovery as od
    from cutover_prep.models.warmup import Warmup
    from cutover_prep.warmup.discovery import StoredPages, make_plan

    monkeypatch.setattr(od, "PAGE_NAMES", 2)
    db = Dictionary(USERS, [table("APP", f"T{i}", [(4, 8 + 8 * i, 8)], objd=10 + i) for i in range(5)])
    db.fail_after = 2
    db.failure = oracledb.DatabaseError(type("E", (), {"code": 3113, "full_code": "ORA-03113",
                                                       "message": "ORA-03113: end-of-file on communication channel"})())
    spec = ConnectionSpec("oracle", "db.example", 1521, "ORCL", "CP", "pw")
    with pytest.raises(TransientDatabaseError):
        make_plan(spec, Warmup(), lambda _s, _w: OracleEngine(db), attempts=1, pages=StoredPages(store, "run-35"))
    db.executed.clear()
    planned = make_plan(spec, Warmup(), lambda _s, _w: OracleEngine(db), attempts=1,
                        pages=StoredPages(store, "run-35"))
    assert sorted(s.name for s in planned.segments) == [f"T{i}" for i in range(5)]
    assert [b for sql, b in db.executed if "FROM dba_extents" in sql] == [{"owner": "APP", "after": "T3", "upto": "T4"}]
