"""Findings store: runs and work units in DynamoDB, evidence in S3.

Table layout (single table, see ``TABLE_KEYS``; the CDK storage construct creates the
same keys):

- run:  ``pk=RUN#<run_id>``, ``sk=RUN``; listed per DB instance newest first through the
  ``by_target`` index (``gsi1pk=DB#<instance>``, ``gsi1sk=<started_at>#<run_id>``).
- unit: ``pk=RUN#<run_id>``, ``sk=UNIT#<unit_id>``; status, cursor, blocks/bytes read.
- benchmark point and probe: ``pk=RUN#<run_id>``, ``sk=POINT#<point_id>`` (probes are the
  points ``probe-cold`` and ``probe-warm``); its window, rates and latency summary.

Progress is committed per chunk in one transaction that moves the unit's cursor
(guarded by a sequence number, so a chunk is counted once even when an invocation is
retried) and adds the same bytes to the run's counters, which is what a progress bar
reads while the run is going.

S3: ``runs/<run_id>/plan.json``, ``units.json`` (the Map's items), ``findings.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.exceptions import ClientError

TABLE_KEYS = {"pk": "pk", "sk": "sk", "gsi": "by_target", "gsi_pk": "gsi1pk", "gsi_sk": "gsi1sk"}
RUN_SK = "RUN"
UNIT_PREFIX = "UNIT#"
POINT_PREFIX = "POINT#"

_ser = TypeSerializer()
_deser = TypeDeserializer()


class StaleProgress(Exception):
    """Another invocation already committed this unit's progress (or finished it)."""


MAX_CHUNK_SAMPLES = 1000  # [iso, bytes, seconds] is ~50 bytes: 50 KB at most per unit item


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


def run_pk(run_id: str) -> str:
    return f"RUN#{run_id}"


def evidence_key(run_id: str, name: str) -> str:
    return f"runs/{run_id}/{name}"


