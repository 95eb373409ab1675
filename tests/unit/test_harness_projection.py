"""The local harness's DynamoDB projections: what a ProjectionExpression returns is what DynamoDB documents ("only
the attributes you specify", nested ones by their document path, a list element by its index; "Specifying item
attributes when using expressions", DynamoDB Developer Guide), and an attribute the expression does not name is not
converted at all (moto converted the whole item once per path: the local run's progress poll converted the run item,
plan summary and estimate included, seven times a second; issue 24 §5)."""

from __future__ import annotations

from typing import Any

import pytest
from moto.dynamodb.models.dynamo_type import DynamoType

from tests.unit.harness_dynamodb import harness_dynamodb

TABLE = "cutover-prep-local"
KEY = {"pk": {"S": "RUN#t"}, "sk": {"S": "RUN"}}
UNNAMED = "not-named-by-the-projection"
ITEM = {
    **KEY,
    "bytes_read": {"N": "42"},
    "status": {"S": "RUNNING"},
    "estimate": {"M": {"assumed_mib_per_s": {"N": "15.625"}, "range_seconds": {"N": "0.3652"}}},
    "chunks": {"L": [{"S": "first"}, {"S": "second"}, {"S": "third"}]},
    "plan": {"M": {"summary": {"S": UNNAMED}, "units": {"L": [{"S": UNNAMED}] * 50}}},
}


@pytest.fixture
def ddb(monkeypatch) -> Any:
    """moto with the harness's DynamoDB patches (what ``LocalAws`` starts), the run table and one run item."""
    with harness_dynamodb(monkeypatch, TABLE, ITEM) as client:
        yield client


@pytest.fixture
def converted(monkeypatch) -> list[Any]:
    """Every value moto converts to plain JSON from now on (``DynamoType.to_regular_json``, nested ones included)."""
    seen: list[Any] = []
    original = DynamoType.to_regular_json

    def recording(self: DynamoType) -> dict[str, Any]:
        seen.append(self.value)
        return original(self)

    monkeypatch.setattr(DynamoType, "to_regular_json", recording)
    return seen


def _get(ddb: Any, projection: str, names: dict[str, str] | None = None) -> dict[str, Any]:
    extra = {"ExpressionAttributeNames": names} if names else {}
    return ddb.get_item(TableName=TABLE, Key=KEY, ConsistentRead=True, ProjectionExpression=projection,
                        **extra)["Item"]


def test_a_projection_returns_the_named_attributes_paths_and_list_elements(ddb):
    got = _get(ddb, "#b, #s, estimate.range_seconds, chunks[1], absent_one, estimate.absent_one",
               {"#b": "bytes_read", "#s": "status"})
    assert got == {"bytes_read": {"N": "42"}, "status": {"S": "RUNNING"},
                   "estimate": {"M": {"range_seconds": {"N": "0.3652"}}}, "chunks": {"L": [{"S": "second"}]}}


def test_two_paths_into_one_map_are_merged(ddb):
    got = _get(ddb, "estimate.range_seconds, estimate.assumed_mib_per_s")
    assert got == {"estimate": {"M": {"range_seconds": {"N": "0.3652"}, "assumed_mib_per_s": {"N": "15.625"}}}}


def test_an_attribute_the_projection_does_not_name_is_not_converted(ddb, converted):
    got = _get(ddb, "#b, #s, estimate", {"#b": "bytes_read", "#s": "status"})
    assert set(got) == {"bytes_read", "status", "estimate"}
    assert UNNAMED not in converted, "the run item's plan was converted for a projection that does not name it"


def test_a_query_with_a_projection_does_not_convert_what_it_does_not_name(ddb, converted):
    items = ddb.query(TableName=TABLE, KeyConditionExpression="pk = :pk", ProjectionExpression="sk, bytes_read",
                      ExpressionAttributeValues={":pk": KEY["pk"]})["Items"]
    assert items == [{"sk": {"S": "RUN"}, "bytes_read": {"N": "42"}}]
    assert UNNAMED not in converted
