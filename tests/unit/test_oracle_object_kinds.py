"""Issue 22, finding 5: objects whose unit failed for good, each read the way Oracle documents.

- LOCAL index partitions are equipartitioned with their table, matched by position, not by
  name (Database Reference, "DBA_IND_PARTITIONS"/"DBA_TAB_PARTITIONS": PARTITION_POSITION);
  interval and renamed partitions have different names, and naming the index partition in the
  table's PARTITION clause is ORA-02149 ("Specified partition does not exist").
- The overflow segment of an index-organized table is a TABLE segment SYS_IOT_OVER_n
  (DBA_TABLES.IOT_TYPE = 'IOT_OVERFLOW', IOT_NAME its IOT); selecting from it is ORA-25191
  ("cannot reference overflow table of an index-organized table"). Its rows are read through the
  IOT, by columns the overflow holds (Administrator's Guide, "Managing Index-Organized Tables").
- NCLOB: DBMS_LOB.READ's buffer for an NCLOB is NVARCHAR2 (PL/SQL Packages and Types
  Reference, "DBMS_LOB.READ": "buffer ... VARCHAR2 CHARACTER SET lob_loc%CHARSET").
- XMLType and object columns keep their LOB in a hidden column (SYS_NCnnnnn$, or the
  attribute's QUALIFIED_COL_NAME) that only DBA_TAB_COLS shows; an unknown type is not a BLOB.
- A LOB subpartition belongs to one table subpartition (Database Reference,
  "DBA_LOB_SUBPARTITIONS": SUBPARTITION_NAME).
- An invisible index is ignored by the optimizer, hints included, unless USE_INVISIBLE_INDEXES
  or OPTIMIZER_USE_INVISIBLE_INDEXES (Database Reference; SQL Tuning Guide, "Invisible indexes")."""

from __future__ import annotations

from cutover_prep.engines.base import DiscoveryOptions, ReadRange
from cutover_prep.engines.oracle import read_sql as rq
from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle.engine import OracleEngine
from tests.unit.oracle_dictionary import dictionary_answers
from tests.unit.test_oracle import seg_row
from tests.unit.test_oracle_fakes import OracleFake


def discover(*rows, extents=None):
    extents = extents or [(r[0], r[1], r[2], 4, 8 + 8 * i, 8) for i, r in enumerate(rows)]
    db = OracleFake(dictionary_answers(list(rows), extents))
    return {s.key: s for s in OracleEngine(db).discover(DiscoveryOptions())}


def read(seg, answers, reads):
    db = OracleFake(answers, reads=reads)
    OracleEngine(db).read_range(ReadRange(seg.key, seg.locator, seg.extents, 8192, seg.splittable))
    return db


def test_a_local_index_partition_reads_the_table_partition_at_its_position():
    (seg,) = discover(seg_row("APP", "SALES_IDX", "SALES_IDX_P3", "INDEX PARTITION", idx_owner="APP",
                              idx_table="SALES", index_type="NORMAL", locality="LOCAL")).values()
    db = read(seg, {"dba_ind_columns": [(1, "ID", "N", "NO")], "partition_position": [("SYS_P1234",)]},
              {"INDEX_FFS": 8})
    (sql, binds), = db.statements("partition_position")
    assert "FROM dba_ind_partitions ip" in sql and "dba_tab_partitions tp" in sql
    assert binds == {"owner": "APP", "index_name": "SALES_IDX", "partition": "SALES_IDX_P3",
                     "table_owner": "APP", "table_name": "SALES"}
    (ffs, _), = db.statements("INDEX_FFS")
    assert 'PARTITION ("SYS_P1234")' in ffs and "SALES_IDX_P3" not in ffs


