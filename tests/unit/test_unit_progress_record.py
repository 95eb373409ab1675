"""dal.records.units.UnitProgress (the unit item) and dal.records.census.EndCensus (census-end.json): what the store
writes today reads into the record and back unchanged; an item of before (a gone entry without its reason) reads."""

from cutover_prep.dal.records.census import CensusRef, EndCensus
from cutover_prep.dal.records.units import UnitProgress
from cutover_prep.dal.store import UNIT_PREFIX, Store, _item
from cutover_prep.engines.base import GONE_REBUILT, GONE_TRUNCATED


def _raw_unit(store: Store, run_id: str, unit_id: str) -> dict:
    raw = store._ddb.get_item(TableName=store.table, Key=store._key(run_id, UNIT_PREFIX + unit_id))["Item"]
    return _item(raw)


def test_a_unit_item_the_store_writes_reads_as_the_record_and_back(store: Store) -> None:
    store.commit_progress("r", "u1", seq=0, cursor={"range": 0, "extent": 1, "offset": 8}, blocks=8, bytes_=65536,
                          seconds=0.5, method="m", done=False, planned_bytes=131072,
                          gone=("app.t#table", 0, 2, 16384, GONE_REBUILT), reconnects=1, longest_outage_seconds=2.0)
    store.commit_progress("r", "u1", seq=1, cursor=None, blocks=8, bytes_=65536, seconds=1.0, method="m", done=True,
                          planned_bytes=131072)
    store.fail_unit("r", "u2", error="ShortRead", cause="short")
    unit = store.get_unit("r", "u1")
    assert isinstance(unit, UnitProgress) and unit.unit_id == "u1"
    assert (unit.status, unit.seq, unit.bytes_read, unit.blocks_read, unit.retries) == ("DONE", 2, 131072, 16, 0)
    assert unit.seconds == 1.5 and unit.longest_outage_seconds == 2 and unit.reconnects == 1
    assert [g.reason for g in unit.gone_entries()] == [GONE_REBUILT] and unit.gone_bytes == 16384
    assert len(unit.chunks) == 2 and unit.cursor is None and unit.finished_at
    assert unit.stored() == _raw_unit(store, "r", "u1")  # the item as stored, no schema_version added
    failed = store.get_unit("r", "u2")
    assert (failed.status, failed.error, failed.cause, failed.bytes_read) == ("FAILED", "ShortRead", "short", 0)
    assert failed.stored() == _raw_unit(store, "r", "u2")
    assert store.get_unit("r", "u3") is None
    assert {u.unit_id for u in store.units("r")} == {"u1", "u2"}


def test_a_unit_item_of_before_reads_and_a_unit_not_started_is_pending() -> None:
    before = UnitProgress.read({"sk": "UNIT#u9", "status": "RUNNING", "cursor": {"range": 1, "extent": 0, "offset": 3},
                                "gone": [["app.t#table", 0, 1, 8192]], "seconds": 2})
    assert before.gone_entries()[0].reason == GONE_TRUNCATED and before.cursor.offset == 3
    assert isinstance(before.seconds, int)  # DynamoDB's whole numbers stay ints
    assert (UnitProgress().status, UnitProgress().bytes_read, UnitProgress.of(None).cursor) == ("PENDING", 0, None)


def test_census_end_json_of_each_outcome_reads_and_writes_back() -> None:
    taken = {"taken_at": "2026-11-27T00:00:00+00:00",
             "census": {"key": "runs/r/census-end.jsonl", "objects": 3, "order": "key"},
             "catch_up": [{"key": "a", "planned_bytes": 0, "bytes": 8192, "bytes_read": 8192, "status": "READ"},
                          {"key": "b", "planned_bytes": 0, "bytes": 0, "bytes_read": 0, "status": "NOT_READ",
                           "cause": "not found by discovery at the end"}],
             "summary": {"taken": True, "objects": 3, "caught_up": 1, "not_caught_up": 1, "bytes_caught_up": 8192}}
    failed = {"taken_at": "2026-11-27T00:00:00+00:00", "census": None, "catch_up": [],
              "error": {"error": "TransientDatabaseError", "cause": "gone"},
              "summary": {"taken": False, "error": "TransientDatabaseError", "cause": "gone"}}
    before_32 = {**taken, "census": [{"key": "a", "bytes": 8192}]}  # the list itself, as a run of before kept it
    for doc in (taken, failed, before_32):
        assert EndCensus.read(doc).stored() == doc
    assert isinstance(EndCensus.read(taken).census, CensusRef)
    assert [c.model_dump(mode="json", exclude_unset=True) for c in EndCensus.read(taken).catch_up] == taken["catch_up"]
    assert EndCensus.read(failed).error.error == "TransientDatabaseError"
