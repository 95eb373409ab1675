"""Issue 20, finding 5, where the command line is not involved: the workflow's ValidateInput gets its
input already parsed (by Step Functions), so the models themselves refuse non-finite numbers and
format characters, check storage against RDS's documented limits, and ValidateInput checks the
started-by execution against its own function's ARN.

Storage limits: Amazon RDS User Guide, "Amazon RDS DB instance storage"
(https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html).
"""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from pydantic import ValidationError

from cutover_prep.comparison.model import ComparisonInput
from cutover_prep.local.lambda_runtime import FakeContext
from cutover_prep.models import json_text
from cutover_prep.models.run_input import InvalidInput, error_lines, parse_run_input
from cutover_prep.models.storage_limits import storage_problem

ARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:prod/db-AbC123"


def minimal(**sections: Any) -> dict[str, Any]:
    return {"target": {"db_instance_identifier": "prod-db-1", "secret_arn": ARN}, **sections}


def refused(raw: Any, **kwargs: Any) -> str:
    with pytest.raises(InvalidInput) as info:
        parse_run_input(raw, **kwargs)
    assert len(info.value.problems) == 1, info.value.problems
    return str(info.value)


# ---- numbers the workflow gets already parsed: Python's json reads 1e999 as inf ------------------

@pytest.mark.parametrize(("section", "field"), [
    ("verdict", "max_warm_to_cold_latency"),  # gt=0 and no maximum: inf passed before
    ("verdict", "expected_read_iops"),
    ("verdict", "min_warm_speedup"),
    ("warmup", "production_size_gb"),
    ("benchmark", "seconds_per_point"),
])
@pytest.mark.parametrize("value", [math.inf, -math.inf, math.nan])
def test_non_finite_numbers_are_refused_by_the_model(section: str, field: str, value: float) -> None:
    msg = refused(minimal(**{section: {field: value}}))
    assert msg.startswith(f"{section}.{field}: "), msg
    assert "finite" in msg or "greater" in msg or "less" in msg, msg


def test_infinity_in_a_threshold_was_accepted_and_is_not() -> None:
    msg = refused(minimal(verdict={"max_warm_to_cold_latency": math.inf}))
    assert msg == ("verdict.max_warm_to_cold_latency: must be a finite number (not Infinity, NaN, or beyond "
                   "about 1.8e308)")


def test_the_comparison_refuses_non_finite_targets() -> None:
    from tests.unit.test_comparison_model import EXAMPLE

    raw = copy.deepcopy(EXAMPLE)
    raw["targets"] = {"min_read_iops": math.inf}
    with pytest.raises(ValidationError) as info:
        ComparisonInput.model_validate(raw, strict=True)
    assert "finite" in str(info.value)


# ---- format characters ---------------------------------------------------------------------------

@pytest.mark.parametrize("char", ["\u200b", "\u200c", "\u200d", "\u200e", "\u200f", "\u202a", "\u202b",
                                  "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069",
                                  "\u061c", "\ufeff", "\u2060", "\u00ad"])
def test_every_bidi_control_and_zero_width_character_is_refused(char: str) -> None:
    # the bidi controls of Unicode Standard Annex #9 (Table 1: explicit directional formatting
    # characters, and ALM, LRM, RLM) and the zero-width ones are all in category Cf
    msg = refused(minimal(target={**minimal()["target"], "database": f"ord{char}ers"}))
    assert msg.startswith("target.database: holds the invisible format character U+"), msg
    assert f"U+{ord(char):04X}" in msg


def test_letters_of_any_script_are_still_names() -> None:
    for name in ("заказы", "注文", "ΠΑΡΑΓΓΕΛΙΕΣ", "café"):
        parse_run_input(minimal(target={**minimal()["target"], "database": name}))


# ---- hosts ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("host", ["db.example.com", "DB-1.internal", "localhost", "10.0.0.5", "::1", "fd00::5",
                                  "2001:db8::1", "/var/run/postgresql", "/tmp/cutover-prep-pg-x/sock",
                                  "a" * 63 + ".example.com"])