def test_an_iot_overflow_segment_is_read_through_its_iot_never_by_its_own_name():
    (seg,) = discover(seg_row("APP", "SYS_IOT_OVER_7301", None, "TABLE", objd=7301, iot_type="IOT_OVERFLOW",
                              iot_name="EVENTS")).values()
    assert seg.locator.to_json()["read"] == "iot_overflow" and seg.locator.to_json()["table"] == "EVENTS"
    # the whole overflow in one piece (its extents now: LOB_EXTENTS_SQL); slices: tests/unit/test_oracle_iot_split.py
    db = read(seg, {"FROM dba_tab_columns": [("ID",), ("PAYLOAD",)],
                    "segment_name = :name AND segment_type": [(4, 8, 8)]}, {"COUNT(t.": 8})
    (_, binds), = db.statements("FROM dba_tab_columns")
    assert binds == {"owner": "APP", "table_name": "EVENTS"}
    (sql, _), = db.statements("COUNT(t.")
    assert 'COUNT(t."ID"), COUNT(t."PAYLOAD") FROM "APP"."EVENTS" t' in sql and "SYS_IOT_OVER" not in sql


def test_an_nclob_is_read_into_an_nvarchar2_buffer():
    block = rq.lob_read_block("APP", "DOCS", "BODY", "NCLOB")
    assert "buf NVARCHAR2(32767);" in block and "amt := 8191;" in block
    assert "RAW(32767)" in rq.lob_read_block("APP", "DOCS", "BODY", "BLOB")


def test_a_hidden_lob_column_is_found_in_dba_tab_cols_and_an_unknown_type_is_not_read_as_a_blob():
    assert "LEFT JOIN dba_tab_cols c" in q.SEGMENTS_SQL and "dba_tab_columns" not in q.SEGMENTS_SQL
    assert "c.qualified_col_name = l.column_name" in q.SEGMENTS_SQL
    found = discover(
        seg_row("APP", "SYS_LOB0001$$", None, "LOBSEGMENT", lob_table="PO", lob_column='"DOC"."XMLDATA"',
                lob_type="CLOB", lob_col="SYS_NC00004$"),
        seg_row("APP", "SYS_LOB0002$$", None, "LOBSEGMENT", lob_table="PO", lob_column="SYS_NC00009$",
                lob_type=None))
    xml = found["APP.SYS_LOB0001$$#LOBSEGMENT"].locator
    assert (xml.read, xml.column, xml.data_type) == ("lob", "SYS_NC00004$", "CLOB")
    unknown = found["APP.SYS_LOB0002$$#LOBSEGMENT"].locator
    assert unknown.read == "unsupported" and "SYS_NC00009$" in str(unknown.why)


def test_a_lob_subpartition_reads_only_its_table_subpartition():
    assert "LEFT JOIN dba_lob_subpartitions lsp" in q.SEGMENTS_SQL
    (seg,) = discover(seg_row("APP", "SYS_LOB0003$$", "SYS_LOB_SUBP41", "LOB SUBPARTITION", lob_table="DOCS",
                              lob_column="BODY", lob_type="BLOB", lob_subpart="SYS_SUBP41")).values()
    assert seg.locator.to_json()["table_partition"] == "SYS_SUBP41"
    assert seg.locator.to_json()["table_subpartition"] is True
    db = read(seg, {"segment_name = :name AND segment_type": [(4, 8, 8)]}, {"DBMS_LOB.READ": 8})  # LOB_EXTENTS_SQL
    (block, _), = db.statements("DBMS_LOB.READ")
    assert 'FROM "APP"."DOCS" SUBPARTITION ("SYS_SUBP41") t' in block


def test_an_invisible_index_is_read_with_use_invisible_indexes():
    (seg,) = discover(seg_row("APP", "HIDDEN_IDX", None, "INDEX", idx_owner="APP", idx_table="T",
                              index_type="NORMAL", visibility="INVISIBLE")).values()
    assert seg.locator.to_json()["invisible"] is True
    db = read(seg, {"dba_ind_columns": [(1, "ID", "N", "NO")]}, {"INDEX_FFS": 8})
    (ffs, _), = db.statements("INDEX_FFS")
    assert "USE_INVISIBLE_INDEXES" in ffs
    assert "USE_INVISIBLE_INDEXES" not in rq.index_ffs_sql("APP", "T", "IDX", "ID", False)
