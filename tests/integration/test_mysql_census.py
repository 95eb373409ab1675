"""The census of a MariaDB volume (issue 21) as a least-privilege user, on a private server (the
user is created there, never on the machine's server). The issue's case: with the README's
grants on one database, a second database the user cannot see was in neither the plan nor the
findings, and the run was READY at 100 %. Judges: the data directory's files (``os.stat``) and
root's own ``INFORMATION_SCHEMA.INNODB_SYS_TABLESPACES``, never the code under test."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pymysql
import pytest

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions
from cutover_prep.engines.mysql.engine import MySQLEngine
from cutover_prep.engines.mysql.sample_db import create_sample

pytestmark = pytest.mark.mysql
HIDDEN_ROWS = 4000  # about 4.5 MiB of InnoDB pages in the database the user cannot see


def connect(spec: ConnectionSpec) -> Any:
    return pymysql.connect(host=spec.host, port=spec.port, user=spec.user, password=spec.password,
                           autocommit=True, charset="utf8mb4")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[Any, ConnectionSpec, ConnectionSpec]]:
    from cutover_prep.engines.mysql.sample_db import PrivateServer, PrivateServerUnavailable

    try:
        private = PrivateServer(buffer_pool_mb=32, performance_schema=False).start()
    except PrivateServerUnavailable as exc:
        pytest.skip(str(exc))
    try:
        root = ConnectionSpec(engine="mariadb", host="127.0.0.1", port=private.port, database="app", user="root",
                              password="", tls="disable")
        conn = connect(root)
        create_sample(conn, "app", rows=300, blob_kib=4)
        with conn.cursor() as cur:
            cur.execute("CREATE DATABASE hidden")
            cur.execute("CREATE TABLE hidden.big (id INT PRIMARY KEY, pad CHAR(255) NOT NULL, KEY p (pad(20))) "
                        "ENGINE=InnoDB")
            cur.execute("INSERT INTO hidden.big SELECT seq, REPEAT(CHAR(65 + seq % 26), 255) FROM hidden.seq_1_to_4000")
            cur.execute("CREATE TABLE hidden.old (id INT PRIMARY KEY) ENGINE=MyISAM")
            # the README's least privilege, on one database: SELECT on it, PROCESS for InnoDB's views
            cur.execute("CREATE USER 'cutover_prep'@'127.0.0.1' IDENTIFIED BY 'pw-least'")
            cur.execute("GRANT SELECT ON app.* TO 'cutover_prep'@'127.0.0.1'")
            cur.execute("GRANT PROCESS ON *.* TO 'cutover_prep'@'127.0.0.1'")
        conn.close()
        yield private, root, replace(root, user="cutover_prep", password="pw-least")
    finally:
        private.close()


def root_tablespaces(root: ConnectionSpec) -> dict[str, str]:
    """Root's own view: tablespace file (relative to the data directory) -> name."""
    conn = connect(root)
    try:
        with conn.cursor() as cur:
            cur.execute("SELECT FILENAME, NAME FROM INFORMATION_SCHEMA.INNODB_SYS_TABLESPACES")
            return {str(f).removeprefix("./"): str(n) for f, n in cur.fetchall()}
    finally:
        conn.close()


def test_the_census_names_a_database_the_user_cannot_see_with_its_bytes(server) -> None:
    private, root, user = server
    engine = MySQLEngine.connect(user)
    try:
        objects = engine.census(DiscoveryOptions())
        plan = {s.key for s in engine.discover(DiscoveryOptions())}
    finally:
        engine.close()
    by_file: dict[str, list] = {}
    for o in objects:
        by_file.setdefault(o.file, []).append(o)
    # every tablespace root sees is named (the temporary one too, engine-internal: issue 33)
    for file, name in root_tablespaces(root).items():
        assert file in by_file, f"{name} ({file})"
    hidden = [o for o in objects if o.schema == "hidden"]
    assert [(o.name, o.kind, o.reason, o.readable, o.file) for o in hidden] == [
        ("big", "tablespace", "no privilege", False, "hidden/big.ibd"),
        ("big", "table definition", "no privilege", False, "hidden/big.frm"),  # MariaDB's .frm, no size
        ("db.opt", "database options", "no privilege", False, "hidden/db.opt")]
    assert all((private.data / o.file).exists() for o in hidden)
    big = hidden[0]
    assert big.bytes == os.stat(private.data / "hidden" / "big.ibd").st_size and big.bytes > 4 * 2**20
    assert big.file == "hidden/big.ibd"
    # MyISAM in a database the user cannot see is in no view the user may read: not named (documented)
    assert not any(o.name == "old" for o in objects)
    # the system tablespace is named, not readable by SQL, with its key in the plan of include_system
    (system,) = by_file["ibdata1"]
    assert (system.key, system.reason) == ("(innodb).innodb_system#system_tablespace", "engine-internal")
    assert system.bytes == os.stat(private.data / "ibdata1").st_size
    # what the user can read: the plan's segments, key for key, each with the file that holds it
    app = [o for o in objects if o.schema == "app" and o.kind != "free space"]
    assert app and all(o.readable and o.reason is None for o in app), [o for o in app if not o.readable]
    assert {o.key for o in app} == plan
    files = {o.key: o.file for o in app}
    assert files["app.int_pk#clustered"] == files["app.int_pk.v_idx#index"] == "app/int_pk.ibd"
    assert files["app.parted:`p 1;`#clustered"] == "app/parted#P#p@00201@003b.ibd"  # quoted: a space (issue 32)
    assert files["app.my_isam#table"] == "app/my_isam.MYD" and files["app.my_isam.s_idx#index"] == "app/my_isam.MYI"
    assert all(o.file and (private.data / o.file).exists() for o in app), [o.key for o in app if not o.file]
    # extents no index holds are named with their file (string_pk's TEXT pages were freed to 4 MiB here)
    for o in objects:
        if o.kind == "free space":
            assert o.reason == "engine-internal" and 0 < o.bytes < os.stat(private.data / o.file).st_size
    (redo,) = [o for o in objects if o.kind == "redo_log"]  # MariaDB 10.5+: one file, innodb_log_file_size
    assert (redo.reason, redo.file, redo.bytes) == ("engine-internal", "ib_logfile0",
                                                    os.stat(private.data / "ib_logfile0").st_size)


def test_a_database_excluded_by_the_input_is_named_as_waived(server) -> None:
    _, _, user = server
    engine = MySQLEngine.connect(user)
    try:
        objects = engine.census(DiscoveryOptions(exclude_schemas=("hidden",)))
    finally:
        engine.close()
    assert {o.reason for o in objects if o.schema == "hidden"} == {"excluded by input"}
    assert {o.reason for o in objects if o.schema == "app" and o.kind != "free space"} == {None}
