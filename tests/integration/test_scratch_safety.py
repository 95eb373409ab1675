"""The opt-in write test on the real PostgreSQL server: it writes only in objects it creates,
named for the run and marked as its own; it never drops what it did not create; it is
capped in size; it is cleaned up after a kill; a restart without the opt-in writes nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import boto3
import psycopg
import pytest
from psycopg import sql

from cutover_prep.benchmark.scratch import ScratchStatus, scratch_name
from cutover_prep.benchmark.steps import cleanup_scratch, measure_point, plan_sweep
from cutover_prep.dal.store import TABLE_KEYS, Store, evidence_key
from cutover_prep.engines.postgres.bench import PostgresBench
from cutover_prep.engines.scratch import ScratchExists
from cutover_prep.models.benchmark import Benchmark
from cutover_prep.models.steps import RunContext
from tests.conftest import conninfo
from tests.unit.conftest import BUCKET, TABLE, store  # noqa: F401 - the moto Store fixture
from tests.unit.contexts import context_json

pytestmark = pytest.mark.postgres
REPO = Path(__file__).resolve().parents[2]


def _run(run_id: str, *, write_test: bool, **bench: Any) -> RunContext:
    options = Benchmark(seconds_per_point=1, sessions=[1], probe_blocks=0, write_test=write_test, **bench)
    made = context_json(run_id, "db1", benchmark=options.model_dump(mode="json"), warmup={"create_extension": False})
    return RunContext.model_validate({**made, "target": {**made["target"], "engine": "postgres"}})


def _seed(evidence: Store, run_id: str, points: list[dict[str, Any]]) -> None:
    evidence.put_json(evidence_key(run_id, "units.json"), [])
    evidence.put_json(evidence_key(run_id, "sweep/plan.json"),
                   {"run_id": run_id, "engine": "postgres", "target": None, "points": points, "notes": []})


def _opener(sample_db):
    return lambda run, database: PostgresBench.from_spec(sample_db, database or sample_db.database)


WRITE_DIRECT = {"point_id": "write-direct", "kind": "write_direct", "seconds": 0.5}


def _customer_schema(sample_db, name: str) -> None:
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE SCHEMA {}").format(sql.Identifier(name)))
        conn.execute(sql.SQL("CREATE TABLE {} (id int, payroll text)").format(sql.Identifier(name, "salaries")))
        conn.execute(sql.SQL("INSERT INTO {} SELECT g, 'keep me' FROM generate_series(1, 1234) g")
                     .format(sql.Identifier(name, "salaries")))


def _customer_rows(sample_db, name: str) -> int:
    with psycopg.connect(conninfo(sample_db)) as conn:
        return conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(name, "salaries"))).fetchone()[0]


def _schemas(sample_db, like: str = "cutover_prep_scratch%") -> list[str]:
    with psycopg.connect(conninfo(sample_db)) as conn:
        return [r[0] for r in conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE %s", (like,))]


def _drop_schema(sample_db, name: str) -> None:
    with psycopg.connect(conninfo(sample_db), autocommit=True) as conn:
        conn.execute(sql.SQL("DROP SCHEMA IF EXISTS {} CASCADE").format(sql.Identifier(name)))


def test_a_customer_schema_with_the_old_fixed_name_survives_the_write_test(store, sample_db):  # noqa: F811
    """The old code created ``cutover_prep_scratch``, failed on it, and dropped it with CASCADE."""
    _customer_schema(sample_db, "cutover_prep_scratch")
    try:
        _seed(store, "r-old-name", [WRITE_DIRECT])
        result = measure_point(_run("r-old-name", write_test=True), WRITE_DIRECT, store=store,
                               open_driver=_opener(sample_db))
        assert result.status == "DONE"
        assert _customer_rows(sample_db, "cutover_prep_scratch") == 1234
        assert _schemas(sample_db) == ["cutover_prep_scratch"]  # the run's own schema is gone
    finally:
        _drop_schema(sample_db, "cutover_prep_scratch")


def test_an_object_holding_the_runs_scratch_name_is_an_error_and_never_dropped(store, sample_db):  # noqa: F811
    name = scratch_name("r-taken", "postgres")
    _customer_schema(sample_db, name)
    try:
        _seed(store, "r-taken", [WRITE_DIRECT])
        with pytest.raises(ScratchExists, match="left untouched"):
            measure_point(_run("r-taken", write_test=True), WRITE_DIRECT, store=store, open_driver=_opener(sample_db))
        assert _customer_rows(sample_db, name) == 1234
        assert store.get_point("r-taken", "write-direct").error == "ScratchExists"
        [item] = store.scratch_objects("r-taken")
        assert item.status == ScratchStatus.NOT_CREATED
        cleanup = cleanup_scratch(_run("r-taken", write_test=True), store=store, open_driver=_opener(sample_db))
        assert cleanup.left == [] and _customer_rows(sample_db, name) == 1234
    finally:
        _drop_schema(sample_db, name)


def test_two_runs_use_two_scratch_schemas():
    assert scratch_name("run-a", "postgres") != scratch_name("run-b", "postgres")
    assert len(scratch_name("x" * 80, "postgres")) <= 63 and len(scratch_name("x" * 80, "oracle")) <= 30


def test_the_write_test_stops_at_its_size_cap(store, sample_db):  # noqa: F811
    # a point far longer than writing 2 MiB takes on any machine: the cap stops it, and its notes say so
    point = {"point_id": "write-direct", "kind": "write_direct", "seconds": 600}
    _seed(store, "r-cap", [point])
    measure_point(_run("r-cap", write_test=True, write_max_mib=2), point, store=store, open_driver=_opener(sample_db))
    notes = store.get_json(evidence_key("r-cap", "sweep/points/write-direct.json"))["notes"]
    assert any("size cap of 2 MiB" in n for n in notes)
    assert _schemas(sample_db) == []


def test_a_restart_with_the_write_test_off_writes_nothing(store, sample_db):  # noqa: F811
    """Attempt 1 planned write points; attempt 2's input has write_test false: nothing is written."""
    points = [{"point_id": "random-01s", "kind": "random", "seconds": 0.2, "sessions": 1}, WRITE_DIRECT,
              {"point_id": "write-random", "kind": "write_random", "seconds": 0.5}]
    _seed(store, "r-restart", points)
    attempt2 = _run("r-restart", write_test=False)
    planned = plan_sweep(attempt2, store=store, open_driver=lambda r, db: pytest.fail("the plan is kept"))
    assert [p["point_id"] for p in planned.to_json()["points"]] == ["random-01s"]
    opened = []
    for point in points[1:]:  # a Map already holding the old items still reaches RunPoint
        result = measure_point(attempt2, point, store=store, open_driver=lambda r, db: opened.append(db))
        assert result.status == "SKIPPED"
    assert opened == []  # no connection, so no write
    assert store.get_point("r-restart", "write-random").status == "SKIPPED"


