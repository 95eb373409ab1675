"""The local harness's DynamoDB answers: an item comes back as it was written, every attribute type included
("Data type descriptors", DynamoDB Developer Guide: S, N, B, BOOL, NULL, M, L, SS, NS, BS; binaries base64-encoded
in the JSON protocol), and moto no longer walks the API model member by member for each value (a Query of a local
run's 71 unit items cost 0.64-0.83 s of the runner's CPU, read once a second by the live progress; issue 24 §5)."""

from __future__ import annotations

from typing import Any

import pytest
from moto.core import serialize

from tests.unit.harness_dynamodb import harness_dynamodb

TABLE = "cutover-prep-local"
KEY = {"pk": {"S": "RUN#t"}, "sk": {"S": "UNIT#u000001"}}
ITEM = {
    **KEY,
    "status": {"S": "DONE"}, "empty": {"S": ""}, "bytes_read": {"N": "8192"}, "seconds": {"N": "0.25"},
    "done": {"BOOL": True}, "failed": {"BOOL": False}, "cursor": {"NULL": True},
    "tags": {"SS": ["a", "b"]}, "sizes": {"NS": ["1", "2.5"]},
    "blob": {"B": b"\x00\x01binary\xff"}, "blobs": {"BS": [b"\x00", b"\xff"]},
    "chunks": {"L": [{"L": [{"S": "2026-11-26T17:46:59+00:00"}, {"N": "24576"}, {"N": "0.397"}]}] * 40},
    "nested": {"M": {"m": {"M": {"deep": {"L": [{"NULL": True}, {"BOOL": False}, {"M": {}}, {"L": []}]}}},
                     "b": {"B": b"inside"}}},
    "empty_list": {"L": []}, "empty_map": {"M": {}},
}


@pytest.fixture
def ddb(monkeypatch) -> Any:
    """moto with the harness's DynamoDB patches (what ``LocalAws`` starts), the run table and one unit item."""
    with harness_dynamodb(monkeypatch, TABLE, ITEM) as client:
        yield client


def test_an_item_comes_back_as_it_was_written(ddb):
    assert ddb.get_item(TableName=TABLE, Key=KEY, ConsistentRead=True)["Item"] == ITEM
    items = ddb.query(TableName=TABLE, KeyConditionExpression="pk = :pk",
                      ExpressionAttributeValues={":pk": KEY["pk"]})["Items"]
    assert items == [ITEM]


def test_an_update_answers_the_new_values(ddb):
    got = ddb.update_item(TableName=TABLE, Key=KEY, UpdateExpression="SET #s = :s ADD bytes_read :n",
                          ExpressionAttributeNames={"#s": "status"},
                          ExpressionAttributeValues={":s": {"S": "RUNNING"}, ":n": {"N": "8192"}},
                          ReturnValues="UPDATED_NEW")["Attributes"]
    assert got == {"status": {"S": "RUNNING"}, "bytes_read": {"N": "16384"}}


def test_the_values_of_an_answer_are_not_walked_member_by_member(ddb, monkeypatch):
    looked_up: list[str] = []
    original = serialize.ResponseSerializer.get_value

    def counting(self: Any, value: Any, key: str, shape: Any) -> Any:
        looked_up.append(key)
        return original(self, value, key, shape)

    monkeypatch.setattr(serialize.ResponseSerializer, "get_value", counting)
    ddb.get_item(TableName=TABLE, Key={**KEY}, ConsistentRead=True, ProjectionExpression="chunks")
    values = 1 + 40 * 4  # the list, its 40 lists, three values in each
    assert len(looked_up) < values, f"{len(looked_up)} member look-ups for {values} values"
