"""Issue 11, finding 7: the run input is strict and bounded; every bad value is one line naming its field."""

from __future__ import annotations

from typing import Any

import pytest

from cutover_prep.models.run_input import InvalidInput, RunInput, parse_run_input

ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbC123"


def minimal() -> dict[str, Any]:
    return {"target": {"db_instance_identifier": "prod-db-1", "secret_arn": ARN}}


def with_(path: str, value: Any, raw: dict[str, Any] | None = None) -> dict[str, Any]:
    raw = raw or minimal()
    node = raw
    *parents, leaf = path.split(".")
    for p in parents:
        node = node.setdefault(p, {})
    node[leaf] = value
    return raw


def restore(**fields: Any) -> dict[str, Any]:
    return with_("restore", {"snapshot_identifier": "snap-1", **fields})


def error_of(raw: Any, **kwargs: Any) -> str:
    with pytest.raises(InvalidInput) as info:
        parse_run_input(raw, execution_name="exec-1", **kwargs)
    msg = str(info.value)
    assert "\n" not in msg and "\r" not in msg, msg
    assert "Traceback" not in msg
    assert len(msg) < 2000, f"{len(msg)} characters"
    return msg


# ---- strict types: a switch that allows writes is a boolean, a number is not a boolean -------------

@pytest.mark.parametrize(("path", "value"), [
    ("benchmark.write_test", "yes"),
    ("benchmark.write_test", 1),
    ("benchmark.write_test", "true"),
    ("warmup.create_extension", "on"),
    ("warmup.create_extension", 1),
    ("warmup.include_system", "1"),
    ("benchmark.enabled", "false"),
    ("benchmark.compare_limits", 0),
    ("restore.multi_az", "yes"),
    ("verdict.require_benchmark", "no"),
])
def test_switches_are_strict_booleans(path: str, value: Any) -> None:
    raw = with_(path, value, restore() if path.startswith("restore.") else None)
    msg = error_of(raw)
    assert msg.startswith(f"{path}: "), msg
    assert "boolean" in msg


@pytest.mark.parametrize(("path", "value"), [
    ("warmup.max_concurrency", True),
    ("warmup.max_concurrency", "8"),
    ("warmup.max_concurrency", 8.0),
    ("warmup.chunk_mb", False),
    ("target.port", "5432"),
    ("benchmark.probe_blocks", True),
    ("benchmark.sessions", [True, 2]),
    ("benchmark.seconds_per_point", True),
    ("warmup.assumed_cold_mib_per_s", "8"),
    ("verdict.min_coverage_pct", True),
    ("verdict.tolerance_pct", "10"),
])
def test_numbers_are_not_booleans_or_strings(path: str, value: Any) -> None:
    msg = error_of(with_(path, value))
    assert msg.startswith(f"{path}") and ("integer" in msg or "number" in msg), msg


def test_json_integers_still_fill_float_fields() -> None:
    raw = with_("benchmark.seconds_per_point", 20)
    with_("warmup.assumed_cold_mib_per_s", 16, raw)
    with_("verdict.min_coverage_pct", 99, raw)
    config = parse_run_input(raw)
    assert config["benchmark"]["seconds_per_point"] == 20.0
    assert config["warmup"]["assumed_cold_mib_per_s"] == 16.0
    assert config["verdict"]["min_coverage_pct"] == 99.0


@pytest.mark.parametrize(("path", "value"), [
    ("target.database", 5),
    ("warmup.priority", "app.orders"),
    ("restore.tags", [["k", "v"]]),
])
def test_strings_and_lists_are_not_coerced(path: str, value: Any) -> None:
    raw = with_(path, value, restore() if path.startswith("restore.") else None)
    assert error_of(raw).startswith(path)


# ---- sizes: every string and list is bounded ----------------------------------------------------

@pytest.mark.parametrize(("path", "value"), [
    ("target.database", "d" * 100_000),
    ("target.database", "d" * 129),
    ("target.host", "h" * 256),
    ("target.secret_arn", ARN + "x" * 3000),
    ("warmup.include_schemas", ["s*"] * 20_000),
    ("warmup.include_schemas", ["s*"] * 101),
    ("warmup.exclude_schemas", ["x" * 257]),
    ("warmup.databases", ["d"] * 101),
    ("warmup.priority", ["app.*"] * 101),
    ("benchmark.sessions", [1] * 5000),
    ("benchmark.sessions", [1] * 17),
    ("benchmark.mbrc_values", [8] * 17),
    ("benchmark.io_combine_kb_values", [8] * 17),
    ("run_id", "r" * 81),
])
def test_every_string_and_list_is_bounded(path: str, value: Any) -> None:
    msg = error_of(with_(path, value))
    assert msg.startswith(path), msg[:200]
    if isinstance(value, str):
        assert value not in msg  # the long value is never echoed


