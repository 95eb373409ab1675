"""RDS for Oracle additional storage volumes (issue 22): each planned segment's (and datafile's) files
mapped to the volume they are on, from DBA_DATA_FILES' FILE_NAME and DBA_SEGMENTS' tablespace, through
the fake connection (the SQL asserted, its rows what the views return)."""

from __future__ import annotations

from cutover_prep.engines.base import DiscoveryOptions, Extent, Segment
from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle.datafiles import datafile_segment
from cutover_prep.engines.oracle.engine import OracleEngine
from cutover_prep.engines.volumes import PRIMARY_VOLUME, volume_of_path
from cutover_prep.warmup import modes
from tests.unit.oracle_dictionary import dictionary_answers
from tests.unit.test_oracle import seg_row
from tests.unit.test_oracle_fakes import OracleFake

# DATAFILE_PATHS_SQL: tablespace, RELATIVE_FNO, FILE_ID, FILE_NAME (OMF names as RDS makes them)
DATAFILES = [
    ("SYSTEM", 1, 1, "/rdsdbdata/db/ORCL_A/datafile/o1_mf_system_k1.dbf"),
    ("USERS", 4, 4, "/rdsdbdata/db/ORCL_A/datafile/o1_mf_users_k4.dbf"),
    ("HIST", 1024, 6, "/rdsdbdata2/db/ORCL_A/datafile/o1_mf_hist_k6.dbf"),  # bigfile on RDSDBDATA2
    ("MIXED", 7, 7, "/rdsdbdata/db/ORCL_A/datafile/o1_mf_mixed_k7.dbf"),  # smallfile on two volumes
    ("MIXED", 8, 8, "/rdsdbdata3/db/ORCL_A/datafile/o1_mf_mixed_k8.dbf"),
]
TABLESPACE_SEGMENTS = {  # TABLESPACE_SEGMENTS_SQL per tablespace
    "HIST": [("APP", "ORDERS_HIST", None)],
    "MIXED": [("APP", "EVENTS", "P1")],
}


def _segments(sql: str, binds: dict) -> list:
    return TABLESPACE_SEGMENTS.get(binds.get("tablespace_name"), [])


def fake() -> OracleFake:
    return OracleFake({
        "FROM dba_data_files df": DATAFILES, "FROM dba_segments sg": _segments,
        **dictionary_answers([seg_row("APP", "ORDERS", None, "TABLE", objd=1),
                              seg_row("APP", "ORDERS_HIST", None, "TABLE", objd=2, bigfile="YES"),
                              seg_row("APP", "EVENTS", "P1", "TABLE PARTITION", objd=3)],
                             [("APP", "ORDERS", None, 4, 128, 64), ("APP", "ORDERS_HIST", None, 1024, 5_000_000, 256),
                              ("APP", "EVENTS", "P1", 7, 8, 32), ("APP", "EVENTS", "P1", 8, 8, 96)]),
    })


def test_a_path_under_an_additional_volume_is_on_it_and_everything_else_on_the_primary():
    assert volume_of_path("/rdsdbdata2/db/ORCL_A/datafile/x.dbf") == "RDSDBDATA2"
    assert volume_of_path("/rdsdbdata4/db/pdb/x.dbf") == "RDSDBDATA4"
    assert volume_of_path("/rdsdbdata/db/ORCL_A/datafile/x.dbf") == PRIMARY_VOLUME
    assert volume_of_path("/rdsdbdata20/x.dbf") == PRIMARY_VOLUME  # the prefix is a whole directory
    assert volume_of_path("/rdsdbdata3/x.dbf", names=("RDSDBDATA2",)) == PRIMARY_VOLUME  # not a volume RDS lists
    assert volume_of_path(None) == PRIMARY_VOLUME


def test_discovery_maps_each_segment_file_to_its_volume_when_rds_lists_additional_volumes():
    db = fake()
    found = {s.name: s for s in modes.discover(
        OracleEngine(db), DiscoveryOptions(additional_volumes=("RDSDBDATA2", "RDSDBDATA3")), modes.SEGMENTS)}
    assert "file_volumes" not in found["ORDERS"].locator  # USERS is on the primary volume
    assert found["ORDERS_HIST"].locator.to_json()["file_volumes"] == {"1024": "RDSDBDATA2"}
    assert found["EVENTS"].locator.to_json()["file_volumes"] == {"8": "RDSDBDATA3"}  # its file 7 is on the primary
    (paths_sql, _), = db.statements("FROM dba_data_files df")
    assert paths_sql == q.DATAFILE_PATHS_SQL and "df.file_name" in paths_sql and "df.relative_fno" in paths_sql
    # the segments of the two tablespaces with a file off the primary volume, by bind, one query each
    assert [b for _, b in db.statements("FROM dba_segments sg")] == [{"tablespace_name": "HIST"},
                                                                     {"tablespace_name": "MIXED"}]


def test_without_additional_volumes_discovery_runs_no_volume_sql():
    db = fake()
    found = modes.discover(OracleEngine(db), DiscoveryOptions(), modes.SEGMENTS)
    assert not db.statements("dba_data_files") and not db.statements("FROM dba_segments sg")
    assert all("file_volumes" not in s.locator for s in found)


def test_a_datafile_of_the_datafile_pass_is_mapped_by_its_file_id():
    engine = OracleEngine(fake())
    files = [datafile_segment(4, "USERS", 1000, 8192), datafile_segment(6, "HIST", 5000, 8192)]
    mapped = {s.name: s for s in engine.map_volumes(files, ("RDSDBDATA2", "RDSDBDATA3"))}
    assert "file_volumes" not in mapped["file_4"].locator
    assert mapped["file_6"].locator.to_json()["file_volumes"] == {"6": "RDSDBDATA2"}


def test_a_merged_global_index_takes_the_files_of_every_partition_tablespace():
    db = OracleFake({"FROM dba_data_files df": DATAFILES,
                     "FROM dba_segments sg": lambda sql, b: {"HIST": [("APP", "G_IDX", "P2")],
                                                              "MIXED": [("APP", "G_IDX", "P1")]}.get(
                                                                  b["tablespace_name"], [])})
    idx = Segment(schema="APP", name="G_IDX", kind="INDEX", bytes=8192 * 30, block_size=8192,
                  extents=(Extent(1024, 10, 10), Extent(8, 10, 20)), locator={"read": "index"}, splittable=False)
    (mapped,) = OracleEngine(db).map_volumes([idx], ("RDSDBDATA2", "RDSDBDATA3"))
    assert mapped.locator.to_json()["file_volumes"] == {"1024": "RDSDBDATA2", "8": "RDSDBDATA3"}
    assert "file_volumes_ambiguous" not in mapped.locator
