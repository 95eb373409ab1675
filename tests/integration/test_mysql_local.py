"""``cutover-prep local --dsn mariadb://`` (and ``mysql://``) on the sample catalogue: every table and
index named in the findings, 100 % coverage, nothing written (every table's checksum unchanged)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import pymysql
import pytest

from cutover_prep.cli.main import main
from cutover_prep.engines.mysql.sample_db import create_sample
from cutover_prep.engines.mysql.sql import qualified, quote_ident
from tests.conftest import MYSQL_TEST_PREFIX

pytestmark = pytest.mark.mysql


def checksums(spec, database: str) -> dict[str, int]:
    conn = pymysql.connect(host=spec.host, port=spec.port, user=spec.user, password=spec.password, charset="utf8mb4")
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT TABLE_NAME FROM INFORMATION_SCHEMA.TABLES WHERE TABLE_SCHEMA = %s", (database,))
            names = [r[0] for r in cur.fetchall()]
            cur.execute(f"CHECKSUM TABLE {', '.join(qualified(database, n) for n in names)} EXTENDED")
            return {str(r[0]): r[1] for r in cur.fetchall()}
    finally:
        conn.close()


@pytest.fixture(scope="module")
def sample_database(mysql_admin) -> Iterator[tuple[str, dict[str, int]]]:
    """One sample database for both runs below (each checks that it wrote nothing to it): its name and the
    sample's tables with their row counts."""
    database = f"{MYSQL_TEST_PREFIX}local_sample"
    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password, autocommit=True, charset="utf8mb4")
    try:
        counts = create_sample(conn, database, rows=1500, blob_kib=20)
        yield database, counts
    finally:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {quote_ident(database)}")
        conn.close()


@pytest.mark.parametrize(("scheme", "options"), [
    ("mariadb", ["--no-benchmark"]),
    # the benchmark and the opt-in write test too; the probes' verdict is not asserted: on a server without a
    # restored volume cold and warm reads are both buffer-pool hits, and their order is noise on a busy machine
    ("mysql", ["--point-seconds", "1", "--write-test"])])
def test_local_run_reads_every_table_and_index_and_writes_nothing(scheme, options, mysql_admin, sample_database,
                                                                   tmp_path, capsys) -> None:
    database, counts = sample_database
    before = checksums(mysql_admin, database)
    auth = mysql_admin.user + (f":{mysql_admin.password}" if mysql_admin.password else "")
    code = main(["local", "--dsn", f"{scheme}://{auth}@{mysql_admin.host}:{mysql_admin.port}/{database}",
                 "--include-schema", database, "--out", str(tmp_path), "--no-progress", "--unit-mb", "1",
                 "--chunk-mb", "1", *options])
    out = capsys.readouterr().out
    # InnoDB's system tablespace and the free extents of a tablespace have no SQL read path: named with their
    # bytes as engine-internal, apart from UNREAD_OBJECTS (issue 33), so the warm-up alone is READY
    assert "coverage 100.0 %" in out and f"engine {scheme}" in out and "SUCCEEDED" in out
    findings = json.loads((tmp_path / "findings.json").read_text())
    assert findings["coverage_pct"] == 100.0 and findings["units"]["failed"] == 0
    segments = [json.loads(line) for line in (tmp_path / "plan-segments.jsonl").read_text().splitlines()]
    named = {(s["name"], s["kind"]) for s in segments}
    for table in counts:
        assert any(name == table for name, _ in named), table
    assert ("int_pk.v_idx", "index") in named and ("no_pk", "clustered (GEN_CLUST_INDEX)") in named
    assert ("my_isam", "table") in named and ("my_isam.s_idx", "index") in named
    assert "innodb_system" in json.dumps(findings["read_methods_by_database"])
    if "--write-test" in options:
        assert "benchmark: DONE" in out and "write-direct" in out and "write-random" in out
        assert findings["scratch"]["created"] == findings["scratch"]["removed"] != []
        assert findings["scratch"]["left"] == []
    else:
        assert findings["scratch"]["created"] == [] and "verdict: READY" in out and code == 0, out
    assert "UNREAD_OBJECTS" not in [r["code"] for r in findings["verdict"]["reasons"] if not r["ok"]]
    unread = [u for u in findings["census"]["unread"] if not u["waived"]]
    assert unread and {u["reason"] for u in unread} == {"engine-internal"}, unread
    assert {u["kind"] for u in unread} <= {"system_tablespace", "undo_tablespace", "temporary_tablespace",
                                          "free space", "redo_log"}, unread
    assert "(innodb).innodb_system#system_tablespace" in {u["key"] for u in unread}
    assert checksums(mysql_admin, database) == before  # nothing written
    # no restart under the run; judged by the server's own clock and Uptime, read here (whole seconds)
    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT UTC_TIMESTAMP() - INTERVAL VARIABLE_VALUE SECOND FROM information_schema.GLOBAL_STATUS "
                        "WHERE VARIABLE_NAME = 'UPTIME'")
            started = cur.fetchone()[0].replace(tzinfo=UTC)
    finally:
        conn.close()
    server = findings["server"]
    assert server["restarted"] is False, server
    for key in ("started_at", "started_at_end"):
        assert abs((datetime.fromisoformat(server[key].replace("Z", "+00:00")) - started).total_seconds()) <= 2, server
