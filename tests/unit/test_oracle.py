"""Oracle engine: identifier quoting, SQL of each read, discovery grouping, error mapping —
against a fake connection (there is no Oracle here; see tests/integration/test_oracle_live.py)."""

from __future__ import annotations

import oracledb
import pytest

from cutover_prep.engines import DiscoveryOptions, PermanentReadError, ReadRange, TransientDatabaseError
from cutover_prep.engines import oracle_sql as q
from cutover_prep.engines.base import Extent
from cutover_prep.engines.oracle import OracleEngine, map_error


@pytest.mark.parametrize(("name", "quoted"), [
    ("lower", '"lower"'), ("MiXeD", '"MiXeD"'), ("SYS$X", '"SYS$X"'), ("A#B", '"A#B"'),
    ("naïve_表", '"naïve_表"'), ("with space", '"with space"'),
    ("DROP TABLE X; --", '"DROP TABLE X; --"'),
])
def test_identifiers_are_quoted_as_they_are(name, quoted):
    assert q.quote_identifier(name) == quoted


@pytest.mark.parametrize("name", ['A"B', "", "x\x00y", "é" * 65])
def test_names_oracle_cannot_quote_are_refused(name):
    with pytest.raises(ValueError):
        q.quote_identifier(name)


def test_rowid_range_sql_quotes_names_and_binds_values():
    sql = q.rowid_range_count_sql("App", 'Or"ders'.replace('"', ""), "P 2024", False)
    assert 'FROM "App"."Orders" PARTITION ("P 2024") t' in sql
    assert "FULL(t)" in sql and ":objd" in sql and ":lo_block" in sql and ":hi_block" in sql
    assert "SUBPARTITION" in q.rowid_range_count_sql("A", "T", "SP1", True)


def test_index_ffs_sql_forces_the_fast_full_scan():
    sql = q.index_ffs_sql("APP", "ORDERS", "orders_idx", "CUSTOMER_ID", nullable=True)
    assert 'INDEX_FFS(t "orders_idx")' in sql and 'WHERE t."CUSTOMER_ID" IS NOT NULL' in sql
    assert "WHERE" not in q.index_ffs_sql("APP", "ORDERS", "PK", "ID", nullable=False)


def test_lob_block_reads_every_piece_with_the_right_buffer():
    blob = q.lob_read_block("APP", "DOCS", "BODY", "BLOB")
    clob = q.lob_read_block("APP", "DOCS", "BODY", "CLOB")
    assert "RAW(32767)" in blob and "VARCHAR2(32767)" in clob
    assert "DBMS_LOB.READ" in blob and ":total" in blob and "INSERT" not in blob.upper()


class FakeCursor:
    def __init__(self, conn):
        self.conn, self.arraysize, self._rows = conn, 100, []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def execute(self, sql, parameters=None, **binds):
        self.conn.executed.append((sql, binds or parameters))
        if self.conn.fail:
            raise self.conn.fail
        self._rows = list(self.conn.answer(sql))
        return iter(self._rows)

    def fetchone(self):
        return self._rows[0] if self._rows else (0,)

    def var(self, _type):
        return object()


class FakeConnection:
    def __init__(self, answers=None, fail=None):
        self.answers, self.fail, self.executed = answers or {}, fail, []

    def answer(self, sql):
        for marker, rows in self.answers.items():
            if marker in sql:
                return rows
        return [(1,)]

    def cursor(self):
        return FakeCursor(self)

    def close(self):
        pass


def seg_row(owner, name, part, seg_type, **kw):
    base = dict(size=8192 * 16, blocks=16, block_size=8192, objd=None, lob_table=None, lob_column=None,
                lob_type=None, idx_owner=None, idx_table=None, index_type=None, locality=None, lob_part=None)
    base.update(kw)
    return (owner, name, part, seg_type, *base.values())


