"""The MySQL / MariaDB engine against a real server (127.0.0.1:3306 here): every table and index
read, rows counted independently, nothing written, a resumed walk, the plan checks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pymysql
import pytest

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions, PermanentReadError, ReadRange
from cutover_prep.engines.base import Extent, TransientDatabaseError
from cutover_prep.engines.mysql.engine import MySQLEngine, map_error
from cutover_prep.engines.mysql.sample_db import HOSTILE_COLUMN, HOSTILE_INDEX, HOSTILE_TABLE, create_sample
from cutover_prep.engines.mysql.sql import qualified, quote_ident
from cutover_prep.warmup.planning import PlanOptions, plan_units
from cutover_prep.warmup.unit import chunks

pytestmark = pytest.mark.mysql
START = {"range": 0, "extent": 0, "offset": 0}


def connect(spec: ConnectionSpec, **kw: Any) -> Any:
    return pymysql.connect(host=spec.host, port=spec.port, user=spec.user, password=spec.password,
                           autocommit=True, charset="utf8mb4", **kw)


@pytest.fixture(scope="module")
def sample(mysql_admin: ConnectionSpec) -> Iterator[tuple[ConnectionSpec, dict[str, int]]]:
    from tests.conftest import MYSQL_TEST_PREFIX

    name = f"{MYSQL_TEST_PREFIX}sample"
    conn = connect(mysql_admin)
    try:
        counts = create_sample(conn, name, rows=3000)
        yield replace(mysql_admin, database=name, tls="disable"), counts
    finally:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {quote_ident(name)}")
        conn.close()


def read_all(engine: MySQLEngine, segments: list, chunk_bytes: int = 64 * 1024) -> dict[str, dict[str, int]]:
    """Plan small units and read every chunk as the warm-unit Lambda would; rows and column bytes per segment."""
    totals: dict[str, dict[str, int]] = {}
    for unit in plan_units(segments, PlanOptions(unit_bytes=256 * 1024)).units:
        for chunk in chunks(unit.ranges, START, chunk_bytes):
            result = engine.read_range(chunk.rng)
            assert result.blocks == chunk.rng.blocks
            seg = totals.setdefault(chunk.rng.segment_key, {"rows": 0, "bytes": 0})
            seg["rows"] += result.details["rows"]
            seg["bytes"] += result.details["bytes_read_from_columns"]
    return totals


def count(spec: ConnectionSpec, table: str, partition: str | None = None) -> int:
    conn = connect(spec)
    try:
        with conn.cursor() as cur:
            part = f" PARTITION ({quote_ident(partition)})" if partition else ""
            cur.execute(f"SELECT COUNT(*) FROM {qualified(spec.database, table)}{part}")
            return int(cur.fetchone()[0])
    finally:
        conn.close()


def session_writes(engine: MySQLEngine) -> dict[str, int]:
    with engine.conn.cursor() as cur:
        cur.execute("SHOW SESSION STATUS WHERE Variable_name IN ('Handler_write', 'Handler_update', "
                    "'Handler_delete', 'Com_insert', 'Com_update', 'Com_delete', 'Com_create_table')")
        return {k: int(v) for k, v in cur.fetchall()}


def bq(name: str) -> str:
    """A name as a MySQL key writes it (issue 32): as it is when a plain word, else in backticks, doubled inside."""
    plain = name and not any(c in "/.:#\"`'" or c.isspace() or not c.isprintable() for c in name)
    return name if plain else "`" + name.replace("`", "``") + "`"


def test_every_table_and_index_is_read_once_with_rows_counted_and_nothing_written(sample) -> None:
    spec, counts = sample
    engine = MySQLEngine.connect(spec, call_timeout_seconds=120)
    try:
        before = session_writes(engine)
        segments = engine.discover(DiscoveryOptions(include_schemas=(spec.database,)))
        keys = {s.key for s in segments}
        db = spec.database
        for table in counts:
            assert any(k.startswith(f"{db}.{bq(table)}#") or k.startswith(f"{db}.{bq(table)}:") for k in keys), table
        expected_indexes = {f"{db}.int_pk.v_idx#index", f"{db}.composite_pk.bv#index",
                            f"{db}.string_pk.doc_prefix#index", f"{db}.no_pk.a_idx#index", f"{db}.my_isam.s_idx#index",
                            f"{db}.my_isam.PRIMARY#index", f"{db}.{bq(HOSTILE_TABLE)}.{bq(HOSTILE_INDEX)}#index",
                            f"{db}.parted.grp_idx:p0#index", f"{db}.parted.grp_idx:`p 1;`#index"}
        assert expected_indexes <= keys
        totals = read_all(engine, segments)
        assert set(totals) == keys  # every segment read
        for name in ("int_pk", "sparse_pk", "composite_pk", "string_pk", "blobs", HOSTILE_TABLE):
            assert totals[f"{db}.{bq(name)}#clustered"]["rows"] == count(spec, name) == counts[name]
        for part in ("p0", "p 1;", "pmax"):
            assert totals[f"{db}.parted:{bq(part)}#clustered"]["rows"] == count(spec, "parted", part)
            assert totals[f"{db}.parted.grp_idx:{bq(part)}#index"]["rows"] == count(spec, "parted", part)
        assert sum(totals[f"{db}.parted:{bq(p)}#clustered"]["rows"] for p in ("p0", "p 1;", "pmax")) == counts["parted"]
        assert totals[f"{db}.no_pk#clustered (GEN_CLUST_INDEX)"]["rows"] == counts["no_pk"]
        assert totals[f"{db}.my_isam#table"]["rows"] == counts["my_isam"]
        assert totals[f"{db}.string_pk.doc_prefix#index"]["rows"] == counts["string_pk"]
        conn = connect(spec)
        with conn.cursor() as cur:  # off-page columns: every byte of them was read
            cur.execute("SELECT SUM(COALESCE(LENGTH(body), 0) + COALESCE(LENGTH(note), 0)) "
                        f"FROM {qualified(db, 'blobs')}")
            assert totals[f"{db}.blobs#clustered"]["bytes"] == int(cur.fetchone()[0]) > 40 * 1024 * 50
        conn.close()
        after = session_writes(engine)
        assert after == before, "the engine's session wrote something"
        assert engine.confirmation["pages_planned"] == sum(s.blocks for s in segments)
    finally:
        engine.close()


def test_the_session_is_read_only_and_has_a_statement_timeout(sample) -> None:
    spec, _ = sample
    engine = MySQLEngine.connect(spec, call_timeout_seconds=0.5)
    try:
        with engine.conn.cursor() as cur:
            with pytest.raises(pymysql.err.MySQLError) as err:
                cur.execute(f"INSERT INTO {qualified(spec.database, 'int_pk')} (id, v) VALUES (%s, %s)", (-1, 0))
            assert err.value.args[0] == 1792  # Cannot execute statement in a READ ONLY transaction
            cur.execute("SELECT @@max_statement_time" if engine.dialect.flavor == "mariadb"
                        else "SELECT @@max_execution_time")
            assert float(cur.fetchone()[0]) in (0.5, 500)
        assert count(spec, "int_pk") == 3000
        with engine.conn.cursor() as cur, pytest.raises(pymysql.err.MySQLError) as err:
            cur.execute("SELECT SLEEP(3) FROM DUAL WHERE 1 = 1 UNION ALL SELECT 1")
        assert err.value.args[0] in engine.dialect.timeout_errors
        assert isinstance(map_error(err.value, "x"), TransientDatabaseError)  # retried by the retry policy
    finally:
        engine.close()


def test_a_restart_resumes_mid_table_at_the_same_bound_and_reads_each_row_once(sample) -> None:
    spec, counts = sample
    first = MySQLEngine.connect(spec)
    seg = next(s for s in first.discover(DiscoveryOptions(include_schemas=(spec.database,)))
               if s.key.endswith(".composite_pk#clustered"))
    rng = ReadRange(seg.key, seg.locator, seg.extents, seg.block_size, True)
    pieces = list(chunks([rng], START, 2 * seg.block_size))
    assert len(pieces) >= 3
    half = len(pieces) // 2
    rows = sum(first.read_range(c.rng).details["rows"] for c in pieces[:half])
    bound = first._bounds[seg.key][pieces[half].rng.extents[0].first_block]
    first.close()
    second = MySQLEngine.connect(spec)  # a new container: nothing remembered, the bound is walked again
    try:
        resumed = second.read_range(pieces[half].rng)
        assert resumed.details["repositioned_rows"] > 0
        assert second._bounds[seg.key][pieces[half].rng.extents[0].first_block] == bound
        rows += resumed.details["rows"] + sum(second.read_range(c.rng).details["rows"] for c in pieces[half + 1:])
    finally:
        second.close()
    assert rows == counts["composite_pk"]


def test_a_later_piece_of_a_split_table_starts_where_the_walk_would_be(sample) -> None:
    spec, counts = sample
    engine = MySQLEngine.connect(spec)
    try:
        seg = next(s for s in engine.discover(DiscoveryOptions(include_schemas=(spec.database,)))
                   if s.key.endswith(".string_pk#clustered"))
        blocks = seg.blocks
        back, front = (ReadRange(seg.key, seg.locator, (Extent(0, blocks // 2, blocks - blocks // 2),), seg.block_size),
                       ReadRange(seg.key, seg.locator, (Extent(0, 0, blocks // 2),), seg.block_size))
        rows = engine.read_range(back).details["rows"] + engine.read_range(front).details["rows"]
        assert rows == counts["string_pk"]
    finally:
        engine.close()


def test_a_clustered_segment_read_in_one_chunk_is_its_whole_scan(sample) -> None:
    spec, _ = sample
    engine = MySQLEngine.connect(spec)
    try:
        for seg in engine.discover(DiscoveryOptions(include_schemas=(spec.database,))):
            if seg.locator.read == "pk_walk":  # no bound at all: the server may scan the table (= the index)
                rows = engine.read_range(ReadRange(seg.key, seg.locator, seg.extents, seg.block_size)).details["rows"]
                assert rows == count(spec, seg.locator.to_json()["table"], seg.locator.to_json()["partition"]), seg.key
    finally:
        engine.close()


def test_an_index_the_server_would_not_read_as_planned_is_a_named_error(sample) -> None:
    spec, _ = sample
    engine = MySQLEngine.connect(spec)
    try:
        loc = {"read": "index_scan", "schema": spec.database, "table": "int_pk", "index": "v_idx",
               "index_columns": ["v", "pad"], "partition": None}  # pad is not in v_idx: not covering
        with pytest.raises(PermanentReadError, match="would not read index v_idx covering"):
            engine.read_range(ReadRange(f"{spec.database}.int_pk.v_idx#index", loc, (Extent(0, 0, 1),), 16384, False))
    finally:
        engine.close()


def test_fulltext_and_system_tablespaces_are_named_as_not_readable(mysql_admin, mysql_database) -> None:
    name = mysql_database("fts")
    conn = connect(mysql_admin)
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {quote_ident(name)}")
        cur.execute(f"CREATE TABLE {qualified(name, 'docs')} (id INT PRIMARY KEY, body TEXT, FULLTEXT KEY ft (body)) "
                    "ENGINE=InnoDB")
        cur.execute(f"INSERT INTO {qualified(name, 'docs')} VALUES (1, 'warm every page'), (2, 'once')")
    conn.close()
    engine = MySQLEngine.connect(replace(mysql_admin, database=name, tls="disable"))
    try:
        segments = engine.discover(DiscoveryOptions(include_schemas=(name,)))
        unreadable = [s for s in segments if s.locator.read == "not_readable"]
        assert {s.kind for s in unreadable} == {"fulltext_aux", "index"}
        assert any(s.name.startswith("FTS_") for s in unreadable)
        for seg in unreadable:
            with pytest.raises(PermanentReadError, match="not readable by SQL"):
                engine.read_range(ReadRange(seg.key, seg.locator, seg.extents, seg.block_size, False))
        assert "innodb_system" in engine.read_methods()["not_readable_by_sql"]
        with_system = engine.discover(DiscoveryOptions(include_schemas=(name, "(innodb)"), include_system=True))
        assert any(s.kind == "system_tablespace" and s.name == "innodb_system" for s in with_system)
    finally:
        engine.close()


def test_hostile_names_are_quoted_and_read(sample) -> None:
    spec, counts = sample
    engine = MySQLEngine.connect(spec)
    try:
        segs = [s for s in engine.discover(DiscoveryOptions(include_schemas=(spec.database,)))
                if s.locator.to_json().get("table") == HOSTILE_TABLE]
        assert {s.kind for s in segs} == {"clustered", "index"}
        assert segs[0].locator.to_json()["key_columns"] == [HOSTILE_COLUMN]
        assert read_all(engine, segs)[segs[0].key]["rows"] == counts[HOSTILE_TABLE]
    finally:
        engine.close()


def test_tls_is_required_by_default_and_the_password_is_not_sent_without_it(mysql_admin, monkeypatch) -> None:
    monkeypatch.setenv("CUTOVER_PREP_TLS", "require")
    spec = replace(mysql_admin, password="not-sent", tls=None)
    with pytest.raises(Exception) as err:
        MySQLEngine.connect(spec)
    message = str(err.value)
    assert type(err.value).__name__ == "DatabaseUnreachable" and "TLS is required" in message
    assert "not-sent" not in message and "\n" not in message


def test_a_user_with_only_select_and_process_reads_everything(tmp_path) -> None:
    """On a private server (a user is created there, never on the machine's server): the README's grants."""
    from cutover_prep.engines.mysql.sample_db import PrivateServer, PrivateServerUnavailable

    try:
        server = PrivateServer(buffer_pool_mb=32, performance_schema=False).start()
    except PrivateServerUnavailable as exc:
        pytest.skip(str(exc))
    try:
        root = ConnectionSpec(engine="mariadb", host="127.0.0.1", port=server.port, database="app", user="root",
                              password="", tls="disable")
        conn = connect(root)
        counts = create_sample(conn, "app", rows=600, blob_kib=8)
        with conn.cursor() as cur:
            cur.execute("CREATE USER 'cutover_prep'@'127.0.0.1' IDENTIFIED BY 'pw-least'")
            cur.execute("GRANT SELECT, PROCESS ON *.* TO 'cutover_prep'@'127.0.0.1'")
        conn.close()
        engine = MySQLEngine.connect(replace(root, user="cutover_prep", password="pw-least"))
        try:
            segments = engine.discover(DiscoveryOptions(include_schemas=("app",)))
            totals = read_all(engine, segments)
            assert totals["app.int_pk#clustered"]["rows"] == counts["int_pk"]
            assert all(t["rows"] > 0 for t in totals.values())
            assert "innodb_system" in engine.read_methods()["not_readable_by_sql"]  # PROCESS: the tablespace views
        finally:
            engine.close()
    finally:
        server.close()


def test_an_ignored_index_is_named_not_readable_and_its_table_still_read(mysql_admin, mysql_database) -> None:
    """MariaDB 10.6+: an IGNORED index cannot be named in FORCE or IGNORE INDEX (error 1176, "Key
    ... doesn't exist"; MariaDB docs, "Ignored Indexes"). The old code planned a covering scan of it
    (1176 at read time) and put it in the IGNORE INDEX list of its table's full scan (1176 again)."""
    name = mysql_database("ignored")
    conn = connect(mysql_admin)
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {quote_ident(name)}")
        cur.execute(f"CREATE TABLE {qualified(name, 'g')} (a INT, b INT, KEY kb (b) IGNORED, KEY ka (a)) ENGINE=InnoDB")
        cur.execute(f"INSERT INTO {qualified(name, 'g')} VALUES (1, 2), (3, 4), (5, 6)")
    conn.close()
    engine = MySQLEngine.connect(replace(mysql_admin, database=name, tls="disable"))
    try:
        segments = {s.key: s for s in engine.discover(DiscoveryOptions(include_schemas=(name,)))}
        ignored = segments[f"{name}.g.kb#index"]
        assert ignored.locator.read == "not_readable" and "IGNORED" in str(ignored.locator.why)
        readable = [s for s in segments.values() if s.locator.to_json()["read"] != "not_readable"]
        totals = read_all(engine, readable)
        assert totals[f"{name}.g#clustered (GEN_CLUST_INDEX)"]["rows"] == 3
        assert totals[f"{name}.g.ka#index"]["rows"] == 3
    finally:
        engine.close()
