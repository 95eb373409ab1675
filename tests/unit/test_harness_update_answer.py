"""moto's UpdateItem answered without converting the item when it returns no attributes (``local.moto_dynamodb``:
``_update_answered_without_the_item``): the same answers, items, errors and stream records as moto's own, for
requests without ReturnValues (the product's), with ReturnValues NONE and with the others (moto's own way)."""

from __future__ import annotations

from typing import Any

from tests.unit.test_harness_expressions import N1, S1, SS, STREAMED, TABLE, _key, _moto, _outcome, _without_none


def _update(expression: str, values: dict[str, Any] | None = None, *, returns: str | None = None,
            condition: str | None = None, table: str = TABLE, sk: str = "x", **extra: Any) -> dict[str, Any]:
    return _without_none({"TableName": table, "Key": _key(sk), "UpdateExpression": expression,
                          "ExpressionAttributeValues": values, "ReturnValues": returns,
                          "ConditionExpression": condition, **extra})


REQUESTS = [
    _update("SET a = :x, n = :one, m = :m", {":x": S1, ":one": N1, ":m": {"M": {"l": {"L": [N1, S1]}}}}),
    _update("SET n = n + :one ADD tags :t", {":one": N1, ":t": SS}),
    _update("SET m.l[0] = :x REMOVE a", {":x": S1}, returns="NONE"),
    _update("SET a = :x", {":x": S1, ":v": {"N": "7"}}, condition="n = :v"),  # refused
    _update("SET a = :x", {":x": S1, ":v": {"N": "7"}}, condition="n = :v",
            ReturnValuesOnConditionCheckFailure="ALL_OLD"),  # refused, with the item
    _update("SET a = :x", {":x": S1, ":v": {"N": "2"}}, condition="n = :v"),
    _update("SET n = n + :s", {":s": S1}),  # invalid
    _update("SET fresh = :x", {":x": S1}, sk="new"),  # a new item
    _update("SET a = :x", {":x": {"S": "two"}}, returns="ALL_OLD"),
    _update("SET a = :x", {":x": {"S": "three"}}, returns="UPDATED_NEW"),
    _update("SET a = :x, n = :one", {":x": S1, ":one": N1}, table=STREAMED),
    _update("SET n = n + :one REMOVE a", {":one": N1}, table=STREAMED),
]


def _play(ddb: Any) -> list[Any]:
    outcomes = [_outcome(lambda request=request: ddb.update_item(**request)) for request in REQUESTS]
    items = [sorted(ddb.scan(TableName=table)["Items"], key=lambda i: i["sk"]["S"]) for table in (TABLE, STREAMED)]
    from moto.dynamodb.models import dynamodb_backends

    shard = dynamodb_backends["123456789012"]["us-east-1"].tables[STREAMED].stream_shard
    records = [(r.record["eventName"], r.record["dynamodb"].get("OldImage"), r.record["dynamodb"].get("NewImage"))
               for r in shard.items]
    return [outcomes, items, records]


def test_an_update_that_returns_no_attributes_answers_as_moto_does(monkeypatch):
    with _moto(monkeypatch, cuts=False) as ddb:
        plain = _play(ddb)
    with _moto(monkeypatch, cuts=True) as ddb:
        cut = _play(ddb)
    assert [o[0] for o in plain[0]].count("error") == 3 and plain[2]  # refused, invalid; the stream recorded
    assert plain[0][4][0] == "error"  # the item it was refused on is in moto's answer
    assert cut == plain


def test_the_item_is_converted_only_for_an_answer_that_returns_it(monkeypatch):
    from moto.dynamodb.models.dynamo_type import DynamoType

    with _moto(monkeypatch, cuts=True) as ddb:
        ddb.update_item(**REQUESTS[0])
        converted: list[Any] = []
        original = DynamoType.to_regular_json
        monkeypatch.setattr(DynamoType, "to_regular_json", lambda self: converted.append(self) or original(self))
        ddb.update_item(**_update("SET n = n + :one", {":one": N1}))
        assert converted == []  # the map of the item is neither copied nor converted
        ddb.update_item(**_update("SET n = n + :one", {":one": N1}, returns="ALL_NEW"))
        assert converted
