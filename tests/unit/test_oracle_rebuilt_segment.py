"""Issue 32, finding 5, on Oracle: a segment truncated, moved or shrunk after the plan.

What Oracle's documentation says happens to the planned storage:
- "TRUNCATE TABLE" (SQL Language Reference): by default Oracle "deallocates all space used by the removed rows
  except that specified by the MINEXTENTS storage parameter"; the table gets a new data object number, so a
  query that started on the old segment fails with ORA-08103 "object no longer exists" (AskTom, "ORA-08103:
  object no longer exists", Connor McDonald's TRUNCATE example).
- "ALTER TABLE", move_table_clause: it relocates the data of a nonpartitioned table or of a partition "into a new
  segment"; Database Reference, "ALL_OBJECTS": DATA_OBJECT_ID is the "dictionary object number of the segment that
  contains the object", so a new segment is a new DATA_OBJECT_ID, while OBJECT_ID (the object) stays.
- "ALTER TABLE", shrink_clause (SHRINK SPACE): rows are compacted within the segment and the space above the new
  high water mark is released: the same segment (same DATA_OBJECT_ID) with fewer extents.

The planned extents are rowid ranges ``(DATA_OBJECT_ID, file, block)``; the engine now looks the segment up again
before reading (DBA_OBJECTS by owner, name, partition and type, joined to DBA_EXTENTS): a new DATA_OBJECT_ID means
the planned storage is gone (counted gone, nothing read from it; the end census's catch-up reads the new segment
whole); the same one reads only the planned blocks still in its extents, the rest gone. Judges: the statements the
fake server received (their rowid binds) and the counters it moved, written out per test."""

from __future__ import annotations

from cutover_prep.engines.base import GONE_REBUILT, GONE_TRUNCATED, Extent, ReadRange
from cutover_prep.engines.oracle import read_sql as rq
from cutover_prep.engines.oracle.engine import OracleEngine
from tests.unit.conftest import store  # noqa: F401 - the moto Store fixture
from tests.unit.oracle_segment_fake import decode_rowid
from tests.unit.test_oracle_fakes import OracleFake

TABLE = {"read": "rowid_range", "owner": "APP", "table": "ORDERS", "partition": None, "subpartition": False,
         "data_object_id": 777, "segment_type": "TABLE", "bigfile": False}
RNG = ReadRange("APP.ORDERS#TABLE", TABLE, (Extent(4, 128, 64), Extent(4, 256, 64)), 8192)


def server(segment_now: list[tuple]) -> OracleFake:
    """A fake server whose dictionary says ``segment_now`` (DATA_OBJECT_ID, RELATIVE_FNO, BLOCK_ID, BLOCKS) and
    whose rowid range scans read every block they name."""
    db = OracleFake({"dba_extents e": segment_now})

    def scan(_sql, binds):
        blocks = decode_rowid(binds["end_id"])[2] - decode_rowid(binds["start_id"])[2] + 1
        db.read(blocks)
        return [(blocks * 10,)]
    db.answers["ROWID BETWEEN"] = scan
    return db


def scanned(db: OracleFake) -> list[tuple[int, int, int]]:
    return [(decode_rowid(b["start_id"])[0], decode_rowid(b["start_id"])[2], decode_rowid(b["end_id"])[2])
            for _, b in db.statements("ROWID BETWEEN")]


def test_the_segment_is_looked_up_again_by_owner_name_partition_and_type():
    db = server([(777, 4, 128, 64), (777, 4, 256, 64)])
    OracleEngine(db).read_range(RNG)
    (sql, binds), = db.statements("dba_extents e")
    assert "FROM dba_objects o" in sql and "o.data_object_id" in sql
    assert binds == {"owner": "APP", "name": "ORDERS", "partition": None, "segment_type": "TABLE"}
    statements = [s for s, _ in db.executed]
    assert statements.index(sql) < min(i for i, s in enumerate(statements) if "ROWID BETWEEN" in s)  # before reading
    assert scanned(db) == [(777, 128, 191), (777, 256, 319)]  # unchanged: read as planned


