"""Stored profiles: refused when stored if the workflow would refuse them; read back as stored."""

from __future__ import annotations

import pytest

from cutover_prep.dal import profiles
from cutover_prep.models.run_input import InvalidInput
from tests.unit.conftest import TABLE

SECRET = "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf"


@pytest.mark.parametrize("data", [
    {},
    {"warmup": {"max_concurrency": 16}, "benchmark": {"enabled": False}},
    {"target": {"secret_arn": SECRET, "engine": "oracle"}, "verdict": {"max_warm_p99_ms": 5}},
])
def test_good_profiles(data):
    profiles.check(data)


@pytest.mark.parametrize(("data", "needle"), [
    ([], "must be a JSON object"),
    ({"target": "db"}, "target must be an object"),
    ({"target": {"db_instance_identifier": "db"}}, "target.db_instance_identifier comes from the restored"),
    ({"run_id": "r1"}, "run_id is made per restore"),
    ({"restore": {"snapshot_identifier": "s"}}, "restore has no place"),
    ({"warmup": {"max_concurency": 4}}, "profile: warmup.max_concurency: unknown field"),
    ({"warmup": {"max_concurrency": 0}}, "profile: warmup.max_concurrency"),
    ({"target": {"secret_arn": "hunter2"}}, "profile: target.secret_arn"),
])
def test_bad_profiles_name_the_field(data, needle):
    with pytest.raises(InvalidInput) as err:
        profiles.check(data)
    assert needle in str(err.value) and "\n" not in str(err.value) and "hunter2" not in str(err.value)


def test_save_then_load_and_what_is_refused(store):
    data = {"warmup": {"max_concurrency": 16}, "target": {"secret_arn": SECRET}}
    profiles.save(store._ddb, TABLE, "oracle-prod", data)
    assert profiles.load(store._ddb, TABLE, "oracle-prod") == data
    assert profiles.load(store._ddb, TABLE, "missing") is None
    with pytest.raises(InvalidInput, match="profile name"):
        profiles.save(store._ddb, TABLE, "bad name", data)
    with pytest.raises(InvalidInput, match="unknown field"):
        profiles.save(store._ddb, TABLE, "typo", {"warmup": {"max_concurency": 4}})
    assert profiles.load(store._ddb, TABLE, "typo") is None  # nothing was stored
    store._ddb.put_item(TableName=TABLE, Item={"pk": {"S": "PROFILE#hand-made"}, "sk": {"S": "PROFILE"},
                                              "input": {"S": "{not json"}})
    with pytest.raises(InvalidInput, match="not JSON"):
        profiles.load(store._ddb, TABLE, "hand-made")
