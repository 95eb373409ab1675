"""Issue 32, finding 1 on the machine's servers: two relations whose names pasted together are one string.

PostgreSQL: schema ``b`` with table ``c.t`` (a few MiB) and schema ``b.c`` with table ``t``, read by a role that
may SELECT only ``"b.c"."t"``. Both were keyed ``db/b.c.t#table.main``; the census kept the last, the readable
one, and the run was READY at "not read: 0 MiB" while ``"b"."c.t"`` was never read and named nowhere. Judge:
the server's own ``pg_relation_size`` of ``"b"."c.t"``, asked by the test as the superuser.

MariaDB: database ``…b`` with table ``c.t`` and database ``…b.c`` with table ``t`` (both seen by root): one key
``…b.c.t#clustered`` for two tables, in the plan and in the census. Judge: the server's
``INFORMATION_SCHEMA.INNODB_SYS_TABLESPACES`` (each table's own tablespace) and ``TABLES.DATA_LENGTH``.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from cutover_prep.cli.main import main
from cutover_prep.engines import ConnectionSpec, DiscoveryOptions
from tests.conftest import conninfo


@pytest.fixture
def dotted_db(pg_admin: ConnectionSpec) -> Iterator[dict[str, Any]]:
    if pg_admin.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    tag = uuid.uuid4().hex[:8]
    database, role, password = f"cutover_prep_keys_{tag}", f"cutover_prep_keys_{tag}", uuid.uuid4().hex
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD {}").format(sql.Identifier(role), sql.Literal(password)))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    try:
        with psycopg.connect(conninfo(pg_admin, database), autocommit=True) as conn:
            conn.execute('CREATE SCHEMA "b"')
            conn.execute('CREATE SCHEMA "b.c"')
            # about 14 MiB of fixed-width columns: no TOAST relation, so only the table's own forks are at stake
            conn.execute('CREATE TABLE "b"."c.t" AS SELECT g::bigint AS id, g::bigint AS a, g::bigint AS b, '
                         "g::bigint AS c FROM generate_series(1, 240000) g")
            # no VACUUM: each table has its main fork only, which a TID scan (this role has neither pg_prewarm nor
            # pg_read_binary_file) reads whole
            conn.execute('CREATE TABLE "b.c"."t" AS SELECT g AS id FROM generate_series(1, 100) g')
            conn.execute(sql.SQL('GRANT USAGE ON SCHEMA "b.c" TO {}').format(sql.Identifier(role)))
            conn.execute(sql.SQL('GRANT SELECT ON "b.c"."t" TO {}').format(sql.Identifier(role)))
            conn.execute("CHECKPOINT")
            sizes = dict(conn.execute(
                "SELECT n.nspname || ' ' || c.relname || ' ' || f.fork, pg_relation_size(c.oid, f.fork) "
                "FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "CROSS JOIN (VALUES ('main'), ('fsm'), ('vm')) f(fork) WHERE n.nspname IN ('b', 'b.c')").fetchall())
        yield {"database": database, "sizes": sizes, "spec": replace(pg_admin, database=database),
               "role_dsn": f"postgresql://{role}:{password}@{pg_admin.host}:{pg_admin.port}/{database}"}
    finally:
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))
            conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(sql.Identifier(role)))


@pytest.mark.postgres
def test_a_table_whose_pasted_name_is_another_tables_is_named_unread(dotted_db: dict[str, Any], tmp_path: Path,
                                                                     capsys: Any) -> None:
    """The issue's run: READY, exit 0, "not read: 0 MiB" on the old code. Now NOT_READY, ``"b"."c.t"`` named
    unread with the server's bytes, ``"b.c"."t"`` read."""
    sizes, database = dotted_db["sizes"], dotted_db["database"]
    assert sizes["b c.t main"] > 10 * 2**20  # the judge: the server says the unread table is this large
    code = main(["local", "--dsn", dotted_db["role_dsn"], "--database", database, "--out", str(tmp_path),
                 "--exclude-schema", "pg_catalog", "--exclude-schema", "information_schema", "--preflight", "warn",
                 "--no-progress", "--no-benchmark"])
    out, err = capsys.readouterr()
    findings = json.loads(next(tmp_path.rglob("findings.json")).read_text())
    assert code == 1 and findings["verdict"]["verdict"] == "NOT_READY", out + err
    unread = [u for u in findings["census"]["unread"] if not u["waived"]]
    named = {(u["schema"], u["name"], u["kind"]): u for u in unread}
    for fork in ("main", "fsm", "vm"):  # every fork of "b"."c.t" the server has, with its bytes
        if sizes[f"b c.t {fork}"]:
            u = named.pop(("b", "c.t", f"table.{fork}"))
            assert (u["database"], u["bytes"], u["unread_bytes"], u["reason"]) == (
                database, sizes[f"b c.t {fork}"], sizes[f"b c.t {fork}"], "no privilege")
            assert u["key"] == f'{database}/b."c.t"#table.{fork}'
    assert not [k for k in named if k[0] in ("b", "b.c")]  # nothing else of the two schemas is unread
    assert findings["census"]["unread_bytes"] >= sum(v for k, v in sizes.items() if k.startswith("b c.t"))
    # "b.c"."t" was planned and read, under its own key
    read = {s["key"]: s for s in findings["segments"]}
    assert read[f'{database}/"b.c".t#table.main']["status"] == "READ"
    assert f'{database}/b."c.t"#table.main' not in read
    assert 'b."c.t"' in out  # the terminal names it, quoted as PostgreSQL writes it