def test_host_names_and_addresses(host: str) -> None:
    parse_run_input(minimal(target={**minimal()["target"], "host": host}))


@pytest.mark.parametrize("host", ["proxy,attacker", "user:pw@attacker", "fe80::1%eth0", "[::1]",
                                  "db.example.com:5432", "-db.example.com", "db_1.example.com",
                                  "a" * 64 + ".example.com", "db..example.com", "1.2.3", "256.1.1.1",
                                  "db example.com", "/tmp/a,/tmp/b", "host=x", "db.example.com."])
def test_what_is_not_a_host(host: str) -> None:
    msg = refused(minimal(target={**minimal()["target"], "host": host}))
    assert msg.startswith("target.host: "), msg
    assert "pw@" not in msg


# ---- storage: the documented limits, at their edges ----------------------------------------------

@pytest.mark.parametrize(("storage", "field"), [
    # io1: 100-65,536 GiB, 1,000-256,000 IOPS, 0.5-50 IOPS per GiB
    (("io1", 100, 5_000, None, None), None),
    (("io1", 100, 5_001, None, None), "iops"),
    (("io1", 99, 4_950, None, None), "allocated_gb"),
    (("io1", 2_000, 1_000, None, None), None),
    (("io1", 2_002, 1_000, None, None), "iops"),
    (("io1", 5_120, 256_000, None, None), None),
    # io2: 0.5-1,000 IOPS per GiB; 256,000 from 256 GiB
    (("io2", 256, 256_000, None, None), None),
    (("io2", 255, 256_000, None, None), "iops"),
    (("io2", 100, 100_000, None, None), None),
    # gp3: provisioned only from the striping threshold (Oracle 200 GiB, the others 400 GiB)
    (("gp3", 399, 12_000, None, "postgres"), "iops"),
    (("gp3", 400, 12_000, None, "postgres"), None),
    (("gp3", 399, None, 500, "mysql"), "storage_throughput"),
    (("gp3", 199, 12_000, None, "oracle"), "iops"),
    (("gp3", 200, 12_000, None, "oracle"), None),
    (("gp3", 200, 12_000, None, None), None),  # no engine: Oracle's threshold, the lowest
    (("gp3", 400, 11_999, None, "postgres"), "iops"),
    (("gp3", 400, 64_001, None, "postgres"), "iops"),
    (("gp3", 400, 16_000, 4_000, "postgres"), None),  # 0.25 MiB/s per IOPS
    (("gp3", 400, 15_996, 4_000, "postgres"), "storage_throughput"),
    (("gp3", 400, None, 3_000, "postgres"), None),  # the striped baseline 12,000 IOPS x 0.25
    (("gp3", 400, None, 3_001, "postgres"), "storage_throughput"),
    (("gp3", 400, 12_000, 499, "postgres"), "storage_throughput"),
    (("gp3", 20, None, None, "postgres"), None),
    # magnetic: at most 3 TiB
    (("standard", 3_072, None, None, None), None),
    (("standard", 3_073, None, None, None), "allocated_gb"),
    # the snapshot's size (allocated_gb not given): only what does not need the size
    (("io1", None, 256_000, None, None), None),
    (("gp3", None, 12_000, 4_000, None), "storage_throughput"),
])
def test_storage_limits_per_type(storage: tuple[Any, ...], field: str | None) -> None:
    problem = storage_problem(*storage)
    assert (problem[0] if problem else None) == field, problem


def test_a_run_input_with_the_engine_is_checked_by_the_engines_threshold() -> None:
    restore = {"snapshot_identifier": "s1", "storage_type": "gp3", "allocated_gb": 300, "iops": 12_000}
    oracle = minimal(restore=restore)
    oracle["target"]["engine"] = "oracle-ee"
    parse_run_input(oracle)
    postgres = copy.deepcopy(oracle)
    postgres["target"]["engine"] = "postgres"
    msg = refused(postgres)
    assert msg.startswith("restore.iops: gp3 iops can be provisioned only from 400 GiB on PostgreSQL"), msg


