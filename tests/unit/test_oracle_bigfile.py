"""Issue 22, finding 2: rowid ranges in bigfile tablespaces.

PL/SQL Packages and Types Reference, "DBMS_ROWID": ROWID_CREATE(rowid_type, object_number,
relative_fno, block_number, row_number) builds the smallfile layout (a 10-bit relative file
number and a 22-bit block number); ROWID_BLOCK_NUMBER/ROWID_INFO take ``ts_type_in =>
'BIGFILE'`` because a bigfile tablespace's rowid has no file number: its block number is the
encoded block number spanning both fields (Administrator's Guide, "Bigfile Tablespaces";
DBA_EXTENTS reports RELATIVE_FNO 1024 there). Amazon RDS for Oracle creates bigfile
tablespaces by default (RDS User Guide, "Creating and sizing tablespaces"). The kind of
tablespace is DBA_TABLESPACES.BIGFILE (YES/NO, Database Reference)."""

from __future__ import annotations

from cutover_prep.engines.base import DiscoveryOptions, Extent, ReadRange
from cutover_prep.engines.oracle import rowids as rid
from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle.engine import OracleEngine
from tests.unit.oracle_dictionary import dictionary_answers
from tests.unit.oracle_segment_fake import decode_rowid
from tests.unit.test_oracle import seg_row
from tests.unit.test_oracle_fakes import OracleFake

SMALLFILE_BLOCK_BITS = 22


def bigfile_block(lo_fno: int, block: int) -> int:
    """What DBMS_ROWID.ROWID_BLOCK_NUMBER(rowid, 'BIGFILE') returns for ROWID_CREATE(1, objd, lo_fno, block, row):
    the file and block fields read as one block number."""
    assert 0 <= block < 2**SMALLFILE_BLOCK_BITS and 0 <= lo_fno < 2**10
    return (lo_fno << SMALLFILE_BLOCK_BITS) | block


def test_discovery_reads_dba_tablespaces_bigfile_into_the_locator():
    assert "t.bigfile" in q.SEGMENTS_SQL
    db = OracleFake(dictionary_answers([seg_row("APP", "BIG", None, "TABLE", objd=91, bigfile="YES"),
                                        seg_row("APP", "SMALL", None, "TABLE", objd=92, bigfile="NO")],
                                       [("APP", "BIG", None, 1024, 5_000_000, 128), ("APP", "SMALL", None, 4, 128, 8)]))
    found = {s.name: s for s in OracleEngine(db).discover(DiscoveryOptions())}
    assert found["BIG"].locator.to_json()["bigfile"] is True and found["SMALL"].locator.to_json()["bigfile"] is False
    assert found["BIG"].extents == (Extent(1024, 5_000_000, 128),)


def test_a_bigfile_extent_at_relative_fno_1024_block_5_000_000_is_addressed_by_its_encoded_block_number():
    loc = {"read": "rowid_range", "owner": "APP", "table": "BIG", "partition": None, "subpartition": False,
           "data_object_id": 91, "segment_type": "TABLE", "bigfile": True}
    db = OracleFake(reads={"ROWID BETWEEN": 8})
    OracleEngine(db).read_range(ReadRange("APP.BIG#TABLE", loc, (Extent(1024, 5_000_000, 8),), 8192))
    (sql, binds), = db.statements("ROWID BETWEEN")
    assert "t.ROWID BETWEEN :start_id AND :end_id" in sql
    # the fake's own decoder (Concepts, "Rowid Format"): (objd, file field, block field, row)
    lo, hi = decode_rowid(binds["start_id"]), decode_rowid(binds["end_id"])
    assert lo == (91, 1, 5_000_000 - 2**22, 0) and hi == (91, 1, 5_000_007 - 2**22, 32767)
    assert 1024 not in (lo[1], hi[1])  # the smallfile layout cannot hold relative file number 1024
    assert bigfile_block(lo[1], lo[2]) == 5_000_000
    assert bigfile_block(hi[1], hi[2]) == 5_000_007


def test_a_bigfile_range_across_a_2_22_boundary_has_different_file_fields_at_each_end():
    b = rid.rowid_range_binds(7, 1024, 2**22 - 4, 2**22 + 3, bigfile=True)
    assert b == {"objd": 7, "lo_fno": 0, "lo_block": 2**22 - 4, "hi_fno": 1, "hi_block": 3}


def test_a_smallfile_range_keeps_its_relative_file_number():
    assert rid.rowid_range_binds(7, 4, 128, 135, bigfile=False) == {
        "objd": 7, "lo_fno": 4, "lo_block": 128, "hi_fno": 4, "hi_block": 135}


def test_the_round_trip_sql_asks_dbms_rowid_for_the_bigfile_block_number():
    sql = rid.BIGFILE_ROUNDTRIP_SQL
    assert "DBMS_ROWID.ROWID_BLOCK_NUMBER(DBMS_ROWID.ROWID_CREATE(1, :objd, :fno, :block, 0), 'BIGFILE')" in sql
