"""Issue 32 §8.2, through the workflow (moto runs the run ASL, the real handlers in-process): a hot set taken
on another engine than the one Discover finds is refused by name, ``HotSetEngineMismatch``, also when the
input does not name ``target.engine`` (ValidateInput can then compare nothing: the engine is RDS's, known
only once the instance is described).

A hot set names segments as its engine's discovery does: a MySQL profile's ``shop.orders`` is no
PostgreSQL segment (``db/schema.name``), so the run would warm everything in the default order while its
author believes the hot tables go first. The judge of "refused before connecting" is the operating
system: a TCP listener where the run is pointed counts the connections it accepts."""

from __future__ import annotations

import json

from cutover_prep.local.harness import LocalAws
from tests.integration.test_secret_binding_workflow import Listener

HOT_SET = {"server": "MySQL 8.0 at shop:3306", "taken_at": "2026-11-25T01:00:00+00:00",
           "sources": ["statistics: sys.schema_table_statistics"], "relations": 1, "names": ["shop.orders"]}


def _run(aws: LocalAws, listener: Listener, hot_engine: str, name: str) -> dict:
    aws.create_instance("orders-rehearsal")  # RDS says: postgres (the harness's default engine)
    secret = aws.create_secret(f"orders-{name}", {"username": "warmer", "password": "pw", "engine": "postgres",
                                                  "dbInstanceIdentifier": "orders-rehearsal"})
    run_input = {"run_id": name,
                 "target": {"db_instance_identifier": "orders-rehearsal", "secret_arn": secret,
                            "host": "127.0.0.1", "port": listener.port, "database": "app"},  # no target.engine
                 "warmup": {"hot_set": {"engine": hot_engine, **HOT_SET}}}
    return aws.wait(aws.start(run_input, name=name), timeout_s=300)


def test_a_hot_set_of_another_engine_than_discover_finds_fails_by_name_before_connecting():
    listener = Listener()
    with LocalAws() as aws:
        aws.allow_db_host("127.0.0.1")
        desc = _run(aws, listener, "mysql", "hot-mysql")
    assert listener.close() == 0  # refused before any connection
    assert desc["status"] == "FAILED" and desc["error"] == "HotSetEngineMismatch", desc
    cause = desc["cause"]
    assert "warmup.hot_set.engine" in cause and "mysql" in cause.lower() and "postgres" in cause.lower(), cause


def test_a_hot_set_of_the_engine_discover_finds_goes_on_to_connect():
    listener = Listener()
    with LocalAws() as aws:
        aws.allow_db_host("127.0.0.1")
        desc = _run(aws, listener, "postgres", "hot-postgres")
    assert listener.close() >= 1  # it went on to connect (the listener is not a database: it fails later)
    assert desc["error"] != "HotSetEngineMismatch", json.dumps(desc, default=str)[:2000]