def test_a_comparison_configuration_rds_would_refuse_is_named() -> None:
    from tests.unit.test_comparison_model import EXAMPLE

    raw = copy.deepcopy(EXAMPLE)
    raw["configurations"][1] = {**raw["configurations"][1], "allocated_gb": 20, "iops": 256_000}
    with pytest.raises(ValidationError) as info:
        ComparisonInput.model_validate(raw, strict=True)
    assert error_lines(info.value) == [
        "configurations.1.allocated_gb: io1 takes 100-65,536 GiB; 20 GiB given (RDS User Guide, Amazon RDS DB "
        "instance storage)"]


def test_duplicate_security_groups_in_a_comparison() -> None:
    from tests.unit.test_comparison_model import EXAMPLE

    raw = copy.deepcopy(EXAMPLE)
    raw["restore"]["vpc_security_group_ids"] = ["sg-0123456789abcdef0", "sg-0123456789abcdef0"]
    with pytest.raises(ValidationError) as info:
        ComparisonInput.model_validate(raw, strict=True)
    assert "given twice" in str(info.value)


# ---- the started-by execution, in the workflow --------------------------------------------------

OTHER_ACCOUNT = "arn:aws:states:eu-west-1:999999999999:execution:CutoverPrepCompare:c-1"
SAME = "arn:aws:states:eu-west-1:123456789012:execution:CutoverPrepCompare:c-1"


def test_validate_input_checks_the_started_by_against_its_own_function_arn(monkeypatch: Any, store: Any) -> None:
    from handlers import validate_input

    monkeypatch.setattr(validate_input.deps, "store", lambda: store)
    monkeypatch.setenv("ALLOWED_DB_HOSTS", "")
    context = FakeContext("cutover-prep-validate-input", 60, region="eu-west-1")
    event = {"input": minimal(AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID=OTHER_ACCOUNT), "execution_name": "r-1"}
    with pytest.raises(InvalidInput) as info:
        validate_input.handler(event, context)
    assert str(info.value).startswith("AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID: names an execution in account "
                                      "999999999999, but this deployment is in account 123456789012")
    assert store.get_run("r-1") is None  # refused before the run is recorded
    event = {"input": minimal(AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID=SAME), "execution_name": "r-2"}
    assert validate_input.handler(event, context)["started_by"] == SAME
    context = FakeContext("cutover-prep-validate-input", 60, region="us-east-1")
    event = {"input": minimal(AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID=SAME), "execution_name": "r-3"}
    with pytest.raises(InvalidInput, match="region eu-west-1, but this deployment is in region us-east-1"):
        validate_input.handler(event, context)


# ---- the strict JSON reader ----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "where"), [
    ('{"a": 1, "a": 2}', "a"),
    ('{"a": {"b": [1, {"c": 1, "c": 1}]}}', "a.b.1.c"),
    ('{"a": [1, Infinity]}', "a.1"),
    ('{"a": -Infinity}', "a"),
    ('{"a": NaN}', "a"),
    ('{"a": 1e999}', "a"),
    ('{"a": -1e999}', "a"),
    ('{"a": %s}' % ("1" * 4301), "a"),
    ('{"a": -%s}' % ("1" * 4301), "a"),
])
def test_the_json_reader_names_where(text: str, where: str) -> None:
    with pytest.raises(json_text.JsonProblem) as info:
        json_text.loads(text)
    assert str(info.value).startswith(f"{where}: "), str(info.value)


def test_the_json_reader_reads_ordinary_json_as_json_does() -> None:
    import json

    text = '{"a": [1, 2.5, -3, 1e308, "x", null, true, {"b": {}}], "c": %s}' % ("7" * 4300)
    assert json_text.loads(text) == json.loads(text)
