"""DynamoDB's side of ``dal``: typed attributes to and from plain JSON values, and the conditional writes
every store in ``dal`` makes (``Store`` for a run's items, ``DeploymentTable`` for the deployment's)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from decimal import Decimal
from enum import Enum
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

_ser = TypeSerializer()
_deser = TypeDeserializer()

Key = dict[str, dict[str, str]]  # a DynamoDB key: {"pk": {"S": ...}, "sk": {"S": ...}}


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def key_of(pk: str, sk: str) -> Key:
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def plain(value: Any) -> Any:
    """DynamoDB numbers come back as Decimal; make them int/float for JSON."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list | set):
        return [plain(v) for v in value]
    return value


def dyn(value: Any) -> dict[str, Any]:
    """A plain value as a DynamoDB attribute value (a float as a number, a status as its string)."""
    if isinstance(value, Enum):  # a status (StrEnum) is stored as its plain string
        value = value.value
    if isinstance(value, float):
        value = Decimal(str(value))
    elif isinstance(value, dict | list):
        value = json.loads(json.dumps(value), parse_float=Decimal)
    return _ser.serialize(value)


def item_of(raw: dict[str, Any]) -> dict[str, Any]:
    """A DynamoDB item as plain JSON values."""
    return plain({k: _deser.deserialize(v) for k, v in raw.items()})


def attributes(attrs: dict[str, Any]) -> dict[str, Any]:
    """A whole item's attributes as DynamoDB values (None left out)."""
    return {k: dyn(v) for k, v in attrs.items() if v is not None}


def set_expression(attrs: dict[str, Any]) -> dict[str, Any]:
    """``SET #a0 = :v0, ...`` of ``attrs`` (an UpdateItem's expression, names and values)."""
    return {"UpdateExpression": "SET " + ", ".join(f"#a{i} = :v{i}" for i in range(len(attrs))),
            "ExpressionAttributeNames": {f"#a{i}": k for i, k in enumerate(attrs)},
            "ExpressionAttributeValues": {f":v{i}": dyn(v) for i, v in enumerate(attrs.values())}}


def failed_condition(exc: ClientError) -> bool:
    """The write was refused by its condition (another writer came first), not failed otherwise."""
    return exc.response["Error"]["Code"] == "ConditionalCheckFailedException"