def test_the_limits_let_real_inputs_through() -> None:
    raw = with_("warmup.include_schemas", ["s*"] * 100)
    with_("warmup.priority", ["app." + "o" * 128], raw)  # Oracle's longest name (test_identifier_limits.py)
    with_("benchmark.sessions", list(range(1, 17)), raw)
    with_("target.database", "d" * 128, raw)
    with_("target.host", "proxy.internal.example.com", raw)
    assert parse_run_input(raw)["warmup"]["include_schemas"] == ["s*"] * 100


@pytest.mark.parametrize("path", ["target.database", "target.host", "warmup.priority", "restore.tags",
                                  "restore.snapshot_identifier", "restore.db_subnet_group_name", "run_id"])
@pytest.mark.parametrize("bad", ["\x00", "\x07", "\x1b[2J", "\u0085", "\u2028"])
def test_control_characters_are_rejected_naming_the_field(path: str, bad: str) -> None:
    value: Any = f"a{bad}b"
    if path == "warmup.priority":
        value = ["app.x", value]
    elif path == "restore.tags":
        value = {"team": value}
    raw = restore() if path.startswith("restore.") else minimal()
    msg = error_of(with_(path, value, raw))
    assert msg.startswith(path), msg
    assert bad not in msg


def test_a_control_character_in_a_tag_key_or_unknown_field_name_is_not_printed() -> None:
    msg = error_of(restore(tags={"te\x00am": "x"}))
    assert msg.startswith("restore.tags") and "\x00" not in msg
    msg = error_of(with_("warmup.a\nb", 1))
    assert "unknown field" in msg and "\n" not in msg


def test_a_huge_unknown_field_name_is_cut_in_the_message() -> None:
    assert "unknown field" in error_of(with_("warmup." + "k" * 100_000, 1))


def test_thousands_of_errors_stay_one_short_line() -> None:
    raw = minimal()
    raw.update({f"x{i}": 1 for i in range(20_000)})
    msg = error_of(raw)
    assert "x0: unknown field" in msg and "more" in msg


# ---- the restore ---------------------------------------------------------------------------------

@pytest.mark.parametrize("snapshot", ["", " ", "1snap", "snap--1", "snap-", "snap_1", "s" * 256, "snap 1",
                                      "arn:aws:rds:us-east-1:123456789012:snapshot:", "rds:"])
def test_snapshot_identifier_follows_rds_rules(snapshot: str) -> None:
    assert error_of(restore(snapshot_identifier=snapshot)).startswith("restore.snapshot_identifier: ")


@pytest.mark.parametrize("snapshot", ["snap-1", "s" * 255, "rds:prod-db-2026-11-20-03-10",
                                      "arn:aws:rds:us-east-1:123456789012:snapshot:shared-snap-1",
                                      "arn:aws:rds:eu-west-1:123456789012:snapshot:rds:prod-db-2026-11-20-03-10",
                                      "arn:aws-cn:rds:cn-north-1:123456789012:snapshot:s1",
                                      "awsbackup:job-0123abcd"])
def test_good_snapshot_identifiers(snapshot: str) -> None:
    assert parse_run_input(restore(snapshot_identifier=snapshot))["restore"]["snapshot_identifier"] == snapshot


def test_restore_tags_follow_rds_limits() -> None:
    many = {f"k{i}": "v" for i in range(200)}
    assert error_of(restore(tags=many)).startswith("restore.tags: ")
    # RDS allows 50 tags per instance; the run adds its run id and its deployment's id
    assert parse_run_input(restore(tags={f"k{i}": "v" for i in range(48)}))["restore"]["tags"]["k0"] == "v"
    assert "at most 48" in error_of(restore(tags={f"k{i}": "v" for i in range(49)}))
    assert error_of(restore(tags={"k" * 129: "v"})).startswith("restore.tags")
    assert error_of(restore(tags={"k": "v" * 257})).startswith("restore.tags")
    assert error_of(restore(tags={"": "v"})).startswith("restore.tags")
    for key in ("aws:created-by", "AWS:x"):
        assert "aws:" in error_of(restore(tags={key: "v"}))
    assert "reserved" in error_of(restore(tags={"cutover-prep:run-id": "other"}))
    good = {"team": "db", "cost-center": "4711", "app/name": "orders=1 +x@y", "empty": ""}
    assert parse_run_input(restore(tags=good))["restore"]["tags"] == good


