"""Issue 33 §2, the goal: a MariaDB database, read by a user with exactly the README's least-privilege grants,
ends READY locally by default (``cutover-prep local --dsn mariadb://...``), and the engine-internal bytes no SQL
can read (InnoDB's system and temporary tablespaces, the database's free extents, the redo log) are named with
their bytes. The judge is the server itself: root's INFORMATION_SCHEMA.INNODB_SYS_TABLESPACES (FILE_SIZE),
``@@innodb_log_file_size`` (MariaDB 10.5+: one redo log file, ib_logfile0), the tables' DATA_FREE, and the files'
sizes in the data directory where this machine can stat them.

The shared server here has TLS off (``have_ssl`` DISABLED), so the user is created without the README's
``REQUIRE SSL``; the grants are the README's, word for word."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pymysql
import pytest

from cutover_prep.cli.main import main
from cutover_prep.engines.mysql.sample_db import create_sample
from cutover_prep.engines.mysql.sql import quote_ident
from tests.conftest import MYSQL_TEST_PREFIX

pytestmark = pytest.mark.mysql

README_GRANTS = {  # README "Least-privilege database users", MySQL / MariaDB; and its narrower form
    "select-process-on-all": ["GRANT SELECT, PROCESS ON *.* TO {user}"],
    "select-on-the-database": ["GRANT SELECT ON {db}.* TO {user}", "GRANT PROCESS ON *.* TO {user}"],
}


def root(spec) -> pymysql.connections.Connection:
    return pymysql.connect(host=spec.host, port=spec.port, user=spec.user, password=spec.password, autocommit=True,
                           charset="utf8mb4")


@pytest.fixture(scope="module")
def database(mysql_admin) -> Iterator[str]:
    name = f"{MYSQL_TEST_PREFIX}ready"
    conn = root(mysql_admin)
    try:
        create_sample(conn, name, rows=1500, blob_kib=20)
        yield name
    finally:
        with conn.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {quote_ident(name)}")
        conn.close()


@pytest.fixture
def least_privilege_user(mysql_admin, database) -> Iterator[object]:
    made: list[str] = []

    def make(grants: str) -> tuple[str, str]:
        name, password = f"cp33_{uuid.uuid4().hex[:10]}", uuid.uuid4().hex
        user = f"'{name}'@'%'"
        conn = root(mysql_admin)
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE USER {user.replace('%', '%%')} IDENTIFIED BY %s", (password,))
                made.append(user)
                for grant in README_GRANTS[grants]:
                    cur.execute(grant.format(user=user, db=quote_ident(database)))
        finally:
            conn.close()
        return name, password

    yield make
    conn = root(mysql_admin)
    try:
        with conn.cursor() as cur:
            for user in made:
                cur.execute(f"DROP USER IF EXISTS {user}")
    finally:
        conn.close()


def server_facts(spec, database: str) -> dict[str, object]:
    """Root's own view of the engine-internal files: tablespace sizes, the redo log's size, the free extents."""
    conn = root(spec)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT NAME, FILE_SIZE, FILENAME FROM INFORMATION_SCHEMA.INNODB_SYS_TABLESPACES "
                        "WHERE NAME NOT LIKE '%/%'")
            spaces = {str(n): (int(s), str(f)) for n, s, f in cur.fetchall()}
            cur.execute("SELECT @@innodb_log_file_size, @@datadir")
            redo, datadir = cur.fetchone()
            cur.execute("SELECT COALESCE(SUM(p.DATA_FREE), 0) FROM INFORMATION_SCHEMA.PARTITIONS p JOIN "
                        "INFORMATION_SCHEMA.TABLES t "
                        "ON t.TABLE_SCHEMA = p.TABLE_SCHEMA AND t.TABLE_NAME = p.TABLE_NAME "
                        "WHERE p.TABLE_SCHEMA = %s AND t.ENGINE = 'InnoDB'", (database,))
            free = int(cur.fetchone()[0])
    finally:
        conn.close()
    return {"spaces": spaces, "redo": int(redo), "datadir": Path(str(datadir)), "free": free}


@pytest.mark.parametrize("grants", sorted(README_GRANTS))
def test_a_mariadb_database_with_the_readmes_grants_ends_ready_locally(grants, mysql_admin, database,
                                                                       least_privilege_user, tmp_path,
                                                                       capsys) -> None:
    user, password = least_privilege_user(grants)
    dsn = f"mariadb://{user}:{password}@{mysql_admin.host}:{mysql_admin.port}/{database}"
    # --database: other tests' databases come and go on the shared server; the selection waives them
    code = main(["local", "--dsn", dsn, "--database", database, "--out", str(tmp_path), "--no-progress",
                 "--no-benchmark", "--unit-mb", "1", "--chunk-mb", "1"])
    out = capsys.readouterr().out
    assert code == 0 and "verdict: READY" in out, out
    assert password not in out
    findings = json.loads((tmp_path / "findings.json").read_text())
    census = findings["census"]
    assert census["unread_bytes"] == 0 and census["end_census"], census["unread"][:5]
    facts = server_facts(mysql_admin, database)
    spaces = facts["spaces"]
    internal = {u["key"]: u for u in census["unread"] if u.get("engine_internal")}
    system = internal["(innodb).innodb_system#system_tablespace"]
    assert system["unread_bytes"] == spaces["innodb_system"][0]
    assert internal["(innodb).innodb_temporary#temporary_tablespace"]["unread_bytes"] == spaces["innodb_temporary"][0]
    redo = internal["(innodb).redo_log#redo_log"]
    assert (redo["unread_bytes"], redo["file"]) == (facts["redo"], "ib_logfile0")
    undo = sum(size for name, (size, _) in spaces.items() if name.startswith("innodb_undo"))
    free = sum(u["unread_bytes"] for u in internal.values() if u["kind"] == "free space")
    assert free == facts["free"]
    expected = spaces["innodb_system"][0] + spaces["innodb_temporary"][0] + undo + facts["redo"] + facts["free"]
    assert census["engine_internal_bytes"] == expected
    datadir = facts["datadir"]
    if os.access(datadir, os.X_OK):  # the files themselves, where this machine may stat them
        assert system["unread_bytes"] == (datadir / "ibdata1").stat().st_size
        assert redo["unread_bytes"] == (datadir / "ib_logfile0").stat().st_size
    # named: in the verdict's words and on the terminal; mysql.* is waived, never unread
    (reason,) = [r for r in findings["verdict"]["reasons"] if r["code"] == "ENGINE_INTERNAL"]
    assert reason["ok"] and reason["judged"] is False and f"{expected / 2**20:.2f} MiB" in reason["message"]
    assert "ENGINE_INTERNAL" in out and "engine-internal" in out
    mysql = [u for u in census["unread"] if u["schema"] == "mysql"]
    assert mysql and all(u["waived"] and u["reason"] == "excluded by input" for u in mysql), mysql[:3]


def test_the_preflight_of_the_narrow_grants_passes_and_waives_the_system_schemas(mysql_admin, database,
                                                                                least_privilege_user,
                                                                                capsys) -> None:
    """With ``SELECT ON db.*`` + ``PROCESS`` the preflight failed on mysql.* (no privilege) before."""
    user, password = least_privilege_user("select-on-the-database")
    code = main(["preflight", "--dsn", f"mariadb://{user}:{password}@{mysql_admin.host}:{mysql_admin.port}/{database}",
                 "--database", database])
    out = capsys.readouterr().out
    assert code == 0 and "preflight passed" in out, out
    assert "FAIL" not in out and "no privilege" not in out, out
    census = [line for line in out.splitlines() if " census: " in line]
    assert census and not any("mysql." in line for line in census), census  # waived: counted, not named
    assert any("engine-internal" in line for line in census), census