KILLED_POINT = r"""
import json, os, sys
import boto3
from cutover_prep.benchmark.steps import measure_point
from cutover_prep.engines import ConnectionSpec
from cutover_prep.dal.store import Store
from cutover_prep.engines.postgres.bench import PostgresBench
from cutover_prep.models.steps import RunContext
args = json.loads(sys.argv[1])
kw = {"endpoint_url": args["endpoint"], "region_name": "us-east-1"}
store = Store(dynamodb=boto3.client("dynamodb", **kw), s3=boto3.client("s3", **kw), table=args["table"],
              bucket=args["bucket"])
spec = ConnectionSpec(**args["spec"])
measure_point(RunContext.model_validate(args["run"]), args["point"], store=store,
              open_driver=lambda run, db: PostgresBench.from_spec(spec, db or spec.database))
"""


@pytest.fixture
def moto_server(monkeypatch):
    from moto.server import ThreadedMotoServer

    for key, value in {"AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
                       "AWS_DEFAULT_REGION": "us-east-1"}.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    kw = {"endpoint_url": endpoint, "region_name": "us-east-1"}
    ddb, s3 = boto3.client("dynamodb", **kw), boto3.client("s3", **kw)
    k = TABLE_KEYS
    ddb.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in (k["pk"], k["sk"])],
                     KeySchema=[{"AttributeName": k["pk"], "KeyType": "HASH"},
                                {"AttributeName": k["sk"], "KeyType": "RANGE"}])
    s3.create_bucket(Bucket=BUCKET)
    yield endpoint, Store(dynamodb=ddb, s3=s3, table=TABLE, bucket=BUCKET)
    server.stop()


def test_a_killed_write_point_is_removed_by_the_cleanup_step(moto_server, sample_db):
    endpoint, remote_store = moto_server
    run = _run("r-killed", write_test=True)
    point = {"point_id": "write-direct", "kind": "write_direct", "seconds": 120}
    _seed(remote_store, "r-killed", [point])
    name = scratch_name("r-killed", "postgres")
    args = {"endpoint": endpoint, "table": TABLE, "bucket": BUCKET, "run": run.to_json(), "point": point,
            "spec": {k: getattr(sample_db, k) for k in ("engine", "host", "port", "database", "user", "password")}}
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "lambdas"), str(REPO)])}
    child = subprocess.Popen([sys.executable, "-c", KILLED_POINT, json.dumps(args)], env=env)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not _scratch_rows(sample_db, name):
            assert child.poll() is None, "the write point ended before it could be killed"
            time.sleep(0.1)
        assert _scratch_rows(sample_db, name), "the write point never wrote"
    finally:
        os.kill(child.pid, signal.SIGKILL)  # a Lambda cut off: no finally, no cleanup of its own
        child.wait()
    assert _schemas(sample_db) == [name]  # left behind by the kill
    [item] = remote_store.scratch_objects("r-killed")
    assert item.status == ScratchStatus.CREATING  # registered before it was created

    result = cleanup_scratch(run, store=remote_store, open_driver=_opener(sample_db))
    assert result.left == [] and result.removed == [name] and result.created == [name]
    assert _schemas(sample_db) == []
    again = cleanup_scratch(run, store=remote_store, open_driver=lambda r, db: pytest.fail("nothing left to do"))
    assert again.removed == [name]


def _scratch_rows(sample_db, name: str) -> int:
    with psycopg.connect(conninfo(sample_db)) as conn:
        reg = conn.execute("SELECT to_regclass(%s)", (f'"{name}"."writes"',)).fetchone()[0]
        if reg is None:
            return 0
        return conn.execute(sql.SQL("SELECT count(*) FROM {}").format(sql.Identifier(name, "writes"))).fetchone()[0]
