"""moto's UpdateItem with the local harness's cuts (``local.moto_fast``: each UpdateExpression parsed once per text,
the whole-tree checks once per tree and names, the processors' node classes looked up once per traversal;
``local.moto_dynamodb``: no copy of the item on a table without a stream) answers as moto does without them: the
same answers, the same items written, the same errors and messages, for the product's own expressions
(``Store.commit_progress``, ``fail_unit``, ``update_run``, the slots' conditional writes) and for invalid ones,
each played twice (the second time on what the first one cached)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from moto import mock_aws

from cutover_prep.dal import store as store_module
from cutover_prep.dal.store import Store
from cutover_prep.local import moto_dynamodb, moto_fast
from cutover_prep.workflows import table_definition

TABLE = "cutover-prep-local"
STREAMED = "streamed"
RUN = "r1"


def _key(sk: str) -> dict[str, Any]:
    return {"pk": {"S": f"RUN#{RUN}"}, "sk": {"S": sk}}


def _update(expression: str, values: dict[str, Any] | None = None, names: dict[str, str] | None = None,
            sk: str = "x", condition: str | None = None, table: str = TABLE) -> tuple[str, dict[str, Any]]:
    request: dict[str, Any] = {"TableName": table, "Key": _key(sk), "UpdateExpression": expression,
                               "ReturnValues": "ALL_NEW"}
    if values is not None:
        request["ExpressionAttributeValues"] = values
    if names is not None:
        request["ExpressionAttributeNames"] = names
    if condition is not None:
        request["ConditionExpression"] = condition
    return "update_item", request


N1, S1, SS = {"N": "1"}, {"S": "one"}, {"SS": ["y"]}

# Raw requests, valid and invalid; the product's own come through ``Store`` (``_play``)
REQUESTS: list[tuple[str, dict[str, Any]]] = [
    _update("SET a = :x, n = :one", {":x": S1, ":one": N1}),  # a new item
    _update("SET n = n + :one ADD tags :t", {":one": N1, ":t": SS}),
    _update("SET m = :m", {":m": {"M": {"b": {"S": "deep"}, "c": {"L": [N1]}}}}),
    _update("SET m.b = :x, m.c[0] = :one", {":x": S1, ":one": N1}),
    _update("SET #a = :x, #b = :y", {":x": S1, ":y": S1}, {"#a": "a", "#b": "b"}),
    _update("SET #a = :x, #b = :y", {":x": S1, ":y": S1}, {"#a": "a", "#b": "a"}),  # same text: duplicate name
    _update("SET a = :x, a = :y", {":x": S1, ":y": S1}),  # duplicate path
    _update("SET m.b = :x, m = :y", {":x": S1, ":y": S1}),  # overlapping paths
    _update("SET a = :x, m.c[0] = :one REMOVE m.c", {":x": S1, ":one": N1}),  # overlapping, across clauses
    _update("SET a = :x SET b = :y", {":x": S1, ":y": S1}),  # two SET clauses
    _update("ADD n :one ADD q :one", {":one": N1}),  # two ADD clauses
    _update("REMOVE a REMOVE b"),  # two REMOVE clauses
    _update("SET a = :x SET b = :y ADD n :one ADD q :one", {":x": S1, ":y": S1, ":one": N1}),  # which one first
    _update("SET a = :missing, b = :x", {":x": S1}),
    _update("SET #missing = :x, #a = :x", {":x": S1}, {"#a": "a"}),
    _update("SET #missing = :x", {":x": S1}),  # no names at all
    _update("SET pk = :x", {":x": S1}),  # the hash key
    _update("SET a = :x,", {":x": S1}),  # does not parse
    _update("SET a = ", {":x": S1}),
    _update("SET n = n + :s", {":s": S1}),  # a string added to a number
    _update("ADD tags :one", {":one": N1}),  # a number added to a string set
    _update("SET b = list_append(if_not_exists(b, :empty), :l)", {":empty": {"L": []}, ":l": {"L": [S1]}}),
    _update("SET a = :x", {":x": S1, ":never": {"N": "42"}}, condition="n = :never"),  # condition fails
    _update("SET a = :x", {":x": S1}, condition="attribute_not_exists(pk)", sk="fresh"),
    _update("SET a = :x REMOVE q DELETE tags :t", {":x": S1, ":t": SS}),
    _update("SET a = :x", {":x": {"S": ""}}, sk=""),  # an empty key
    ("put_item", {"TableName": TABLE, "Item": {**_key("slot#1"), "holder": S1},
                  "ConditionExpression": "attribute_not_exists(pk)"}),
    ("put_item", {"TableName": TABLE, "Item": {**_key("slot#1"), "holder": S1},
                  "ConditionExpression": "attribute_not_exists(pk)"}),  # taken
    ("put_item", {"TableName": TABLE, "Item": {**_key("slot#1"), "holder": {"S": "two"}, "version": {"N": "2"}},
                  "ConditionExpression": "version = :v", "ExpressionAttributeValues": {":v": N1}}),
    ("transact_write_items", {"TransactItems": [
        {"Update": _update("SET n = n + :one", {":one": N1})[1] | {"ReturnValues": None}},
        {"Update": _update("SET a = :x, a = :y", {":x": S1, ":y": S1}, sk="y")[1] | {"ReturnValues": None}}]}),
    _update("SET big = :big", {":big": {"L": [{"S": "é" * 1000}] * 150}}),  # over 400 KB: refused
    _update("SET big = :big", {":big": {"M": {f"k{i}": {"L": [{"S": "x" * 990}]} for i in range(350)}}}),  # under
    _update("SET big2 = :big", {":big": {"M": {"m": {"M": {f"k{i}": {"SS": ["x" * 500, "y" * 500]}
                                                            for i in range(60)}}}}}),  # sets in a nested map
    _update("SET a = :x, n = :one", {":x": S1, ":one": N1}, table=STREAMED),
    _update("SET n = n + :one ADD tags :t", {":one": N1, ":t": SS}, table=STREAMED),
    _update("REMOVE a", table=STREAMED),
]


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_none(v) for v in value]
    return value


def _outcome(call: Any) -> Any:
    try:
        answer = call()
    except ClientError as exc:
        return ("error", exc.response["Error"].get("Code"), exc.response["Error"].get("Message"),
                exc.response.get("CancellationReasons"))
    except Exception as exc:  # noqa: BLE001 - whatever moto raises, it must raise the same
        return ("raised", type(exc).__name__, str(exc))
    if isinstance(answer, dict):
        answer.pop("ResponseMetadata", None)
    return ("answer", answer)


def _play(ddb: Any) -> list[Any]:
    store = Store(dynamodb=ddb, s3=None, table=TABLE, bucket="unused")
    outcomes: list[Any] = []
    for _round in range(2):
        for op, request in REQUESTS:
            outcomes.append(_outcome(lambda op=op, request=request: getattr(ddb, op)(**_without_none(request))))
        for seq, done in ((0, False), (1, False), (2, True), (2, True)):  # the last one is stale
            outcomes.append(_outcome(lambda seq=seq, done=done: store.commit_progress(
                RUN, "u1", seq=seq, cursor={"page": seq}, blocks=8, bytes_=8192, seconds=0.5, method="heap",
                done=done, planned_bytes=65536, retries=1, gone=("seg", 0, 1, 8192, "truncated") if seq == 1
                else None, reconnects=seq, longest_outage_seconds=1.5 if seq else None)))
        outcomes.append(_outcome(lambda: store.fail_unit(RUN, "u2", error="E", cause="why")))
        outcomes.append(_outcome(lambda: store.fail_unit(RUN, "u2", error="E", cause="again")))
        outcomes.append(_outcome(lambda: store.update_run(RUN, units_done=3, bytes_read=5)))
        outcomes.append(_outcome(lambda: store.claim_storage_sample(RUN, "2026-01-01T00:00:00+00:00", 60)))
    items = sorted(ddb.scan(TableName=TABLE)["Items"], key=lambda i: i["sk"]["S"])
    from moto.dynamodb.models import dynamodb_backends  # the stream as moto keeps it (its streams API: not here)

    shard = dynamodb_backends["123456789012"]["us-east-1"].tables[STREAMED].stream_shard
    records = [(r.record["eventName"], r.record["dynamodb"].get("OldImage"), r.record["dynamodb"].get("NewImage"))
               for r in shard.items]
    return [outcomes, items, records]


@contextmanager
def _moto(monkeypatch: pytest.MonkeyPatch, cuts: bool) -> Iterator[Any]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    monkeypatch.setattr(store_module, "now_iso", lambda: "2026-11-28T12:00:00+00:00")
    with mock_aws(), ExitStack() as patches:
        if cuts:
            for cache in (moto_fast._TREES, moto_fast._TREES_BY_ID, moto_fast._PASSED):
                cache.clear()  # nothing cached by another test
            for patch in (*moto_dynamodb.serialise_dynamodb(), *moto_fast.patches()):
                patches.enter_context(patch)
        ddb = boto3.client("dynamodb", region_name="us-east-1")
        ddb.create_table(**table_definition(TABLE))
        ddb.create_table(**{**table_definition(STREAMED), "TableName": STREAMED,
                            "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}})
        yield ddb


def test_the_cuts_answer_as_moto_does(monkeypatch):
    with _moto(monkeypatch, cuts=False) as ddb:
        plain = _play(ddb)
    with _moto(monkeypatch, cuts=True) as ddb:
        cut = _play(ddb)
    errors = {o[2] for o in plain[0] if o[0] == "error"}
    assert {"The document path provided in the update expression is invalid for update",
            "The conditional request failed"} & errors  # the invalid ones were refused
    assert any("Two document paths overlap" in e for e in errors if e)
    assert any('The "SET" section can only be used once' in e for e in errors if e)
    assert plain[2]  # the streamed table's updates were recorded
    assert cut[0] == plain[0]
    assert cut[1] == plain[1]
    assert cut[2] == plain[2]


def test_the_whole_tree_checks_are_skipped_only_where_they_passed(monkeypatch):
    """The cut is there: a tree and names that passed are not checked again; other names are."""
    from moto.dynamodb.parsing import validators

    calls: list[str] = []
    original = validators.ActionCountValidator.verify_action_counts

    def counted(self: Any, node: Any) -> Any:
        calls.append(type(node).__name__)
        return original(self, node)

    monkeypatch.setattr(validators.ActionCountValidator, "verify_action_counts", counted)
    with _moto(monkeypatch, cuts=True) as ddb:
        op, request = _update("SET #a = :x, #b = :y", {":x": S1, ":y": S1}, {"#a": "a", "#b": "b"})
        ddb.update_item(**request)
        first = len(calls)
        ddb.update_item(**request)
        assert first > 0 and len(calls) == first
        with pytest.raises(ClientError, match="Two document paths overlap"):
            ddb.update_item(**{**request, "ExpressionAttributeNames": {"#a": "a", "#b": "a"}})


def test_sizes_are_moto_s():
    """``_sizes_without_copies`` counts what moto's ``DynamoType.size`` counts, value for value."""
    from moto.dynamodb.models.dynamo_type import DynamoType

    values = [{"S": "é☃x"}, {"N": "-12.50"}, {"B": b"\x00\x01"}, {"BOOL": True}, {"BOOL": False}, {"NULL": True},
              {"SS": ["a", "bé"]}, {"NS": ["1", "2.5"]}, {"BS": [b"ab"]}, {"L": []}, {"M": {}},
              {"L": [{"S": "a"}, {"N": "3"}, {"M": {"k": {"L": [{"BOOL": True}, {"SS": ["z"]}]}}}]},
              {"M": {"é": {"M": {"x": {"L": [{"M": {"y": {"NULL": True}}}]}}}, "n": {"N": "1e5"}}}]
    expected = [DynamoType(v).size() for v in values]
    mapped = DynamoType({"M": {"m": {"S": "v"}}})
    mapped.value["raw"] = {"L": [{"S": "abc"}]}  # a member that is not a DynamoType (moto makes one to size it)
    expected.append(mapped.size())
    with moto_fast._sizes_without_copies():
        assert [DynamoType(v).size() for v in values] + [mapped.size()] == expected