@pytest.mark.parametrize(("field", "value"), [
    ("db_subnet_group_name", "x" * 256),
    ("db_subnet_group_name", "a;b"),
    ("db_parameter_group_name", "p" * 256),
    ("db_parameter_group_name", "1pg"),
    ("option_group_name", "o" * 256),
    ("option_group_name", "o g"),
    ("db_instance_class", "db." + "r" * 100 + ".large"),
    ("vpc_security_group_ids", ["sg-0123456789abcdef0"] * 17),
])
def test_restore_names_are_bounded(field: str, value: Any) -> None:
    assert error_of(restore(**{field: value})).startswith(f"restore.{field}")


def test_default_group_names_are_accepted() -> None:
    config = parse_run_input(restore(db_parameter_group_name="default.postgres16",
                                     option_group_name="default:postgres-16", db_subnet_group_name="My subnets_1.a"))
    assert config["restore"]["option_group_name"] == "default:postgres-16"


# ---- nesting ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("depth", [40, 5000, 200_000])
def test_deep_nesting_is_one_line(depth: int) -> None:
    deep: Any = "x"
    for _ in range(depth):
        deep = {"a": deep}
    msg = error_of(with_("restore", deep))
    assert "nested" in msg and msg.startswith("restore")


# ---- the write test's size cap (the cap itself is the workflow's) ------------------------------------

def test_write_cap_fields() -> None:
    bench = parse_run_input(minimal())["benchmark"]
    assert bench["write_max_mib"] == 256 and bench["write_max_free_storage_pct"] == 5
    assert parse_run_input(with_("benchmark.write_max_mib", 102_400))["benchmark"]["write_max_mib"] == 102_400
    assert parse_run_input(with_("benchmark.write_max_free_storage_pct", 50))["benchmark"][
        "write_max_free_storage_pct"] == 50
    for path, value in (("benchmark.write_max_mib", 0), ("benchmark.write_max_mib", 102_401),
                        ("benchmark.write_max_mib", True), ("benchmark.write_max_free_storage_pct", 0),
                        ("benchmark.write_max_free_storage_pct", 50.5)):
        assert error_of(with_(path, value)).startswith(path)
    props = RunInput.model_json_schema()["$defs"]["Benchmark"]["properties"]
    assert props["write_max_mib"]["description"] == "Cap on what the opt-in write points write, MiB"
    assert "free storage" in props["write_max_free_storage_pct"]["description"]


# ---- the deploy-time host allow-list ------------------------------------------------------------------

def test_host_must_be_in_the_deployments_allow_list() -> None:
    raw = with_("target.host", "evil.example.com")
    msg = error_of(raw, allowed_hosts=["proxy.internal"])
    assert msg == ("target.host: evil.example.com is not in this deployment's allow-list of database hosts "
                   "(deploy context allowed_db_hosts); remove target.host to connect to the endpoint RDS "
                   "reports for the instance")
    assert error_of(raw, allowed_hosts=[]).startswith("target.host: evil.example.com is not in")
    assert error_of(raw, allowed_hosts=("evil.example.co",)).startswith("target.host: ")
    ok = with_("target.host", "Proxy.Internal")
    assert parse_run_input(ok, allowed_hosts=["proxy.internal"])["target"]["host"] == "Proxy.Internal"
    assert parse_run_input(ok, allowed_hosts=None)["target"]["host"] == "Proxy.Internal"  # not checked
    assert parse_run_input(minimal(), allowed_hosts=[])["target"]["host"] is None  # no host: the endpoint


@pytest.mark.parametrize("value", [0.95, 0.5, 1])
def test_a_coverage_fraction_typed_for_a_percent_is_refused(value: Any) -> None:
    """Issue 23 §5: `verdict.min_coverage_pct: 0.95` was accepted as 0.95 %, so a run reading 1 % of its
    plan could be READY."""
    msg = error_of(with_("verdict.min_coverage_pct", value))
    assert msg.startswith("verdict.min_coverage_pct: is a percent from 0 to 100"), msg
    assert f"write {value * 100:g}" in msg and "\n" not in msg


@pytest.mark.parametrize("value", [0, 1.5, 95, 100])
def test_coverage_percents_are_accepted(value: Any) -> None:
    assert parse_run_input(with_("verdict.min_coverage_pct", value))["verdict"]["min_coverage_pct"] == value