def test_discovery_groups_extents_excludes_system_and_applies_filters():
    conn = FakeConnection({
        "dba_users": [("AUDSYS",)],
        "FROM dba_extents": [("APP", "ORDERS", None, 4, 128, 8), ("APP", "ORDERS", None, 4, 256, 8),
                             ("SYS", "OBJ$", None, 1, 8, 8), ("APP", "ORDERS_IDX", None, 4, 512, 16),
                             ("APP", "SYS_LOB01", None, 4, 900, 16), ("OTHER", "T", None, 5, 8, 8)],
        "FROM dba_segments": [seg_row("APP", "ORDERS", None, "TABLE", objd=777),
                              seg_row("APP", "ORDERS_IDX", None, "INDEX", idx_owner="APP", idx_table="ORDERS",
                                      index_type="NORMAL"),
                              seg_row("APP", "SYS_LOB01", None, "LOBSEGMENT", lob_table="DOCS", lob_column="BODY",
                                      lob_type="CLOB"),
                              seg_row("SYS", "OBJ$", None, "TABLE", objd=18),
                              seg_row("OTHER", "T", None, "TABLE", objd=5)],
    })
    segments = OracleEngine(conn).discover(DiscoveryOptions(exclude_schemas=("OTH*",)))
    by_name = {s.name: s for s in segments}
    assert set(by_name) == {"ORDERS", "ORDERS_IDX", "SYS_LOB01"}
    assert by_name["ORDERS"].extents == (Extent(4, 128, 8), Extent(4, 256, 8)) and by_name["ORDERS"].splittable
    assert by_name["ORDERS"].locator["data_object_id"] == 777
    assert not by_name["ORDERS_IDX"].splittable and by_name["ORDERS_IDX"].locator["read"] == "index"
    assert by_name["SYS_LOB01"].locator["read"] == "lob"


def test_table_range_is_read_per_extent_with_binds():
    conn = FakeConnection()
    rng = ReadRange("APP.ORDERS#TABLE", {"read": "rowid_range", "owner": "APP", "table": "ORDERS", "partition": None,
                                         "subpartition": False, "data_object_id": 777, "segment_type": "TABLE"},
                    (Extent(4, 128, 8), Extent(4, 256, 4)), 8192)
    result = OracleEngine(conn).read_range(rng)
    assert result.method == "full_scan_rowid_range" and result.blocks == 12
    binds = [b for _, b in conn.executed]
    assert binds == [{"objd": 777, "rfno": 4, "lo_block": 128, "hi_block": 135},
                     {"objd": 777, "rfno": 4, "lo_block": 256, "hi_block": 259}]
    assert all("777" not in sql for sql, _ in conn.executed)


def test_index_is_read_with_ffs_using_its_first_column():
    conn = FakeConnection({"dba_ind_columns": [("CUSTOMER_ID", "Y")]})
    rng = ReadRange("k", {"read": "index", "owner": "APP", "segment": "ORDERS_IDX", "partition": None,
                          "table_owner": "APP", "table": "ORDERS", "whole_index": False, "segment_type": "INDEX"},
                    (Extent(4, 512, 16),), 8192, splittable=False)
    assert OracleEngine(conn).read_range(rng).method == "index_ffs"
    assert 'INDEX_FFS(t "ORDERS_IDX")' in conn.executed[-1][0]


def test_unsupported_segments_fail_by_name():
    rng = ReadRange("k", {"read": "unsupported", "segment_type": "CLUSTER"}, (Extent(1, 1, 1),), 8192)
    with pytest.raises(PermanentReadError, match="CLUSTER"):
        OracleEngine(FakeConnection()).read_range(rng)


def test_errors_are_mapped_transient_or_permanent():
    gone = oracledb.DatabaseError(type("E", (), {"code": 8103, "full_code": "ORA-08103",
                                                 "message": "ORA-08103: object no longer exists"})())
    lost = oracledb.DatabaseError(type("E", (), {"code": 3113, "full_code": "ORA-03113",
                                                 "message": "ORA-03113: end-of-file on communication channel"})())
    assert isinstance(map_error(gone, "x"), PermanentReadError)
    assert isinstance(map_error(lost, "x"), TransientDatabaseError)
    rng = ReadRange("k", {"read": "rowid_range", "owner": "A", "table": "T", "partition": None, "subpartition": False,
                          "data_object_id": 1, "segment_type": "TABLE"}, (Extent(1, 1, 1),), 8192)
    with pytest.raises(TransientDatabaseError):
        OracleEngine(FakeConnection(fail=lost)).read_range(rng)
