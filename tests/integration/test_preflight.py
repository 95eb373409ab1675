"""``cutover-prep preflight`` against the real PostgreSQL and MariaDB servers of this machine (issue 22).

A privileged user passes; a least-privilege user the test creates (and drops) without one grant gets that
grant named and exit 1; ``--json``'s shape; a bad DSN is one line, exit 2. The time the preflight takes
on the sample database is printed (not asserted: the machine may be busy)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from cutover_prep.cli.main import main
from cutover_prep.engines import ConnectionSpec


def _preflight(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["preflight", *args])
    out, err = capsys.readouterr()
    return code, out, err


def _pg_dsn(spec: ConnectionSpec, user: str | None = None, password: str = "") -> str:
    auth = f"{user or spec.user}" + (f":{password}" if password else "")
    return f"postgresql://{auth}@{spec.host}:{spec.port}/{spec.database}"


def _lines(out: str, status: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith(status.upper())]


def _timed(capsys: pytest.CaptureFixture[str], what: str, out: str) -> None:
    with capsys.disabled():
        print(f"\n{what}: {out.strip().splitlines()[-1]}")


def test_postgres_a_superuser_passes_every_check(sample_db: ConnectionSpec,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _preflight(capsys, "--dsn", _pg_dsn(sample_db), "--database", sample_db.database)
    assert code == 0, out + err
    assert "preflight passed" in out and not _lines(out, "fail")
    assert "PASS connection: read-only session: default_transaction_read_only=on" in out
    method = [line for line in out.splitlines() if line.startswith("PASS method:")]
    assert method and all("returned 1 block" in line or "block 0 read" in line for line in method)
    assert "PASS census: census:" in out
    _timed(capsys, "preflight of the PostgreSQL sample database", out)


def test_postgres_without_execute_on_pg_read_binary_file_or_pg_prewarm_names_both(
        sample_db: ConnectionSpec, pg_login_role: Any, capsys: pytest.CaptureFixture[str]) -> None:
    role = pg_login_role("GRANT pg_read_all_data TO {role}")  # SELECT on everything, but no block-level read
    code, out, err = _preflight(capsys, "--dsn", _pg_dsn(sample_db, role), "--database", sample_db.database)
    assert code == 1, out + err
    failed = "\n".join(_lines(out, "fail"))
    assert "EXECUTE on pg_read_binary_file: not granted (GRANT EXECUTE ON FUNCTION pg_read_binary_file" in failed
    assert "pg_prewarm extension: not installed" in failed
    assert "pg_prewarm extension or EXECUTE on pg_read_binary_file" in out.splitlines()[-1]
    # the method the plan falls back to is still proven, with the server's counters and its plan
    tid = next(line for line in out.splitlines() if "tid_range_scan:" in line and line.startswith("PASS"))
    assert "pg_statio: blocks fetched +" in tid and "EXPLAIN: Tid Range Scan" in tid
    assert "SELECT on tables: all" in out


def test_postgres_without_select_names_the_grant(sample_db: ConnectionSpec, pg_login_role: Any,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    role = pg_login_role()  # CONNECT (PUBLIC) only
    code, out, _ = _preflight(capsys, "--dsn", _pg_dsn(sample_db, role), "--database", sample_db.database)
    assert code == 1
    select = next(line for line in _lines(out, "fail") if "SELECT on tables" in line)
    assert f"GRANT pg_read_all_data TO {role}" in select
    assert "FAIL census:" in out and "no privilege" in out


def test_json_shape_and_no_secret(sample_db: ConnectionSpec, capsys: pytest.CaptureFixture[str]) -> None:
    password = "pw-" + uuid.uuid4().hex  # trust authentication ignores it; it must appear nowhere
    code, out, err = _preflight(capsys, "--dsn", _pg_dsn(sample_db, password=password), "--database",
                                sample_db.database, "--json")
    assert code == 0, out + err
    doc = json.loads(out)
    assert set(doc) == {"engine", "target", "ok", "failed", "seconds", "checks"}
    assert doc["engine"] == "postgres" and doc["ok"] is True and doc["failed"] == []
    assert doc["target"] == {"host": sample_db.host, "port": sample_db.port, "database": sample_db.database,
                             "user": sample_db.user}
    kinds = {c["kind"] for c in doc["checks"]}
    assert kinds == {"connection", "privilege", "method", "census"}
    for check in doc["checks"]:
        assert set(check) == {"kind", "name", "status", "detail", "bytes", "data"}
        assert check["status"] in ("pass", "fail", "warn", "info")
    assert password not in out + err


@pytest.mark.parametrize(("dsn", "says"), [
    ("postgresql://127.0.0.1:5432/db", "needs user, host and database"),
    ("ftp://u:p@h/db", "--dsn must start with"),
    ("postgresql://u:secret-pw@h:99999/db", "port"),
    ("postgresql://u:secret-pw@h/db?sslcert=x.pem", "sslcert"),
])
def test_a_bad_dsn_is_one_line_exit_2(dsn: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _preflight(capsys, "--dsn", dsn)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("cutover-prep: ") and says in err
    assert "secret-pw" not in err and "Traceback" not in err


def test_neither_dsn_nor_target_and_dsn_with_target_are_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _preflight(capsys)
    assert code == 2 and "give --dsn, or --target and --secret-arn" in err and err.count("\n") == 1
    code, _, err = _preflight(capsys, "--dsn", "postgresql://u@h/db", "--target", "db1")
    assert code == 2 and "drop --target" in err


def test_an_unreachable_database_fails_the_connection_check(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _preflight(capsys, "--dsn", "postgresql://u@127.0.0.1:1/db")
    assert code == 1
    assert _lines(out, "fail")[0].startswith("FAIL connection: connection: cannot connect to PostgreSQL")


# -- MariaDB -----------------------------------------------------------------------------------
@pytest.fixture
def mysql_sample(mysql_admin: ConnectionSpec, mysql_database: Any) -> ConnectionSpec:
    import pymysql

    from cutover_prep.engines.mysql.sample_db import create_sample

    name = mysql_database("preflight")
    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password, autocommit=True)
    try:
        create_sample(conn, name, rows=300, blob_kib=4)
    finally:
        conn.close()
    return replace(mysql_admin, database=name)


def _my_dsn(spec: ConnectionSpec, user: str | None = None, password: str | None = None) -> str:
    from urllib.parse import quote

    pw = spec.password if password is None else password
    auth = quote(user or spec.user) + (f":{quote(pw)}" if pw else "")
    return f"mariadb://{auth}@{spec.host}:{spec.port}/{spec.database}"


def test_mariadb_root_passes_and_proves_each_read_method(mysql_sample: ConnectionSpec,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _preflight(capsys, "--dsn", _my_dsn(mysql_sample), "--database", mysql_sample.database)
    assert code == 0, out + err
    for method in ("pk_walk", "index_scan", "full_scan"):
        line = next(line for line in out.splitlines() if line.startswith(f"PASS method: {method}:"))
        assert "Innodb_buffer_pool_read_requests +" in line and "EXPLAIN: the intended plan" in line
    assert "PASS privilege: PROCESS" in out
    # InnoDB's own files no SQL reads are counted with their bytes, not a warning: the verdict's ENGINE_INTERNAL
    # names them (issue 33)
    assert "engine-internal, which no SQL reads" in out and "innodb_system" not in out
    _timed(capsys, "preflight of the MariaDB sample database", out)


@pytest.fixture
def mysql_user(mysql_admin: ConnectionSpec) -> Iterator[Any]:
    import pymysql

    made: list[str] = []
    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password, autocommit=True)

    def make(*grants: str) -> tuple[str, str]:
        name, password = f"cp_pf_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
        with conn.cursor() as cur:
            cur.execute("CREATE USER %s@'%%' IDENTIFIED BY %s", (name, password))
            made.append(name)
            for grant in grants:
                cur.execute(grant.format(user=f"'{name}'@'%'"))
        return name, password

    yield make
    try:
        with conn.cursor() as cur:
            for name in made:
                cur.execute("DROP USER IF EXISTS %s@'%%'", (name,))
    finally:
        conn.close()


def test_mariadb_without_process_names_it(mysql_sample: ConnectionSpec, mysql_user: Any,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    db = "`" + mysql_sample.database.replace("`", "``") + "`"
    user, password = mysql_user(f"GRANT SELECT ON {db}.* TO {{user}}")  # the README's grants less PROCESS
    code, out, err = _preflight(capsys, "--dsn", _my_dsn(mysql_sample, user, password), "--database",
                                mysql_sample.database)
    assert code == 1, out + err
    process = next(line for line in _lines(out, "fail") if "PROCESS" in line)
    assert process.startswith("FAIL privilege: PROCESS: missing: GRANT PROCESS ON *.*")
    assert f"PASS privilege: SELECT on `{mysql_sample.database}`" in out
    assert password not in out + err


def test_mariadb_with_the_readme_grants_passes(mysql_sample: ConnectionSpec, mysql_user: Any,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    db = "`" + mysql_sample.database.replace("`", "``") + "`"
    user, password = mysql_user(f"GRANT SELECT ON {db}.* TO {{user}}", "GRANT PROCESS ON *.* TO {user}")
    code, out, err = _preflight(capsys, "--dsn", _my_dsn(mysql_sample, user, password), "--database",
                                mysql_sample.database)
    assert code == 0, out + err


# -- --target / --secret-arn: a run's connection path (moto plays AWS) ---------------------------
SECRET_NAME = "cutover/db1"
READ_TAG = [{"Key": "cutover-prep:access", "Value": "read"}]


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    import boto3
    from moto import mock_aws

    for key, value in (("AWS_DEFAULT_REGION", "us-east-1"), ("AWS_REGION", "us-east-1"),
                       ("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        boto3.client("rds", region_name="us-east-1").create_db_instance(
            DBInstanceIdentifier="db1", Engine="postgres", DBInstanceClass="db.m5.large", AllocatedStorage=100,
            StorageType="gp2", MasterUsername="postgres", MasterUserPassword="topsecret1")
        yield boto3.client("secretsmanager", region_name="us-east-1")


def _secret(sm: Any, spec: ConnectionSpec, instance: str = "db1", tags: list[dict[str, str]] = READ_TAG) -> str:
    return sm.create_secret(Name=SECRET_NAME, Tags=tags, SecretString=json.dumps(
        {"username": spec.user, "password": spec.password or "topsecret2", "dbname": spec.database,
         "dbInstanceIdentifier": instance}))["ARN"]


def test_target_connects_as_a_run_and_passes(aws: Any, sample_db: ConnectionSpec, monkeypatch: pytest.MonkeyPatch,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    import cutover_prep.rds.instances as rds

    if sample_db.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only")
    real = rds.instance_facts  # moto's endpoint resolves nowhere: RDS 'reports' the test server's address
    monkeypatch.setattr(rds, "instance_facts", lambda i: {**real(i), "address": sample_db.host,
                                                          "port": sample_db.port})
    monkeypatch.setenv("CUTOVER_PREP_TLS", "disable")  # the test server has no TLS; the default is verified TLS
    arn = _secret(aws, sample_db)
    code, out, err = _preflight(capsys, "--target", "db1", "--secret-arn", arn, "--database", sample_db.database,
                                "--json")
    assert code == 0, out + err
    doc = json.loads(out)
    assert doc["ok"] and doc["target"]["host"] == sample_db.host and "topsecret" not in out + err


def test_target_with_a_secret_of_another_instance_is_exit_2_before_connecting(
        aws: Any, sample_db: ConnectionSpec, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from cutover_prep.preflight import runner

    monkeypatch.setattr(runner, "run", lambda *a, **k: pytest.fail("connected"))
    arn = _secret(aws, sample_db, instance="db9")
    code, out, err = _preflight(capsys, "--target", "db1", "--secret-arn", arn)
    assert code == 2 and out == "" and "belongs to 'db9'" in err and err.count("\n") == 1
    assert "topsecret" not in err


def test_target_with_an_untagged_secret_is_not_read(aws: Any, sample_db: ConnectionSpec,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    arn = _secret(aws, sample_db, tags=[])
    code, _, err = _preflight(capsys, "--target", "db1", "--secret-arn", arn)
    assert code == 2 and "is not tagged cutover-prep:access=read" in err
