"""Issue 33 §1, the rule of which databases a run reads (cutover_prep.access.selection), the run input's
``target.databases``, the one line said before the warm-up, and the preflight's missing-SELECT text: pure,
every figure worked by hand."""

from __future__ import annotations

import copy
import fnmatch
from types import SimpleNamespace

import pytest

from cutover_prep.access.selection import ALL, SelectionProblem, choose, choose_for_run, resolved_warmup, selection_line
from cutover_prep.engines.postgres.census import RelationRow
from cutover_prep.engines.postgres.preflight import missing_text
from cutover_prep.models.run_input import InvalidInput, parse_run_input
from cutover_prep.models.warmup import Warmup

BASE = {"target": {"db_instance_identifier": "orders",
                   "secret_arn": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-ro-AbCdEf"}}


def test_a_postgres_dsn_naming_a_database_selects_it():
    assert choose("postgres", connected="shop").patterns == ("shop",)


def test_nothing_named_is_every_database():
    assert choose("postgres").patterns == () and choose("postgres", connected=None).how.startswith("no database")


def test_all_names_and_globs_come_before_the_dsn_database():
    assert choose("postgres", named=ALL, connected="shop").patterns == ()
    assert choose("postgres", named=["crm", "shop"], connected="postgres").patterns == ("crm", "shop")
    assert choose("postgres", globs=["app_*"], connected="postgres").patterns == ("app_*",)


def test_a_name_with_glob_characters_matches_itself_only():
    (pattern,) = choose("postgres", connected="a[1]*").patterns
    assert fnmatch.fnmatchcase("a[1]*", pattern) and not fnmatch.fnmatchcase("a1x", pattern)


def test_names_and_globs_at_once_are_refused():
    with pytest.raises(SelectionProblem, match="give one"):
        choose("postgres", named=["a"], globs=["b*"])


def test_mysql_the_dsn_database_is_the_default_schema_selection():
    assert choose("mariadb", connected="shop").patterns == ("shop",)
    # an explicit include-schema names the schemas itself; a system schema is where one logs in without choosing
    assert choose("mariadb", connected="shop", include_schemas=["crm"]).patterns == ()
    assert choose("mysql", connected="information_schema").patterns == ()
    assert choose("mysql", connected="mysql").patterns == ()


def test_oracle_the_dsn_names_a_service_not_a_selection():
    assert choose("oracle", connected="ORCLPDB1").patterns == ()


def test_the_run_input_takes_target_databases_as_names_or_all():
    for value in (ALL, ["crm", "shop"]):
        raw = copy.deepcopy(BASE)
        raw["target"]["databases"] = value
        assert parse_run_input(raw)["target"]["databases"] == value
    assert "databases" not in parse_run_input(copy.deepcopy(BASE))["target"]  # the payload as before


@pytest.mark.parametrize(("target", "warmup", "message"), [
    ({"databases": "some"}, {}, 'target.databases: must be "all" or a list of database names'),
    ({"databases": []}, {}, "target.databases: List should have at least 1 item"),
    ({"databases": ["a"]}, {"databases": ["b*"]}, "target.databases: and warmup.databases both choose"),
    ({"databases": ["a"], "engine": "oracle"}, {}, "target.databases: Oracle reads the one database"),
    ({"databases": ["x" * 64], "engine": "postgres"}, {}, "target.databases.0: is 64 characters"),
])
def test_a_bad_target_databases_is_one_line_naming_the_field(target, warmup, message):
    raw = copy.deepcopy(BASE)
    raw["target"].update(target)
    raw["warmup"] = warmup
    with pytest.raises(InvalidInput) as exc:
        parse_run_input(raw)
    assert str(exc.value).startswith(message), str(exc.value)


def test_the_resolved_warmup_carries_the_databases_into_the_plan_options():
    config = parse_run_input({**copy.deepcopy(BASE), "target": {**BASE["target"], "database": "shop"}})
    warmup = Warmup.model_validate(config["warmup"])
    resolved = resolved_warmup(warmup, config["target"], "postgres")
    assert resolved.databases == ["shop"]
    # plan.json keeps the options given (exclude_unset): the end census reads the same selection
    assert Warmup.model_validate(config["warmup"]).model_dump(exclude_unset=True).get("databases") in (None, [])
    assert resolved.model_dump(mode="json", exclude_unset=True)["databases"] == ["shop"]
    assert choose_for_run("postgres", {"database": None}, {}).patterns == ()


def seg(database, schema, blocks):
    return SimpleNamespace(database=database, schema=schema, blocks=blocks, block_size=8192)


def test_the_line_says_what_it_reads_and_what_the_selection_leaves_out():
    segments = [seg("shop", "public", 96), seg("shop", "pg_catalog", 32)]  # 128 blocks x 8 KiB = 1.0 MiB
    census = [{"database": "crm", "kind": "database", "bytes": 3 * 2**20, "reason": "excluded by input"},
              {"database": "postgres", "kind": "database", "bytes": 2**20, "reason": "excluded by input"},
              {"database": "shop", "schema": "audit", "kind": "table.main", "bytes": 2**19,
               "reason": "excluded by input"},
              {"database": "shop", "schema": "public", "kind": "table.main", "bytes": 2**20, "reason": None}]
    line = selection_line("postgres", segments, census, "the database the DSN names")
    assert line == ("selection (the database the DSN names): database shop (schemas pg_catalog, public), 1.0 MiB; "
                    "the selection leaves out 2 databases (crm, postgres) and 1 schema (shop.audit), 4.5 MiB, named "
                    "in the census as waived (--all-databases reads them)")


def test_the_line_of_a_mysql_run_counts_schemas():
    line = selection_line("mariadb", [seg(None, "shop", 64)],
                          [{"database": None, "schema": "crm", "kind": "table", "bytes": 2**20,
                            "reason": "excluded by input"}])
    assert line == ("selection: 1 schema (shop), 0.5 MiB; the selection leaves out 1 schema (crm), 1.0 MiB, named "
                    "in the census as waived")


def row(schema, name, nbytes, physical_schema=None):
    return RelationRow(oid=16390, schema=physical_schema or schema, relname=name, relkind="r", is_partition=False,
                       shared=False, logical_schema=schema, logical_name=name, fork="main", bytes=nbytes, path=None,
                       may_select=False)


def test_the_missing_select_text_names_the_users_tables_first_largest_first():
    missing = [row("information_schema", "sql_parts", 8192), row("pg_catalog", "pg_authid", 8192),
               row("pg_catalog", "pg_proc", 16384, "pg_toast"), row("app", "small", 8192),
               row("app", "orders", 2**20), row("app", "orders", 3 * 2**20, "pg_toast")]  # orders' TOAST: its bytes
    assert missing_text(missing) == ("app.orders (4.0 MiB), app.small (8,192 bytes), and 3 catalogue relations "
                                     "(32,768 bytes: pg_catalog, information_schema and their TOAST)")


def test_the_missing_select_text_counts_the_rest_of_the_users_tables():
    missing = [row("app", f"t{i}", (i + 1) * 8192) for i in range(7)]
    assert missing_text(missing) == ("app.t6 (57,344 bytes), app.t5 (49,152 bytes), app.t4 (40,960 bytes), "
                                     "app.t3 (32,768 bytes), app.t2 (24,576 bytes), and 2 more of yours "
                                     "(24,576 bytes)")


def test_validate_says_what_the_input_reads():
    from cutover_prep.access.selection import input_text

    assert input_text({"database": "shop"}, {}) == "database shop (target.database)"
    assert input_text({}, {}) == "every database on the instance (no database named)"
    assert input_text({"databases": ALL, "database": "shop"}, {}).startswith("every database on the instance")
    assert input_text({"database": "ORCL", "engine": "oracle"}, {}) == "the database of the service"
    assert input_text({"database": "shop", "engine": "mariadb"}, {"include_schemas": ["crm"]}) == \
        "the schemas warmup selects"


def test_start_all_databases_is_target_databases_all():
    from cutover_prep.cli import remote

    data = remote.build_input(base=None, target="orders", secret_arn=BASE["target"]["secret_arn"], engine=None,
                              database="postgres", run_id="r1", benchmark=None, sets=("target.databases=all",))
    assert data["target"]["databases"] == ALL and data["target"]["database"] == "postgres"


def test_start_wait_says_the_selection_line_once_before_the_warm_up_lines():
    from cutover_prep.cli import remote
    from tests.unit.test_remote import Clock, FakeSfn

    clock, lines = Clock(), []
    planned = {"bytes_planned": 2**30, "bytes_read": 0, "units_total": 8, "step": "warmup",
               "selection": "selection (target.database, the DSN's database): database shop (schema public), 1.0 MiB"}
    runs = iter([None, planned, {**planned, "bytes_read": 2**29, "units_done": 4}])
    remote.wait(FakeSfn(3), "arn", "r", timeout_s=3600, poll_s=15, read_run=lambda _: next(runs),
                report=lines.append, clock=clock, sleep=clock.sleep)
    assert lines[1] == f"[00:15] {planned['selection']}"
    assert lines[2].startswith("[00:15] warmup: 0/8 units") and sum("selection" in ln for ln in lines) == 1