def _plain(value: Any) -> Any:
    """DynamoDB numbers come back as Decimal; make them int/float for JSON."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | set):
        return [_plain(v) for v in value]
    return value


def _dyn(value: Any) -> dict[str, Any]:
    if isinstance(value, float):
        value = Decimal(str(value))
    elif isinstance(value, dict | list):
        value = json.loads(json.dumps(value), parse_float=Decimal)
    return _ser.serialize(value)


def _item(raw: dict[str, Any]) -> dict[str, Any]:
    return _plain({k: _deser.deserialize(v) for k, v in raw.items()})


class Store:
    """DynamoDB + S3 access. Clients are injected (boto3 in Lambda, moto in tests)."""

    def __init__(self, *, dynamodb: Any, s3: Any, table: str, bucket: str) -> None:
        self.ddb, self.s3, self.table, self.bucket = dynamodb, s3, table, bucket

    # -- runs --------------------------------------------------------------------------
    def start_run(self, config: dict[str, Any]) -> bool:
        """Create the run item; on a restart of the same run id mark it RUNNING again.

        Returns True when the run is new."""
        run_id, target = config["run_id"], config["target"]
        item = {
            "pk": run_pk(run_id), "sk": RUN_SK, "run_id": run_id, "status": "RUNNING", "step": "validated",
            "gsi1pk": f"DB#{target['db_instance_identifier']}", "gsi1sk": f"{config['started_at']}#{run_id}",
            "target": target, "restore": config.get("restore"), "options": config.get("warmup", {}),
            "benchmark_options": config.get("benchmark", {}), "verdict_options": config.get("verdict", {}),
            "started_at": config["started_at"], "updated_at": now_iso(), "restarts": 0,
            "units_done": 0, "units_failed": 0, "bytes_read": 0, "blocks_read": 0,
        }
        try:
            self.ddb.put_item(TableName=self.table, Item={k: _dyn(v) for k, v in item.items()},
                              ConditionExpression="attribute_not_exists(pk)")
            return True
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
        self.ddb.update_item(
            TableName=self.table, Key=self._key(run_id, RUN_SK),
            UpdateExpression="SET #s = :running, updated_at = :now, units_failed = :zero, "
                             "#e = :null ADD restarts :one",
            ExpressionAttributeNames={"#s": "status", "#e": "error"},
            ExpressionAttributeValues={":running": _dyn("RUNNING"), ":now": _dyn(now_iso()),
                                       ":zero": _dyn(0), ":one": _dyn(1), ":null": {"NULL": True}},
        )
        return False

    def update_run(self, run_id: str, **attrs: Any) -> None:
        attrs["updated_at"] = now_iso()
        names = {f"#a{i}": k for i, k in enumerate(attrs)}
        values = {f":v{i}": _dyn(v) for i, v in enumerate(attrs.values())}
        self.ddb.update_item(
            TableName=self.table, Key=self._key(run_id, RUN_SK),
            UpdateExpression="SET " + ", ".join(f"#a{i} = :v{i}" for i in range(len(attrs))),
            ExpressionAttributeNames=names, ExpressionAttributeValues=values,
        )

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        raw = self.ddb.get_item(TableName=self.table, Key=self._key(run_id, RUN_SK), ConsistentRead=True)
        return _item(raw["Item"]) if "Item" in raw else None

    def runs_of_instance(self, db_instance_identifier: str, limit: int = 20) -> list[dict[str, Any]]:
        raw = self.ddb.query(
            TableName=self.table, IndexName=TABLE_KEYS["gsi"], Limit=limit, ScanIndexForward=False,
            KeyConditionExpression="gsi1pk = :pk",
            ExpressionAttributeValues={":pk": _dyn(f"DB#{db_instance_identifier}")},
        )
        return [_item(i) for i in raw["Items"]]

    # -- units -------------------------------------------------------------------------
    def get_unit(self, run_id: str, unit_id: str) -> dict[str, Any] | None:
        raw = self.ddb.get_item(TableName=self.table, Key=self._key(run_id, UNIT_PREFIX + unit_id),
                                ConsistentRead=True)
        return _item(raw["Item"]) if "Item" in raw else None

    def units(self, run_id: str) -> Iterator[dict[str, Any]]:
        return self._children(run_id, UNIT_PREFIX)

    # -- benchmark points --------------------------------------------------------------
    def put_point(self, run_id: str, point_id: str, attrs: dict[str, Any]) -> None:
        item = {"pk": run_pk(run_id), "sk": POINT_PREFIX + point_id, "point_id": point_id,
                "updated_at": now_iso(), **attrs}
        self.ddb.put_item(TableName=self.table, Item={k: _dyn(v) for k, v in item.items() if v is not None})

    def get_point(self, run_id: str, point_id: str) -> dict[str, Any] | None:
        raw = self.ddb.get_item(TableName=self.table, Key=self._key(run_id, POINT_PREFIX + point_id),
                                ConsistentRead=True)
        return _item(raw["Item"]) if "Item" in raw else None

    def points(self, run_id: str) -> Iterator[dict[str, Any]]:
        return self._children(run_id, POINT_PREFIX)

    def _children(self, run_id: str, prefix: str) -> Iterator[dict[str, Any]]:
        kwargs: dict[str, Any] = {
            "TableName": self.table, "ConsistentRead": True,
            "KeyConditionExpression": "pk = :pk AND begins_with(sk, :prefix)",
            "ExpressionAttributeValues": {":pk": _dyn(run_pk(run_id)), ":prefix": _dyn(prefix)},
        }
        while True:
            page = self.ddb.query(**kwargs)
            yield from (_item(i) for i in page["Items"])
            if "LastEvaluatedKey" not in page:
                return
            kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]

    def commit_progress(self, run_id: str, unit_id: str, *, seq: int, cursor: dict[str, Any] | None,
                        blocks: int, bytes_: int, seconds: float, method: str, done: bool,
                        planned_bytes: int) -> None:
        """Move the unit's cursor from ``seq`` to ``seq + 1`` and count what was read, once.

        Each chunk is also appended to the unit's ``chunks`` as ``[finished_at, bytes, seconds]``:
        the warm-up's progress over time in the report. Only the first ``MAX_CHUNK_SAMPLES`` are kept,
        which keeps the item far below DynamoDB's 400 KB (a planned unit has a few dozen chunks).
        """
        now = now_iso()
        unit_update = {
            "Key": self._key(run_id, UNIT_PREFIX + unit_id), "TableName": self.table,
            "UpdateExpression": "SET #s = :status, seq = :next, #c = :cursor, #m = :method, updated_at = :now, "
                                "bytes_planned = :planned, started_at = if_not_exists(started_at, :now)"
                                + (", chunks = list_append(if_not_exists(chunks, :empty), :chunk)"
                                   if seq < MAX_CHUNK_SAMPLES else "")
                                + (", finished_at = :now" if done else "")
                                + " ADD blocks_read :blocks, bytes_read :bytes, seconds :secs",
            "ConditionExpression": "(attribute_not_exists(seq) AND :seq = :zero) OR (seq = :seq AND #s <> :done)",
            "ExpressionAttributeNames": {"#s": "status", "#c": "cursor", "#m": "method"},
            "ExpressionAttributeValues": {
                ":status": _dyn("DONE" if done else "RUNNING"), ":next": _dyn(seq + 1), ":seq": _dyn(seq),
                ":zero": _dyn(0), ":done": _dyn("DONE"), ":cursor": _dyn(cursor) if cursor else {"NULL": True},
                ":method": _dyn(method), ":now": _dyn(now), ":blocks": _dyn(blocks), ":bytes": _dyn(bytes_),
                ":secs": _dyn(round(seconds, 3)), ":planned": _dyn(planned_bytes),
                **({":empty": {"L": []}, ":chunk": {"L": [_dyn([now, bytes_, round(seconds, 3)])]}}
                   if seq < MAX_CHUNK_SAMPLES else {}),
            },
        }
        run_update = {
            "Key": self._key(run_id, RUN_SK), "TableName": self.table,
            "UpdateExpression": "SET updated_at = :now ADD bytes_read :bytes, blocks_read :blocks"
                                + (", units_done :one" if done else ""),
            "ExpressionAttributeValues": {":now": _dyn(now), ":bytes": _dyn(bytes_), ":blocks": _dyn(blocks),
                                          **({":one": _dyn(1)} if done else {})},
        }
        try:
            self.ddb.transact_write_items(TransactItems=[{"Update": unit_update}, {"Update": run_update}])
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "TransactionCanceledException":
                raise StaleProgress(f"unit {unit_id}: progress {seq} was already committed") from None
            raise

    def fail_unit(self, run_id: str, unit_id: str, *, error: str, cause: str) -> bool:
        """Record a unit as FAILED (once). Returns False if it was already DONE or FAILED."""
        now = now_iso()
        unit_update = {
            "Key": self._key(run_id, UNIT_PREFIX + unit_id), "TableName": self.table,
            "UpdateExpression": "SET #s = :failed, #e = :error, cause = :cause, updated_at = :now, "
                                "finished_at = :now",
            "ConditionExpression": "attribute_not_exists(#s) OR (#s <> :failed AND #s <> :done)",
            "ExpressionAttributeNames": {"#s": "status", "#e": "error"},
            "ExpressionAttributeValues": {":failed": _dyn("FAILED"), ":done": _dyn("DONE"), ":error": _dyn(error),
                                          ":cause": _dyn(cause[:2000]), ":now": _dyn(now)},
        }
        run_update = {
            "Key": self._key(run_id, RUN_SK), "TableName": self.table,
            "UpdateExpression": "SET updated_at = :now ADD units_failed :one",
            "ExpressionAttributeValues": {":now": _dyn(now), ":one": _dyn(1)},
        }
        try:
            self.ddb.transact_write_items(TransactItems=[{"Update": unit_update}, {"Update": run_update}])
            return True
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "TransactionCanceledException":
                return False
            raise

    # -- evidence in S3 ----------------------------------------------------------------
    def put_json(self, key: str, data: Any) -> str:
        self.s3.put_object(Bucket=self.bucket, Key=key, ContentType="application/json",
                           Body=json.dumps(data, indent=1, default=str).encode())
        return key

    def get_json(self, key: str) -> Any:
        return json.loads(self.s3.get_object(Bucket=self.bucket, Key=key)["Body"].read())

    def exists(self, key: str) -> bool:
        try:
            self.s3.head_object(Bucket=self.bucket, Key=key)
            return True
        except ClientError as exc:
            if exc.response["Error"]["Code"] in ("404", "NoSuchKey", "NotFound"):
                return False
            raise

    @staticmethod
    def _key(run_id: str, sk: str) -> dict[str, Any]:
        return {"pk": _dyn(run_pk(run_id)), "sk": _dyn(sk)}