@pytest.mark.postgres
def test_a_table_dropped_and_created_again_or_rewritten_is_a_new_object(dotted_db: dict[str, Any]) -> None:
    """The same key at the end census with another OID or file: the warm-up read the old relation's blocks. Judge:
    the server's own pg_class (OID, relfilenode) before and after, asked by the test."""
    from cutover_prep.dal.records.census import census_json
    from cutover_prep.engines.postgres.engine import PostgresEngine
    from tests.unit.stored_sections import census_section

    spec, database = dotted_db["spec"], dotted_db["database"]
    ident = "SELECT c.oid, c.relfilenode FROM pg_class c WHERE c.oid = %s::regclass"
    options = DiscoveryOptions(databases=(database,), include_schemas=("b", "b.c"))
    with psycopg.connect(conninfo(spec), autocommit=True) as conn:
        engine = PostgresEngine.connect(spec)
        try:
            start = census_json(engine.census(options))
            # every segment of the plan read whole, as a finished warm-up says
            reads = {s.key: {"planned": s.bytes, "read": s.bytes, "done": True, "failed": False}
                     for s in engine.discover(options)}
            before = {t: conn.execute(ident, (t,)).fetchone() for t in ('"b"."c.t"', '"b.c"."t"')}
            conn.execute('DROP TABLE "b.c"."t"')
            conn.execute('CREATE TABLE "b.c"."t" AS SELECT g AS id FROM generate_series(1, 100) g')
            conn.execute('VACUUM FULL "b"."c.t"')  # the same OID, a new file
            after = {t: conn.execute(ident, (t,)).fetchone() for t in before}
            end = census_json(engine.census(options))
        finally:
            engine.close()
    assert before['"b.c"."t"'][0] != after['"b.c"."t"'][0]  # the server: a new OID
    assert before['"b"."c.t"'][0] == after['"b"."c.t"'][0] and before['"b"."c.t"'][1] != after['"b"."c.t"'][1]
    section = census_section(start, reads, end)
    unread = {u["key"]: u["reason"] for u in section["unread"]}
    assert unread[f'{database}/"b.c".t#table.main'] == "created after the census"
    assert unread[f'{database}/b."c.t"#table.main'] == "created after the census"
    assert {f'{database}/"b.c".t#table.main', f'{database}/b."c.t"#table.main'} <= set(section["created"])
    assert f'{database}/"b.c".t#table.main' in {d["key"] for d in section["dropped"]}


