"""Issue 23 §4 and §5 on real servers: `cutover-prep estimate` reports bytes as bytes, says what they are,
and says when its selection reads nothing.

Judges, independent of the code under test: PostgreSQL's own sizes (``pg_database_size`` of the database's
directory plus ``pg_tablespace_size('pg_global')`` for the shared catalogues the first database carries;
``pg_total_relation_size`` of the user tables), and the bytes the engine's own ``read_range`` (what a work
unit calls, chunk by chunk) confirms it read for every range of the plan. A whole local workflow of 300
tables takes ~3 minutes on this machine (moto's Step Functions and DynamoDB per range), so the run's bytes
are taken from the units' reads here; `make demo` and that local run were measured once
(docs/decisions/0047-estimate-bytes-and-time.md).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

import psycopg
import pytest
from psycopg import sql

from cutover_prep.cli.main import main
from tests.conftest import conninfo

TABLES = 300  # many small relations: each table, its primary key and an index, a few rows


@contextmanager
def temp_database(pg_admin: Any, fill: str | None) -> Iterator[Any]:
    if pg_admin.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    name = f"cutover_prep_test_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    try:
        with psycopg.connect(conninfo(pg_admin, name), autocommit=True) as conn:
            if fill:
                conn.execute(fill)
            conn.execute("VACUUM")
            conn.execute("CHECKPOINT")
        yield replace(pg_admin, database=name)
    finally:
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="module")
def small_relations(pg_admin: Any) -> Iterator[Any]:
    with temp_database(pg_admin, f"""
        DO $$ BEGIN FOR i IN 1..{TABLES} LOOP
            EXECUTE format('CREATE TABLE t%s (id int PRIMARY KEY, v text)', i);
            EXECUTE format('INSERT INTO t%s SELECT g, md5(g::text) FROM generate_series(1, 20) g', i);
            EXECUTE format('CREATE INDEX t%s_v ON t%s (v)', i, i);
        END LOOP; END $$""") as spec:
        yield spec


def dsn_of(spec: Any) -> str:
    return f"postgresql://{spec.user}:{spec.password}@{spec.host}:{spec.port}/{spec.database}"


def estimate_json(spec: Any, tmp_path: Any, capsys: Any, *extra: str) -> tuple[int, dict[str, Any], str]:
    code = main(["estimate", "--dsn", dsn_of(spec), "--database", spec.database, "--evidence", str(tmp_path),
                 *extra, "--json"])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


@pytest.mark.postgres
def test_the_bytes_of_many_small_relations_are_the_servers_sizes(small_relations, tmp_path, capsys):
    code, result, err = estimate_json(small_relations, tmp_path, capsys)
    assert code == 0, err
    with psycopg.connect(conninfo(small_relations)) as conn:
        directory = int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])
        shared = int(conn.execute("SELECT pg_tablespace_size('pg_global')").fetchone()[0])
        user = int(conn.execute("SELECT sum(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n "
                                "ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'"
                                ).fetchone()[0])
    assert result["ranges"] > 5 * TABLES  # tables, primary keys, indexes, their fsm forks, the catalogues
    assert result["bytes_to_read"] == pytest.approx(directory + shared, rel=0.05)
    counted = result["counted"]
    assert counted["user_relations"] == pytest.approx(user, rel=0.05)
    assert counted["catalogues"] > 0 and counted["large_objects"] >= 0
    assert counted["user_relations"] + counted["catalogues"] + counted["large_objects"] == result["bytes_to_read"]
    assert counted["by_database"] == [{"database": small_relations.database, "bytes": result["bytes_to_read"]}]
    assert "postgres" in counted["excluded_databases"] and counted["excluded_by_input"] > 0
    # the time: bytes at the rate, and each range's time shared by the readers (never bytes)
    assert result["seconds_ranges"] == pytest.approx(result["ranges"] * result["range_seconds"] /
                                                     result["concurrency"], rel=0.01)
    assert result["estimated_seconds"] == pytest.approx(result["seconds_bytes"] + result["seconds_ranges"], abs=0.2)
    assert result["hint"] is None


@pytest.mark.postgres
def test_the_units_read_the_bytes_the_estimate_reports(small_relations):
    """Every range of the plan the estimate is made from, read by the engine's read_range as a unit reads it:
    the bytes it confirms are the estimate's, within 5 % (they are equal)."""
    from cutover_prep.cli.estimate import warmup_options
    from cutover_prep.dal.records.plan import PlanSummary
    from cutover_prep.engines import open_engine
    from cutover_prep.estimate.compute import Rate, counted_of, estimate
    from cutover_prep.models.warmup import Warmup
    from cutover_prep.warmup.discovery import make_plan

    warmup = warmup_options(None, max_concurrency=4, databases=(small_relations.database,))
    planned = make_plan(small_relations, Warmup.model_validate(warmup), lambda s, _w: open_engine(s), attempts=1)
    summary = PlanSummary.model_validate(planned.plan.summary())
    est = estimate(engine="postgres", plan_summary=summary, max_concurrency=4,
                   rate=Rate(mib_per_s=10.0, source="instance_limits", detail="x"),
                   counted=counted_of("postgres", planned.segments, planned.census))
    engine = open_engine(small_relations)
    try:
        read = sum(engine.read_range(rng).bytes for unit in planned.plan.units for rng in unit.ranges)
    finally:
        engine.close()
    assert read == pytest.approx(est.bytes_to_read, rel=0.05)
    assert sum(u.bytes for u in planned.plan.units) == est.bytes_to_read == planned.plan.bytes