def test_a_truncated_or_moved_table_has_a_new_data_object_id_and_its_planned_blocks_are_gone():
    db = server([(901, 4, 1024, 8)])  # TRUNCATE / MOVE: a new segment, elsewhere
    result = OracleEngine(db).read_range(RNG)
    assert (result.blocks, result.gone) == (0, 128)
    assert scanned(db) == []  # nothing read from storage that is no longer the table's
    assert result.details["gone_reason"] == GONE_REBUILT and result.details["data_object_id_now"] == 901


def test_a_shrunk_table_reads_the_planned_blocks_its_extents_still_hold_and_the_rest_is_gone():
    db = server([(777, 4, 128, 64), (777, 4, 256, 16)])  # SHRINK SPACE released the tail of the last extent
    result = OracleEngine(db).read_range(RNG)
    assert scanned(db) == [(777, 128, 191), (777, 256, 271)]
    assert (result.blocks, result.gone, result.bytes) == (80, 48, 80 * 8192)
    assert result.details["gone_reason"] == GONE_TRUNCATED and result.details["confirmed_blocks"] == 80


def test_a_dictionary_that_does_not_answer_leaves_the_read_as_planned():
    db = server([])  # no row (dropped, or not visible): the read itself says what happened
    result = OracleEngine(db).read_range(RNG)
    assert scanned(db) == [(777, 128, 191), (777, 256, 319)] and result.gone == 0


def test_the_lookup_names_the_object_by_its_own_columns():
    sql = rq.SEGMENT_NOW_SQL
    for part in ("o.owner = :owner", "o.object_name = :name", "o.object_type = :segment_type",
                 "e.segment_type = o.object_type", "e.partition_name = o.subobject_name"):
        assert part in sql


def test_a_unit_of_a_moved_table_ends_done_and_the_end_census_reads_the_new_segment_whole(store) -> None:  # noqa: F811
    """Through the warm-unit loop: the unit is DONE with its planned blocks gone ("rebuilt while the run ran"),
    the findings' reads say so, and the end census's catch-up starts the new segment at block 0."""
    from cutover_prep.steps.end_census import catch_up_targets, gone_by_segment
    from cutover_prep.warmup.unit import Budget
    from tests.unit.contexts import warm_json
    from tests.unit.stored_sections import segment_reads

    db = server([(901, 4, 1024, 8)])
    unit = {"unit_id": "u1", "bytes": RNG.bytes, "blocks": RNG.blocks, "ranges": [RNG.to_json()]}
    store.start_run({"run_id": "ora", "target": {"db_instance_identifier": "db1"},
                     "started_at": "2026-11-27T00:00:00+00:00", "warmup": {}})
    out = warm_json({"run": {"run_id": "ora", "warmup": {"assumed_cold_mib_per_s": 8.0, "chunk_mb": 64}},
                     "unit": unit}, store=store, engine=lambda: OracleEngine(db),
                    budget=Budget(lambda: 10_000.0, 30.0), sleep=lambda s: None)
    item = store.get_unit("ora", "u1")
    assert out["status"] == "DONE" and item.status == "DONE" and item.gone_bytes == RNG.bytes
    reads = segment_reads([unit], {"u1": item})[RNG.segment_key]
    assert (reads["read"], reads["gone"], reads["gone_reason"]) == (0, RNG.bytes, GONE_REBUILT)
    gone, rebuilt = gone_by_segment([item])
    assert rebuilt == {RNG.segment_key} and gone == {RNG.segment_key: RNG.bytes}
    # the new segment (8 blocks at the end census) is read from its first block: nothing of it was planned
    assert catch_up_targets({RNG.segment_key: 0}, [{"key": RNG.segment_key, "bytes": 8 * 8192}]) == {
        RNG.segment_key: 0}
