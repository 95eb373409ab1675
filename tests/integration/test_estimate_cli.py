"""`cutover-prep estimate` on a real PostgreSQL database: the bytes the catalogue holds, a rate, a time, a cost."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import psycopg
import pytest

from cutover_prep.cli.main import main
from tests.conftest import conninfo

# every relation of the database with its indexes and TOAST, the catalogues included (issue 21: they are
# on the volume and read), the shared catalogues too (the run reads them once)
USER_RELATIONS = """
SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'm', 'S') AND n.nspname NOT LIKE 'pg_toast%'
"""


def dsn_of(spec) -> str:
    return f"postgresql://{spec.user}:{spec.password}@{spec.host}:{spec.port}/{spec.database}"


def estimate_json(args: list[str], capsys) -> dict:
    code = main(["estimate", *args, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


@pytest.fixture
def tcp_db(sample_db):
    if sample_db.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    return sample_db


@pytest.mark.postgres
def test_estimate_of_a_real_database_is_what_the_catalogue_holds(tcp_db, tmp_path, capsys):
    result = estimate_json(["--dsn", dsn_of(tcp_db), "--database", tcp_db.database, "--evidence", str(tmp_path)],
                           capsys)
    with psycopg.connect(conninfo(tcp_db)) as conn:
        relations = int(conn.execute(USER_RELATIONS).fetchone()[0])
        # the server's own size of the database's directory (catalogues included, shared ones not)
        database = int(conn.execute("SELECT pg_database_size(current_database())").fetchone()[0])
    assert relations > 10 * 2**20
    assert result["bytes_to_read"] == pytest.approx(relations, rel=0.15)
    assert result["bytes_to_read"] == pytest.approx(database, rel=0.15)
    assert result["estimated_seconds"] > 0 and result["assumed_mib_per_s"] > 0 and result["cost_usd"] > 0
    assert result["source"] == "emulator_default" and result["units"] >= 1 and result["engine"] == "postgres"
    assert result["target"]["database"] == tcp_db.database and result["mode"] == "segments"
    assert tcp_db.password == "" or tcp_db.password not in json.dumps(result)


@pytest.mark.postgres
def test_an_earlier_local_run_of_the_database_gives_the_rate(tcp_db, tmp_path, capsys):
    run_dir = tmp_path / "local-earlier"
    run_dir.mkdir()
    (run_dir / "findings.json").write_text(json.dumps({
        "run_id": "local-earlier", "bytes": {"read": 50 * 2**20}, "read_rate": {"mib_per_s_wall": 123.0},
        "timings": {"finished_at": "2026-11-23T10:00:00+00:00"},
        "target": {"engine": "postgres", "host": tcp_db.host, "port": tcp_db.port, "database": tcp_db.database}}))
    other = tmp_path / "local-other"
    other.mkdir()  # another database's run is not this target's
    (other / "findings.json").write_text(json.dumps({
        "run_id": "local-other", "bytes": {"read": 50 * 2**20}, "read_rate": {"mib_per_s_wall": 999.0},
        "timings": {"finished_at": "2026-11-23T11:00:00+00:00"},
        "target": {"engine": "postgres", "host": tcp_db.host, "port": tcp_db.port, "database": "elsewhere"}}))
    result = estimate_json(["--dsn", dsn_of(tcp_db), "--database", tcp_db.database, "--evidence", str(tmp_path)],
                           capsys)
    assert result["source"] == "measured_run" and result["assumed_mib_per_s"] == 123.0
    assert "local-earlier" in result["source_detail"]


@pytest.mark.postgres
def test_the_text_output(tcp_db, tmp_path, capsys):
    code = main(["estimate", "--dsn", dsn_of(tcp_db), "--database", tcp_db.database, "--evidence", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0
    assert out.startswith("to read: ") and "MiB/s assumed (emulator_default" in out and "cost:    $" in out


@pytest.mark.parametrize(("args", "code", "needle"), [
    (["estimate"], 2, "give --dsn, or --target and --secret-arn"),
    (["estimate", "--dsn", "db2://u@h/db"], 2, "--dsn must start with"),
    (["estimate", "--dsn", "postgresql://u:topsecret@127.0.0.1:1/db"], 5, "cannot connect to PostgreSQL"),
    (["estimate", "--dsn", "postgresql://u:topsecret@127.0.0.1:1/db", "--target", "x"], 2, "--dsn estimates"),
    (["estimate", "--dsn", "postgresql://u:topsecret@127.0.0.1:1/db", "--database", "d" * 300], 2,
     "warmup.databases.0: "),
    (["estimate", "--max-concurrency", "0"], 2, "--max-concurrency"),
    (["estimate", "--target", "db1"], 2, "give --dsn, or --target and --secret-arn"),
])
def test_bad_input_is_one_line(args, code, needle, capsys):
    assert main(args) == code
    out, err = capsys.readouterr()
    assert out == "" and needle in err and len(err.strip().splitlines()) == 1 and "topsecret" not in err
    assert "Traceback" not in err


def test_no_secret_or_evidence_dir_is_needed_for_bad_input(tmp_path: Path, capsys):
    assert main(["estimate", "--input", str(tmp_path / "missing.json")]) == 2
    assert "missing.json" in capsys.readouterr().err


# ---- against AWS (moto): DescribeDBInstances, the tagged secret, the endpoint RDS reports ------------------

SECRET_NAME = "cutover/db1"


@pytest.fixture
def aws(monkeypatch):
    import boto3
    from moto import mock_aws

    for key, value in (("AWS_DEFAULT_REGION", "us-east-1"), ("AWS_REGION", "us-east-1"),
                       ("AWS_ACCESS_KEY_ID", "testing"), ("AWS_SECRET_ACCESS_KEY", "testing")):
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        rds = boto3.client("rds", region_name="us-east-1")
        rds.create_db_instance(DBInstanceIdentifier="db1", Engine="postgres", DBInstanceClass="db.m5.large",
                               AllocatedStorage=100, StorageType="gp2", MasterUsername="postgres",
                               MasterUserPassword="topsecret1")
        yield boto3.client("secretsmanager", region_name="us-east-1")


def _secret(sm, spec, tags: list[dict[str, str]]) -> str:
    return sm.create_secret(Name=SECRET_NAME, Tags=tags, SecretString=json.dumps(
        {"username": spec.user, "password": spec.password, "dbname": spec.database,
         "dbInstanceIdentifier": "db1"}))["ARN"]


def _endpoint_is(monkeypatch, spec) -> None:
    """moto's endpoint resolves nowhere: RDS 'reports' the test server's address instead (the rules are the same:
    the credentials go to the endpoint RDS reports, nowhere else)."""
    import cutover_prep.rds.instances as rds

    real = rds.instance_facts
    monkeypatch.setattr(rds, "instance_facts", lambda i: {**real(i), "address": spec.host, "port": spec.port})


@pytest.mark.postgres
def test_estimate_of_an_rds_instance(aws, tcp_db, monkeypatch, capsys):
    arn = _secret(aws, tcp_db, [{"Key": "cutover-prep:access", "Value": "read"}])
    _endpoint_is(monkeypatch, tcp_db)
    monkeypatch.setenv("CUTOVER_PREP_TLS", "disable")  # the test server has no TLS; the default is verified TLS
    result = estimate_json(["--target", "db1", "--secret-arn", arn, "--database", tcp_db.database], capsys)
    assert result["source"] == "instance_limits" and "db.m5.large, gp2 100 GiB" in result["source_detail"]
    assert result["target"]["db_instance_identifier"] == "db1" and result["bytes_to_read"] > 10 * 2**20
    assert result["estimated_seconds"] > 0 and result["cost_usd"] > 0
    assert any("earlier runs not looked up" in n for n in result["cost"]["notes"])  # no deployment in moto
    assert "topsecret" not in json.dumps(result)


@pytest.mark.postgres
def test_a_restore_in_the_input_takes_its_class_and_counts_instance_hours(aws, tcp_db, monkeypatch, tmp_path,
                                                                            capsys):
    arn = _secret(aws, tcp_db, [{"Key": "cutover-prep:access", "Value": "read"}])
    _endpoint_is(monkeypatch, tcp_db)
    monkeypatch.setenv("CUTOVER_PREP_TLS", "disable")
    run_input = tmp_path / "run.json"
    run_input.write_text(json.dumps({
        "target": {"db_instance_identifier": "db1-restored", "secret_arn": arn},
        "restore": {"snapshot_identifier": "snap-1", "db_instance_class": "db.r6i.large", "storage_type": "io1",
                    "iops": 3000, "allocated_gb": 100},
        "warmup": {"databases": [tcp_db.database], "max_concurrency": 16}}))
    result = estimate_json(["--input", str(run_input), "--target", "db1"], capsys)
    assert result["source"] == "instance_limits" and "db.r6i.large, io1 100 GiB" in result["source_detail"]
    # priced from the shipped price file (moto has no Price List API): AWS's price feed of 2025-05, us-east-1,
    # PostgreSQL db.r6i.large $0.25/h, io1 $0.125/GB-month and $0.10/IOPS-month (pricing/prices.json, sources)
    cost = result["cost"]
    assert cost["instance_hours"] > 0
    assert cost["instance_price_per_hour_usd"] == pytest.approx(0.25 + (0.125 * 100 + 0.10 * 3000) / 730, abs=1e-6)
    assert cost["instance_usd"] == pytest.approx(cost["instance_hours"] * cost["instance_price_per_hour_usd"], abs=1e-5)


def test_an_untagged_secret_is_not_read(aws, capsys):
    arn = aws.create_secret(Name=SECRET_NAME, SecretString='{"username": "u", "password": "topsecret"}')["ARN"]
    assert main(["estimate", "--target", "db1", "--secret-arn", arn]) == 2
    err = capsys.readouterr().err
    assert "is not tagged cutover-prep:access=read" in err and "topsecret" not in err


def test_aws_mistakes_are_one_line(aws, capsys):
    arn = aws.create_secret(Name=SECRET_NAME, SecretString='{"username": "u", "password": "topsecret"}',
                            Tags=[{"Key": "cutover-prep:access", "Value": "read"}])["ARN"]
    assert main(["estimate", "--target", "nope", "--secret-arn", arn]) == 2
    assert "--target nope: no such DB instance" in capsys.readouterr().err
    missing = arn.replace(SECRET_NAME, "cutover/other")
    assert main(["estimate", "--target", "db1", "--secret-arn", missing]) == 2
    assert "no such secret" in capsys.readouterr().err


def test_a_secret_of_another_instance_is_exit_2_before_connecting(aws, capsys, monkeypatch):
    arn = aws.create_secret(Name=SECRET_NAME, Tags=[{"Key": "cutover-prep:access", "Value": "read"}],
                            SecretString=json.dumps({"username": "u", "password": "topsecret",
                                                     "dbInstanceIdentifier": "db9"}))["ARN"]
    import cutover_prep.engines as engines

    monkeypatch.setattr(engines, "open_engine", lambda *a, **k: pytest.fail("connected"))
    assert main(["estimate", "--target", "db1", "--secret-arn", arn]) == 2
    err = capsys.readouterr().err
    assert "belongs to 'db9'" in err and "db1" in err and "topsecret" not in err and len(err.strip().splitlines()) == 1


def test_an_endpoint_that_does_not_answer_is_exit_5(aws, capsys, monkeypatch):
    arn = aws.create_secret(Name=SECRET_NAME, Tags=[{"Key": "cutover-prep:access", "Value": "read"}],
                            SecretString=json.dumps({"username": "u", "password": "topsecret",
                                                     "dbInstanceIdentifier": "db1"}))["ARN"]
    import cutover_prep.rds.instances as rds

    real = rds.instance_facts
    monkeypatch.setattr(rds, "instance_facts", lambda i: {**real(i), "address": "127.0.0.1", "port": 1})
    assert main(["estimate", "--target", "db1", "--secret-arn", arn]) == 5
    err = capsys.readouterr().err
    assert "cannot connect to PostgreSQL" in err and "topsecret" not in err and len(err.strip().splitlines()) == 1


@pytest.mark.postgres
def test_a_restore_with_a_known_price_counts_its_dollars(aws, tcp_db, monkeypatch, tmp_path, capsys):
    pricing = pytest.importorskip("cutover_prep.pricing.book")
    arn = _secret(aws, tcp_db, [{"Key": "cutover-prep:access", "Value": "read"}])
    _endpoint_is(monkeypatch, tcp_db)
    monkeypatch.setenv("CUTOVER_PREP_TLS", "disable")
    run_input = tmp_path / "run.json"
    run_input.write_text(json.dumps({
        "target": {"db_instance_identifier": "db1", "secret_arn": arn},
        "restore": {"snapshot_identifier": "snap-1", "db_instance_class": "db.t3.medium", "storage_type": "gp3",
                    "allocated_gb": 100},
        "warmup": {"databases": [tcp_db.database]}}))
    result = estimate_json(["--input", str(run_input)], capsys)
    cost = result["cost"]
    expected = pricing.PriceBook(region="us-east-1").configuration(SimpleNamespace(
        db_instance_class="db.t3.medium", storage_type="gp3", allocated_gb=100, iops=None, storage_throughput=None),
        "postgres")  # the shipped price file alone
    if expected.per_hour_usd is None:
        pytest.skip(f"the shipped price file has no price for db.t3.medium gp3: {expected.source}")
    assert cost["instance_price_per_hour_usd"] is not None and cost["instance_usd"] > 0
    assert result["cost_usd"] == pytest.approx(cost["lambda_usd"] + cost["sfn_usd"] + cost["instance_usd"], abs=2e-6)
    assert any("per hour (" in n for n in cost["notes"])
