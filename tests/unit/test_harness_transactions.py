"""The local harness's DynamoDB transactions: all or nothing, as DynamoDB's TransactWriteItems is ("either all
of them succeed or none of them", the DynamoDB API reference), without moto's deep copy of every table a
transaction writes to (each commit of a local run's progress copied every item written so far)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from botocore.exceptions import ClientError
from moto.dynamodb.models import Table

from tests.unit.harness_dynamodb import harness_dynamodb


def _key(sk: str) -> dict[str, Any]:
    return {"pk": {"S": "RUN#t"}, "sk": {"S": sk}}


def _items(ddb: Any, table: str) -> dict[str, dict[str, Any]]:
    return {i["sk"]["S"]: i for i in ddb.scan(TableName=table)["Items"]}


@pytest.fixture
def local(monkeypatch) -> Any:
    """moto with the harness's DynamoDB patches (what ``LocalAws`` starts), and the run table."""
    aws = SimpleNamespace(table="cutover-prep-local")
    items = [{**_key(sk), "n": {"N": n}, "tags": {"SS": ["x"]}} for sk, n in (("a", "1"), ("b", "2"), ("c", "3"))]
    with harness_dynamodb(monkeypatch, aws.table, *items) as ddb:
        yield aws, ddb


def test_a_cancelled_transaction_leaves_every_item_as_it_was(local):
    aws, ddb = local
    before = _items(ddb, aws.table)
    with pytest.raises(ClientError, match="TransactionCanceled"):
        ddb.transact_write_items(TransactItems=[
            {"Update": {"TableName": aws.table, "Key": _key("a"), "UpdateExpression": "SET n = n + :one ADD tags :t",
                        "ExpressionAttributeValues": {":one": {"N": "1"}, ":t": {"SS": ["y"]}}}},
            {"Put": {"TableName": aws.table, "Item": {**_key("new"), "n": {"N": "9"}}}},
            {"Delete": {"TableName": aws.table, "Key": _key("b")}},
            {"ConditionCheck": {"TableName": aws.table, "Key": _key("c"), "ConditionExpression": "n = :x",
                                "ExpressionAttributeValues": {":x": {"N": "42"}}}},  # fails: n is 3
        ])
    assert _items(ddb, aws.table) == before


def test_a_transaction_that_goes_through_writes_all_of_it_and_copies_no_table(local, monkeypatch):
    aws, ddb = local

    def no_copy(self, memo):
        raise AssertionError("the whole table was copied")

    monkeypatch.setattr(Table, "__deepcopy__", no_copy, raising=False)
    ddb.transact_write_items(TransactItems=[
        {"Update": {"TableName": aws.table, "Key": _key("a"), "UpdateExpression": "SET n = n + :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        {"Put": {"TableName": aws.table, "Item": {**_key("new"), "n": {"N": "9"}}}},
        {"Delete": {"TableName": aws.table, "Key": _key("b")}},
    ])
    after = _items(ddb, aws.table)
    assert sorted(after) == ["a", "c", "new"] and after["a"]["n"] == {"N": "2"} and after["new"]["n"] == {"N": "9"}
