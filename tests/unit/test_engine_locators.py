"""Each engine reads its segments' locators (the plan's JSON) through its typed locator: every key discovery
writes is a field of it, read back as written. A key renamed on one side and not the other fails here."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cutover_prep.engines.base import DiscoveryOptions, Extent, ReadRange
from cutover_prep.engines.locators import BaseLocator, MysqlLocator, OracleLocator, PgLocator
from cutover_prep.engines.mysql import discovery as mysql_discovery
from cutover_prep.engines.oracle import datafiles
from cutover_prep.engines.oracle import discovery as oracle_discovery


def _read_back(kind: Any, written: BaseLocator | dict[str, Any]) -> None:
    locator = written.to_json() if isinstance(written, BaseLocator) else written
    names = {f.alias or name for name, f in kind.model_fields.items()}
    assert set(locator) <= names, f"{kind.__name__} lacks {sorted(set(locator) - names)}"
    typed = kind.of(locator)
    assert type(typed) is kind and json.dumps(typed.to_json()) == json.dumps(locator, default=list)


def _oracle_row(name: str, seg_type: str, **more: Any) -> tuple:
    row = {"owner": "APP", "name": name, "part": None, "seg_type": seg_type, "size": 65536, "blocks": 8,
           "block_size": 8192, "objd": 71234, "lob_table": None, "lob_column": None, "lob_type": None,
           "idx_owner": None, "idx_table": None, "index_type": None, "locality": None, "lob_table_part": None,
           "bigfile": "NO", "lob_col": None, "iot_type": None, "iot_name": None, "lob_table_subpart": None,
           "visibility": "VISIBLE", "lob_table_iot": None, **more}
    return tuple(row.values())


ORACLE_ROWS = [
    _oracle_row("ORDERS", "TABLE", bigfile="YES"),
    _oracle_row("ORDERS_PK", "INDEX", idx_owner="APP", idx_table="ORDERS", index_type="NORMAL",
                visibility="INVISIBLE"),
    _oracle_row("ORDERS_P", "INDEX PARTITION", part="P1", idx_owner="APP", idx_table="ORDERS",
                index_type="NORMAL", locality="LOCAL"),
    _oracle_row("SYS_IOT_OVER_7", "TABLE", iot_type="IOT_OVERFLOW", iot_name="EVENTS"),
    _oracle_row("SYS_LOB0000071234C00002$$", "LOBSEGMENT", lob_table="DOCS", lob_column="BODY", lob_type="CLOB"),
    _oracle_row("SYS_LOB0000071235C00002$$", "LOB PARTITION", part="P1", lob_table="DOCS", lob_column="BODY",
                lob_type="BLOB", lob_table_part="P1", lob_table_iot="IOT"),
    _oracle_row("SYS_LOB0000071236C00003$$", "LOBSEGMENT", lob_table="DOCS", lob_column="XML", lob_type="XMLTYPE"),
    _oracle_row("C_CLUSTER", "CLUSTER"),
]


@pytest.mark.parametrize("row", ORACLE_ROWS, ids=lambda r: f"{r[3]} {r[1]}")
def test_every_oracle_locator_key_is_a_field_of_the_oracle_locator(row: tuple) -> None:
    segment = oracle_discovery.classify(row, {row[:2] + row[2:4]: [Extent(4, 128, 8)]})
    assert segment is not None
    _read_back(OracleLocator, segment.locator)


def test_the_datafile_pass_and_the_volumes_keys_are_fields_of_the_oracle_locator() -> None:
    locator = datafiles.datafile_segment(7, "USERS", 1280, 8192).locator.to_json()
    _read_back(OracleLocator, locator)
    _read_back(OracleLocator, {**locator, "file_volumes": {"7": "RDSDBDATA2"}, "file_volumes_ambiguous": True})
    assert OracleLocator.of({**locator, "cache": True}).file_id == 7  # what the planning adds is not Oracle's


def test_every_mysql_locator_key_is_a_field_of_the_mysql_locator() -> None:
    cat = mysql_discovery.Catalogue(
        page_size=16384,
        tables=[("app", "orders", "InnoDB", 163840, 32768, 1000, ""), ("app", "logs", "MyISAM", 16384, 0, 10, "")],
        partitions=[], index_pages=None, fulltext_aux=[("app/fts_0000000000000123_being_deleted", 98304)],
        statistics=[("app", "orders", "PRIMARY", 0, 1, "id", None, "BTREE", "NO"),
                    ("app", "orders", "k_doc", 1, 1, "doc", 10, "BTREE", "NO"),
                    ("app", "orders", "k_hidden", 1, 1, "note", None, "BTREE", "YES")],
        columns=[("app", "orders", "id", "bigint", "NO", 0, ""), ("app", "orders", "doc", "text", "YES", 65535, ""),
                 ("app", "orders", "note", "varchar", "YES", 40, ""),
                 ("app", "logs", "line", "text", "YES", 65535, "")])
    segments = mysql_discovery.segments(cat, DiscoveryOptions())
    assert {s.locator.to_json()["read"] for s in segments} == {"pk_walk", "index_scan", "not_readable", "full_scan"}
    for segment in segments:
        _read_back(MysqlLocator, segment.locator)


def test_the_postgres_locator_reads_what_discovery_and_the_planning_write() -> None:
    locator = {"database": "shop", "oid": 16390, "fork": "main", "relkind": "r", "schema": "public",
               "relname": "orders", "cache": True}
    _read_back(PgLocator, locator)


# ranges as a plan of before issue 34 stored them (units.json, the Map's items): each engine's locator, in the
# order its discovery (and the planning's ``cache``, the volumes' ``file_volumes``) wrote the keys
STORED_RANGES = [
    '{"segment": "db/public.t#main", "locator": {"database": "db", "oid": 16384, "fork": "main", "relkind": "r", '
    '"schema": "public", "relname": "t", "cache": true}, "extents": [[0, 0, 8]], "block_size": 8192, '
    '"splittable": true}',
    '{"segment": "app.t#clustered", "locator": {"schema": "app", "table": "t", "engine": "innodb", '
    '"read": "pk_walk", "partition": null, "key_index": "PRIMARY", "key_columns": ["id"], "offpage": [], '
    '"rows": 3, "pages": 1, "probe": {"column": "id"}}, "extents": [[0, 0, 1]], "block_size": 16384, '
    '"splittable": true}',
    '{"segment": "app.t#index", "locator": {"schema": "app", "table": "t", "engine": "innodb", "partition": null, '
    '"index": "i", "read": "index_scan", "index_columns": ["a", "id"], "range_column": "a"}, '
    '"extents": [[0, 0, 1]], "block_size": 16384, "splittable": false}',
    '{"segment": "APP.T#TABLE", "locator": {"owner": "APP", "segment": "T", "partition": null, '
    '"segment_type": "TABLE", "read": "rowid_range", "table": "T", "data_object_id": 71234, "bigfile": false, '
    '"file_volumes": {"4": "rdsdbdata2"}, "an_older_key": [1, 2]}, "extents": [[4, 128, 8]], "block_size": 8192, '
    '"splittable": true}',
    '{"segment": "USERS.file_7#DATAFILE", "locator": {"read": "datafile", "file_id": 7, "tablespace": "USERS", '
    '"chunk_bytes": 1073741824}, "extents": [[7, 1, 1280]], "block_size": 8192, "splittable": true}',
]


@pytest.mark.parametrize(("stored", "kind"), list(zip(STORED_RANGES, [PgLocator, MysqlLocator, MysqlLocator,
                                                                  OracleLocator, OracleLocator], strict=True)))
def test_a_stored_range_reads_back_typed_and_writes_the_same_bytes(stored: str, kind: type) -> None:
    rng = ReadRange.from_json(json.loads(stored))
    assert type(rng.locator) is kind
    assert json.dumps(rng.to_json()) == stored


def test_the_planning_adds_cache_last_and_keeps_a_held_field_in_place() -> None:
    loc = PgLocator.model_validate({"database": "db", "oid": 1, "fork": "main"})
    assert list(loc.with_fields(cache=True).to_json()) == ["database", "oid", "fork", "cache"]
    held = PgLocator.model_validate({"cache": False, "database": "db"})
    assert list(held.with_fields(cache=True).to_json()) == ["cache", "database"]