@pytest.fixture
def no_user_tables(pg_admin: Any) -> Iterator[Any]:
    with temp_database(pg_admin, None) as spec:
        yield spec


@pytest.mark.postgres
def test_a_selection_of_nothing_says_what_was_selected_and_exits_1(no_user_tables, tmp_path, capsys):
    code, result, err = estimate_json(no_user_tables, tmp_path, capsys, "--include-schema", "public")
    assert code == 1
    assert result["bytes_to_read"] == 0 and result["units"] == 0
    hint = result["hint"]
    assert hint.startswith(f"nothing to read: --database {no_user_tables.database}; --include-schema public")
    assert "--include-schema" in hint and "--exclude-schema" in hint and "NOTHING_PLANNED" in hint
    assert err.strip() == f"cutover-prep: {hint}"  # one line
    # the text form prints the estimate and the hint too
    code = main(["estimate", "--dsn", dsn_of(no_user_tables), "--database", no_user_tables.database,
                 "--include-schema", "public", "--evidence", str(tmp_path)])
    out, err = capsys.readouterr()
    assert code == 1 and out.startswith("to read: 0.0 MiB in 0 units") and f"hint:    {hint}" in out
    assert len(err.strip().splitlines()) == 1


@pytest.mark.postgres
def test_a_database_with_no_user_tables_reads_its_catalogues_and_says_so(no_user_tables, tmp_path, capsys):
    code, result, err = estimate_json(no_user_tables, tmp_path, capsys)
    assert code == 0, err
    assert result["bytes_to_read"] > 0 and result["counted"]["user_relations"] == 0
    assert result["counted"]["catalogues"] + result["counted"]["large_objects"] == result["bytes_to_read"]
    assert result["hint"].startswith(f"no user relation selected: --database {no_user_tables.database} selected "
                                     "only the catalogues")


@pytest.mark.mysql
def test_a_mariadb_database_with_no_tables(mysql_admin, mysql_database, tmp_path, capsys):
    import pymysql

    name = mysql_database("empty")
    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password, autocommit=True)
    try:
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{name}`")
    finally:
        conn.close()
    dsn = f"{mysql_admin.engine}://{mysql_admin.user}:{mysql_admin.password}@{mysql_admin.host}:{mysql_admin.port}/"
    code = main(["estimate", "--dsn", dsn + name, "--database", name, "--evidence", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 1, err
    result = json.loads(out)
    assert result["bytes_to_read"] == 0 and "warmup.include_system" in result["hint"]
    assert err.strip().startswith(f"cutover-prep: nothing to read: --database {name} selected no relation")
