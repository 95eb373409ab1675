"""moto's DynamoDB as the local harness runs it (``serialise_dynamodb``, started by ``LocalAws``): one lock around
the backend for the Map's threads, a transaction that backs up only the items it names, a projection that converts
only the attributes it names, AttributeValues handed to the JSON protocol as they are, and no copy of the item an
UpdateItem changes on a table without a stream. What moto answers does not change (tests/unit/test_harness_*.py:
transactions, projection, serialization, expressions)."""

from __future__ import annotations

import contextvars
import copy
import re
import threading
from collections.abc import Callable
from typing import Any, TypeAlias
from unittest import mock

DYNAMODB_CALLS = ("get_item", "put_item", "update_item", "delete_item", "query", "scan",
                  "transact_write_items", "transact_get_items", "batch_write_item", "batch_get_item")


def serialise_dynamodb() -> list[Any]:
    """moto's DynamoDB backend is not thread-safe (transactions deep-copy tables while
    other threads write; an answer is serialized from the live items); Lambda containers never share it, the local
    Map's threads do.
    Its transactions back up only the items they name (``_backing_up_items``)."""
    from moto.dynamodb import models
    from moto.dynamodb.models import DynamoDBBackend
    from moto.dynamodb.responses import DynamoHandler

    lock = threading.RLock()

    def guarded(method: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            with lock:
                return method(*args, **kwargs)

        return call

    def method(name: str) -> Callable[..., Any]:
        original = getattr(DynamoDBBackend, name)
        if name == "transact_write_items":
            return _backing_up_items(original)
        return _item_not_copied_without_stream(original) if name == "update_item" else original

    # the whole request under the lock, not only the backend's call: moto answers a GetItem (a Query, ...) with the
    # live items and serializes them after the call, while another thread's UpdateItem changes one in place ("dictionary
    # changed size during iteration", seen in CI under a CLI's polling read of the run item)
    return [mock.patch.object(models, "copy", _TablesNotCopied), _projecting_named_attributes(),
            _attribute_values_as_they_are(), *_update_answered_without_the_item(),
            mock.patch.object(DynamoHandler, "call_action", guarded(DynamoHandler.call_action)),
            *(mock.patch.object(DynamoDBBackend, name, guarded(method(name))) for name in DYNAMODB_CALLS)]


def _projecting_named_attributes() -> Any:
    """moto's ``Item.project`` (a GetItem, Query or Scan with a ProjectionExpression) converts the whole item to
    plain JSON (a deep copy, then boto3's deserializer) once for every path of the expression, then picks the path
    out of it. The local run's progress polls six fields of the run item once a second (``Store.get_run_fields``),
    and the run item carries the plan's summary and the estimate: seven conversions of all of it, in the run's own
    interpreter, beside the Map's threads (on ``make demo`` beside ``stress-ng --cpu 2``, 15 % of the runner's
    samples, issue 24 §5). A path only ever reads the attribute its first name is (moto's ``find_nested_key``:
    ``a.b`` and ``a[1]`` start at ``a``), so only those attributes are converted; what is projected is
    moto's own ``find_nested_key`` and ``merge_dicts`` on them, unchanged."""
    from botocore.utils import merge_dicts
    from moto.dynamodb.models import dynamo_type
    from moto.dynamodb.models.utilities import find_nested_key

    def project(item: Any, projection_expressions: list[list[str]]) -> Any:
        result: dict[str, Any] = {}
        for expr in projection_expressions:  # each path on a fresh conversion, as moto's own
            indexed = _LIST_ITEM.match(expr[0])
            names = (expr[0], indexed.group(1)) if indexed else (expr[0],)
            plain = {name: dynamo_type.deserializer.deserialize(item.attrs[name].to_regular_json())
                     for name in names if name in item.attrs}
            merge_dicts(result, find_nested_key(expr, plain))
        return dynamo_type.Item(hash_key=item.hash_key, range_key=item.range_key,
                                attrs=dynamo_type.serializer.serialize(result)["M"])

    return mock.patch.object(dynamo_type.Item, "project", project)


def _attribute_values_as_they_are() -> Any:
    """moto serializes a DynamoDB answer by walking the API model: every AttributeValue of every item is a structure
    of ten members (S, N, B, ..., M, L), each looked up through its attribute picker, nested values again, in the
    run's own interpreter. A Query of a run's 71 unit items (the local progress's ETA reads them once a second while
    the counters move) took 0.64-0.83 s of CPU, almost all of it there (issue 24 §5). An AttributeValue moto hands
    over is already what DynamoDB's JSON protocol sends: a one-key dict of a string, a number's string, a boolean,
    a string set, a map or a list of AttributeValues. Those are passed on as they are (copied); anything else (a
    binary, which the protocol base64-encodes, or a value of another type) goes the model's way, unchanged."""
    from moto.core.serialize import BaseJSONSerializer

    original = BaseJSONSerializer._serialize_type_structure

    def structure(self: Any, serialized: Any, value: Any, shape: Any, key: str) -> None:
        if key and shape.name == "AttributeValue" and self.operation_model.service_model.service_name == "dynamodb":
            plain = _plain_attribute_value(value)
            if plain is not None:
                self._default_serialize(serialized, plain, shape, key)
                return
        original(self, serialized, value, shape, key)

    return mock.patch.object(BaseJSONSerializer, "_serialize_type_structure", structure)


# An AttributeValue as DynamoDB's JSON protocol sends it: {"S": text}, {"N": digits}, {"BOOL": b}, {"NULL": true},
# {"SS": [text]}, {"NS": [digits]}, {"M": {name: AttributeValue}}, {"L": [AttributeValue]}
AttributeValue: TypeAlias = dict[str, "str | bool | list[str] | dict[str, AttributeValue] | list[AttributeValue]"]


def _plain_attribute_value(value: Any) -> AttributeValue | None:
    """The AttributeValue as DynamoDB's JSON protocol sends it; None when it is not one this can pass on as it is."""
    if not isinstance(value, dict) or len(value) != 1:
        return None
    (kind, inner), = value.items()
    if kind in ("S", "N"):
        return {kind: inner} if isinstance(inner, str) else None
    if kind in ("BOOL", "NULL"):
        return {kind: inner} if isinstance(inner, bool) else None
    if kind in ("SS", "NS"):
        return {kind: list(inner)} if isinstance(inner, list) and all(isinstance(v, str) for v in inner) else None
    if kind == "M" and isinstance(inner, dict):
        members = {name: _plain_attribute_value(v) for name, v in inner.items()}
        return None if any(v is None for v in members.values()) else {"M": members}
    if kind == "L" and isinstance(inner, list):
        elements = [_plain_attribute_value(v) for v in inner]
        return None if any(v is None for v in elements) else {"L": elements}
    return None


# True while moto answers an UpdateItem that returns no attributes (``_update_answered_without_the_item``)
_NO_ATTRIBUTES: contextvars.ContextVar[bool] = contextvars.ContextVar("cutover_prep_no_attributes", default=False)


def _update_answered_without_the_item() -> list[Any]:
    """moto's UpdateItem answer (``DynamoHandler.update_item``) deep-copies the item before the update and converts
    it to JSON whole before and after (``Item.to_json``, which deep-copies every nested value again), to pick the
    attributes ``ReturnValues`` asks for; with ``ReturnValues`` NONE (the default: every UpdateItem of the product's)
    it drops them all. The slot item (its windows' and the yield controller's samples) at every acquire and release:
    60 % of moto's time for the write (cProfile). Without ``ReturnValues`` other than NONE, without
    ``ReturnValuesOnConditionCheckFailure`` and on a table without a stream (whose record holds both images), the
    answer's conversions are empty and the item is not copied; the update, its checks and errors are moto's."""
    from moto.dynamodb import responses
    from moto.dynamodb.models.dynamo_type import Item
    from moto.dynamodb.responses import DynamoHandler

    original, to_json = DynamoHandler.update_item, Item.to_json

    def update_item(handler: Any) -> Any:
        body = handler.body
        table = handler.dynamodb_backend.tables.get(body.get("TableName"))
        if (body.get("ReturnValues", "NONE") != "NONE" or body.get("ReturnValuesOnConditionCheckFailure")
                or table is None or table.stream_shard is not None):
            return original(handler)
        token = _NO_ATTRIBUTES.set(True)
        try:
            return original(handler)
        finally:
            _NO_ATTRIBUTES.reset(token)

    def item_json(item: Any, root_attr_name: str = "Attributes") -> dict[str, Any]:
        return {root_attr_name: {}} if _NO_ATTRIBUTES.get() else to_json(item, root_attr_name)

    return [mock.patch.object(DynamoHandler, "update_item", update_item),
            mock.patch.object(Item, "to_json", item_json),
            mock.patch.object(responses, "copy", _NotCopiedWithoutAttributes)]


class _NotCopiedWithoutAttributes:
    """``copy`` as moto's DynamoDB answers see it: the item an UpdateItem answer would convert for nothing
    (``_update_answered_without_the_item``) is not copied."""

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        return value if _NO_ATTRIBUTES.get() else copy.deepcopy(value, memo)


_LIST_ITEM = re.compile(r"(.+)\[(\d+)\]$")  # moto's own pattern of a path's list element (``find_nested_key``)


# True while an UpdateItem runs on a table without a stream (``_item_not_copied_without_stream``)
_NO_STREAM: contextvars.ContextVar[bool] = contextvars.ContextVar("cutover_prep_no_stream", default=False)


def _item_not_copied_without_stream(update_item: Callable[..., Any]) -> Callable[..., Any]:
    """moto's UpdateItem deep-copies the item it updates (``orig_item``) before anything else, for the table's
    stream record only (``table.stream_shard.add(orig_item, item)``): the run item (the plan's summary, the
    estimate) and a unit's item (its chunks) at every commit. On a table without a stream (the harness's run
    table has none) that copy is the item itself (``_TablesNotCopied.deepcopy``), which nothing reads."""

    def call(backend: Any, table_name: str, *args: Any, **kwargs: Any) -> Any:
        table = backend.tables.get(table_name)
        token = _NO_STREAM.set(table is not None and table.stream_shard is None)
        try:
            return update_item(backend, table_name, *args, **kwargs)
        finally:
            _NO_STREAM.reset(token)

    return call


class _TablesNotCopied:
    """``copy`` as moto's DynamoDB backend sees it in the harness: a table "copied" is the table itself.
    moto backs up every table a transaction writes to with a deep copy of the whole table, for its
    rollback; a run commits each chunk in a transaction, so every commit copied every item of every
    unit and run so far: a run slowed down with each item it wrote (a 24 MB sample: 44 WarmUnit
    invocations, 700 s of them in the copy and the lock around it). ``_backing_up_items`` backs up
    the items the transaction names instead and puts them back when it is cancelled."""

    @staticmethod
    def deepcopy(value: Any, memo: dict[int, Any] | None = None) -> Any:
        from moto.dynamodb.models import Item, Table

        if isinstance(value, Table) or (isinstance(value, Item) and _NO_STREAM.get()):
            return value
        return copy.deepcopy(value, memo)


def _backing_up_items(transact: Callable[..., Any]) -> Callable[..., Any]:
    def transact_write_items(backend: Any, transact_items: list[dict[str, Any]]) -> Any:
        saved = []
        for entry in transact_items:
            try:
                op = next(iter(entry.values()))
                table = backend.get_table(op["TableName"])
                key = op.get("Key") or {name: op["Item"][name] for name in (table.hash_key_attr,
                                                                         table.range_key_attr) if name}
                hash_key, range_key = backend.get_keys_value(table, key)
            except Exception:  # noqa: BLE001 - malformed: moto refuses it with its own error, before writing it
                continue
            saved.append((table, hash_key, range_key, copy.deepcopy(table.get_item(hash_key, range_key))))
        try:
            return transact(backend, transact_items)
        except Exception:
            for table, hash_key, range_key, item in reversed(saved):  # as it was, in the reverse order
                items = table.items[hash_key] if range_key is not None else table.items
                slot = range_key if range_key is not None else hash_key
                if item is None:
                    items.pop(slot, None)
                else:
                    items[slot] = item
            raise

    return transact_write_items