@pytest.mark.mysql
def test_mysql_two_tables_whose_pasted_names_are_one_are_two_objects(mysql_admin: ConnectionSpec,
                                                                     mysql_database: Any) -> None:
    """On the old code discovery and the census gave both tables the key ``…b.c.t#clustered``: the plan held two
    segments under one key and the census one object for two tablespaces."""
    import pymysql

    from cutover_prep.dal.records.census import census_json
    from cutover_prep.engines.mysql.engine import MySQLEngine
    from tests.unit.stored_sections import census_section

    outer, inner = mysql_database("b"), mysql_database("b.c")
    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{outer}`")
            cur.execute(f"CREATE DATABASE `{inner}`")
            cur.execute(f"CREATE TABLE `{outer}`.`c.t` (id INT PRIMARY KEY, pad CHAR(200) NOT NULL) ENGINE=InnoDB")
            cur.execute(f"INSERT INTO `{outer}`.`c.t` SELECT seq, REPEAT('x', 200) FROM `{outer}`.seq_1_to_20000")
            cur.execute(f"CREATE TABLE `{inner}`.`t` (id INT PRIMARY KEY) ENGINE=InnoDB")
            cur.execute(f"INSERT INTO `{inner}`.`t` VALUES (1)")
            cur.execute(f"ANALYZE TABLE `{outer}`.`c.t`, `{inner}`.`t`")
            cur.execute("SELECT NAME FROM INFORMATION_SCHEMA.INNODB_SYS_TABLESPACES WHERE NAME IN (%s, %s)",
                        (f"{outer}/c@002et", f"{inner.replace('.', '@002e')}/t"))
            spaces = {r[0] for r in cur.fetchall()}
            cur.execute("SELECT TABLE_SCHEMA, DATA_LENGTH FROM INFORMATION_SCHEMA.TABLES "
                        "WHERE (TABLE_SCHEMA, TABLE_NAME) IN ((%s, 'c.t'), (%s, 't'))", (outer, inner))
            data_length = dict(cur.fetchall())
    finally:
        conn.close()
    assert len(spaces) == 2 and data_length[outer] > 2 * 2**20  # the judge: two tablespaces, one of MiBs

    options = DiscoveryOptions(databases=(outer, inner))
    engine = MySQLEngine.connect(replace(mysql_admin, database=outer, tls="disable"))
    try:
        segments = engine.discover(options)
        objects = engine.census(options)
    finally:
        engine.close()
    mine = [o for o in objects if o.schema in (outer, inner)]
    assert len({s.key for s in segments}) == len(segments), sorted(s.key for s in segments)
    assert len({o.key for o in mine}) == len(mine), sorted(o.key for o in mine)
    by_table = {(o.schema, o.name): o for o in mine if o.kind == "clustered"}
    assert set(by_table) == {(outer, "c.t"), (inner, "t")}
    assert by_table[(outer, "c.t")].bytes == data_length[outer]
    assert by_table[(outer, "c.t")].key == f"{outer}.`c.t`#clustered"
    assert by_table[(inner, "t")].key == f"`{inner}`.t#clustered"
    # only `…b.c`.`t` read: `…b`.`c.t` is named unread with its bytes
    reads = {s.key: {"planned": s.bytes, "read": s.bytes, "done": True, "failed": False}
             for s in segments if s.schema == inner}
    section = census_section(census_json(objects), reads)
    unread = {(u["schema"], u["name"], u["kind"]): u for u in section["unread"]}
    assert unread[(outer, "c.t", "clustered")]["unread_bytes"] == data_length[outer]
    assert not [k for k in unread if k[0] == inner and k[2] == "clustered"]
