"""The engine registry: one EngineFamily per engine; everything else asks it."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cutover_prep import deps, engines
from cutover_prep.access.connection import DEFAULT_DATABASE, DEFAULT_PORT
from cutover_prep.analysis.limits import STRIPE_THRESHOLD_GB, storage_caps
from cutover_prep.benchmark.scratch import scratch_name
from cutover_prep.engines import ConnectionSpec, DatabaseUnreachable, registry
from cutover_prep.engines.registry import UnknownEngine, engine_names, families, family
from cutover_prep.measure.sample import block_readable
from cutover_prep.models.run_input import InvalidInput, parse_run_input
from cutover_prep.models.steps import RunContext
from cutover_prep.settings import ConnectionPolicy
from tests.unit.contexts import spec_of

LAMBDAS = Path(__file__).resolve().parents[2] / "lambdas"
ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:db-AbCdEf"
RDS_ENGINES = {"postgres": "postgres", "aurora-postgresql": "postgres", "oracle-ee": "oracle",
               "oracle-se2": "oracle", "oracle-ee-cdb": "oracle", "oracle-se2-cdb": "oracle",
               "custom-oracle-ee": "oracle", "mysql": "mysql", "mariadb": "mariadb"}


@pytest.mark.parametrize(("rds_engine", "name"), sorted(RDS_ENGINES.items()))
def test_every_rds_engine_name_maps_to_its_family(rds_engine: str, name: str) -> None:
    assert family(rds_engine).name == name
    assert rds_engine in family(name).rds_engines
    assert engines.RDS_ENGINE_FAMILY[rds_engine] == name


def test_family_names_and_aliases() -> None:
    assert engine_names() == ("postgres", "oracle", "mysql", "mariadb")
    assert [f.name for f in families()] == ["postgres", "oracle", "mysql", "mariadb"]
    assert family("postgresql") is family("postgres") is family(" Postgres ")
    assert engines.RDS_ENGINE_FAMILY == RDS_ENGINES
    assert family("MariaDB").open_engine is family("mysql").open_engine  # one engine folder for both


@pytest.mark.parametrize("name", ["db2", "sqlserver-ee", "", "aurora-mysql"])
def test_an_unknown_engine_is_a_one_line_error_naming_the_accepted_ones(name: str) -> None:
    with pytest.raises(UnknownEngine) as err:
        family(name)
    message = str(err.value)
    assert "\n" not in message and repr(name) in message
    for f in families():
        assert f.name in message and all(rds in message for rds in f.rds_engines)


def test_an_engine_only_the_analysis_knows_is_not_supported_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.ANALYSIS_ONLY, "sqlserver-ee", registry.LimitsFacts(stripe_threshold_gb=400))
    with pytest.raises(UnknownEngine, match="'sqlserver-ee' is not supported yet"):
        family("sqlserver-ee")
    assert registry.analysis_engine("sqlserver-ee") == "sqlserver-ee"


def test_unknown_engine_is_an_engine_error_and_a_value_error() -> None:
    assert issubclass(UnknownEngine, engines.EngineError) and issubclass(UnknownEngine, ValueError)
    spec = ConnectionSpec(engine="db2", host="h", port=1, database="d", user="u", password="p")
    with pytest.raises(UnknownEngine):
        engines.open_engine(spec)


def test_the_connection_defaults_come_from_the_registry() -> None:
    assert DEFAULT_PORT == {"postgres": 5432, "oracle": 1521, "mysql": 3306, "mariadb": 3306}
    assert DEFAULT_DATABASE == {"postgres": "postgres", "oracle": "ORCL", "mysql": "information_schema",
                                "mariadb": "information_schema"}
    assert DEFAULT_PORT == {f.name: f.default_port for f in families()}


def _run(instance: dict[str, Any], **target: Any) -> dict[str, Any]:
    return {"target": {"db_instance_identifier": "db1", "secret_arn": ARN, **target},
            "instance": {"address": "db1.example.rds.amazonaws.com", **instance}}


def _secret(**extra: Any):
    return lambda arn: json.dumps({"username": "u", "password": "pw", "dbInstanceIdentifier": "db1", **extra})


def _swap(monkeypatch: pytest.MonkeyPatch, name: str, **changes: Any) -> registry.EngineFamily:
    """Replace a registered family for this test: what reads the registry sees the change."""
    swapped = dataclasses.replace(family(name), **changes)
    monkeypatch.setattr(registry, "_BY_NAME", {k: swapped if v.name == name else v
                                               for k, v in registry._BY_NAME.items()})
    return swapped


def test_connection_spec_takes_port_database_and_tls_port_from_the_family(monkeypatch: pytest.MonkeyPatch) -> None:
    spec = spec_of(_run({"engine": "oracle-se2-cdb"}), _secret(), ConnectionPolicy())
    assert (spec.engine, spec.port, spec.database, spec.tls_port) == ("oracle", 1521, "ORCL", 2484)
    _swap(monkeypatch, "oracle", default_port=1600, default_database="SVC", tls_port=2600)
    spec = spec_of(_run({"engine_family": "oracle"}), _secret(), ConnectionPolicy())
    assert (spec.port, spec.database, spec.tls_port) == (1600, "SVC", 2600)
    spec = spec_of(_run({}, engine="postgres"), _secret(), ConnectionPolicy())
    assert (spec.engine, spec.port, spec.database, spec.tls_port) == ("postgres", 5432, "postgres", None)


def test_a_secrets_engine_alias_is_normalised() -> None:
    assert spec_of(_run({}), _secret(engine="postgresql"), ConnectionPolicy()).engine == "postgres"


def test_an_instance_of_an_engine_the_run_cannot_warm_is_named_in_one_line() -> None:
    with pytest.raises(DatabaseUnreachable) as err:  # RDS reports no family for SQL Server
        spec_of(_run({"engine": "sqlserver-ee", "engine_family": None}), _secret(engine="postgres"),
                        ConnectionPolicy())
    message = str(err.value)
    assert "db1" in message and "'sqlserver-ee'" in message and "oracle-ee" in message and "mariadb" in message
    assert "pw" not in message and "\n" not in message


def test_no_engine_anywhere_asks_for_target_engine() -> None:
    with pytest.raises(DatabaseUnreachable, match="set target.engine to postgres or oracle"):
        spec_of(_run({}), _secret(), ConnectionPolicy())


def test_open_engine_and_open_bench_use_the_familys_hooks(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[str, Any]] = []
    _swap(monkeypatch, "oracle",
          open_engine=lambda spec, **kw: calls.append(("engine", kw)) or "warm-up engine",
          open_bench=lambda spec, database, **kw: calls.append(("bench", (database, kw))) or "driver")
    spec = ConnectionSpec(engine="oracle", host="h", port=1521, database="S", user="u", password="p")
    assert engines.open_engine(spec, call_timeout_seconds=5) == "warm-up engine"
    monkeypatch.setattr(deps, "read_secret", _secret())
    monkeypatch.setenv("ALLOWED_DB_HOSTS", "")
    run = RunContext.model_validate({**_run({"engine_family": "oracle"}), "run_id": "r1",
                                     "warmup": {"create_extension": True}})
    assert deps.open_bench(run, "ignored", call_timeout_seconds=7) == "driver"
    assert calls == [("engine", {"call_timeout_seconds": 5, "create_extension": False}),
                     ("bench", ("ignored", {"call_timeout_seconds": 7, "create_extension": True}))]


@pytest.mark.parametrize(("given", "kept"), [("postgres", "postgres"), ("oracle", "oracle"),
                                             ("oracle-ee-cdb", "oracle"), ("oracle-se2", "oracle"),
                                             ("postgresql", "postgres"), ("aurora-postgresql", "postgres"),
                                             ("mysql", "mysql"), ("mariadb", "mariadb")])
def test_target_engine_accepts_family_and_rds_names_and_keeps_the_family(given: str, kept: str) -> None:
    run = parse_run_input({"target": {"db_instance_identifier": "db1", "secret_arn": ARN, "engine": given}})
    assert run["target"]["engine"] == kept


@pytest.mark.parametrize("given", ["aurora-mysql", "db2", "Oracle"])
def test_target_engine_refuses_other_names_in_one_line(given: str) -> None:
    with pytest.raises(InvalidInput) as err:
        parse_run_input({"target": {"db_instance_identifier": "db1", "secret_arn": ARN, "engine": given}})
    message = str(err.value)
    assert message.startswith("target.engine") and "'oracle-ee'" in message and "\n" not in message


def test_scratch_names_follow_the_family_and_are_unchanged() -> None:
    # names as the code before the registry made them (a restarted run must find its objects)
    assert scratch_name("run-a", "postgres") == "cutover_prep_scratch_66b1eb530fb7"
    assert scratch_name("run-a", "oracle") == "CPREP_SCRATCH_66B1EB530FB7"
    assert scratch_name("run-a", "oracle-ee") == scratch_name("run-a", "oracle")
    assert scratch_name("run-a", "mysql") == scratch_name("run-a", "mariadb") == "cutover_prep_scratch_66b1eb530fb7"


@pytest.mark.parametrize(("locator", "readable"), [
    ({"fork": "main", "relkind": "r"}, True), ({"fork": "main", "relkind": "m"}, True),
    ({"fork": "main", "relkind": "t"}, True), ({"fork": "main", "relkind": "i"}, False),
    ({"fork": "fsm", "relkind": "r"}, False), ({"read": "rowid_range"}, True),
    # a catalogue (pg_class) and a catalogue's TOAST table (pg_toast_1255): initdb's OIDs, below
    # FirstNormalObjectId 16384 (src/include/access/transam.h); a user table's OID is above it
    ({"fork": "main", "relkind": "r", "oid": 1259}, False), ({"fork": "main", "relkind": "t", "oid": 2836}, False),
    ({"fork": "main", "relkind": "r", "oid": 16390}, True),
    ({"read": "index_ffs"}, False), ({"read": "pk_walk", "probe": {"column": "id"}}, True),
    ({"read": "pk_walk"}, False), ({"read": "index_scan"}, False), ({}, False)])
def test_block_readable_asks_each_family(locator: dict[str, Any], readable: bool) -> None:
    assert block_readable(locator) is readable


def test_the_limits_facts_come_from_the_registry() -> None:
    assert STRIPE_THRESHOLD_GB == {"postgres": 400, "oracle": 200, "mysql": 400, "mariadb": 400}
    assert {f.name: f.limits.stripe_threshold_gb for f in families()} == STRIPE_THRESHOLD_GB
    assert storage_caps("gp3", 250, engine="oracle-se2-cdb").volumes == 4
    assert storage_caps("gp3", 250, engine="postgres").volumes == 1


def test_reading_the_registry_loads_no_database_driver() -> None:
    code = ("import sys; import cutover_prep.engines.registry, cutover_prep.models.run_input, "
            "cutover_prep.access.connection, "
            "cutover_prep.cli.analyze, cutover_prep.measure.sample, cutover_prep.benchmark.scratch; "
            "print(sorted(m for m in ('psycopg', 'oracledb', 'pymysql') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         env={"PYTHONPATH": str(LAMBDAS)})
    assert out.stdout.strip() == "[]"


# "Outside engines/ nothing names an engine" is checked from the syntax tree in test_engine_naming.py.
