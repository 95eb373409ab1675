"""Findings store: runs and work units in DynamoDB, evidence in S3.

Table layout (single table; the key schema ``TABLE_KEYS`` and ``table_definition()`` are in
``workflows.py``, which the CDK storage construct and the local harness create the table from):

- run:  ``pk=RUN#<run_id>``, ``sk=RUN``; listed per DB instance newest first through the
  ``by_target`` index (``gsi1pk=DB#<instance>``, ``gsi1sk=<started_at>#<run_id>``). It keeps the run
  input's ``target`` and ``restore`` and, under ``input``, its ``warmup``, ``benchmark`` and ``verdict``
  sections in the input's own names (``recorded_input`` reads them; ``verdict`` itself is the verdict
  Finalize reaches).
- unit: ``pk=RUN#<run_id>``, ``sk=UNIT#<unit_id>``; status, cursor, blocks/bytes read.
- scratch object of the opt-in write test: ``pk=RUN#<run_id>``, ``sk=SCRATCH#<name>``;
  registered before it is created, then REMOVED, LEFT or NOT_CREATED (see ``scratch.py``).
- benchmark point and probe: ``pk=RUN#<run_id>``, ``sk=POINT#<point_id>`` (probes are the
  points ``probe-cold`` and ``probe-warm``); its window, rates and latency summary.
- warm-up concurrency control: ``pk=RUN#<run_id>``, ``sk=WARMUP#CONTROL``; the level, the units
  holding a slot, the windows' samples and the sizing rate (``warmup/slots.py``), written whole
  under a version check (``put_warmup_control``).
- RDS storage progress sample: ``pk=RUN#<run_id>``, ``sk=RDSINIT#<at>#<step>``; ``at``, ``step``,
  ``status`` (StorageOperationStatus) and ``percent`` (StorageOperationPercentProgress), each None when
  RDS reported none, or ``gap`` (the error code) when it could not be read. ``sk=RDSINIT-CLAIM`` holds
  the time of the last sample the warm-up took (at most one per interval across all units).

Progress is committed per chunk in one transaction that moves the unit's cursor
(guarded by a sequence number, so a chunk is counted once even when an invocation is
retried) and adds the same bytes to the run's counters, which is what a progress bar
reads while the run is going.

S3: ``runs/<run_id>/plan.json``, ``units.json`` (the Map's items: a JSON array, one unit a line), ``findings.json``;
the censuses of the volume, the plan's segments and what Finalize found of each, and the unread objects as JSON Lines
(``census-start.jsonl``, ``census-end.jsonl``, ``plan-segments.jsonl``, ``segments.jsonl``, ``census-unread.jsonl``),
each written in parts and read as a stream (``dal.jsonlines``, ``Store.json_lines``, ``Store.json_array``), so that
no step holds a whole census or plan in memory to write or read it (issue 32).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from datetime import datetime, timedelta
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from cutover_prep.dal import records
from cutover_prep.dal.deployment import DeploymentTable
from cutover_prep.dal.dynamo import dyn as _dyn
from cutover_prep.dal.dynamo import failed_condition, now_iso, set_expression
from cutover_prep.dal.dynamo import item_of as _item
from cutover_prep.dal.dynamo import plain as _plain  # noqa: F401  (read by the local harness)
from cutover_prep.dal.jsonlines import JSON_LINES_READ_BYTES, JsonLinesWriter, array_rows
from cutover_prep.dal.records import evidence
from cutover_prep.dal.records.base import Record
from cutover_prep.dal.records.run import (
    INPUT_SECTIONS,
    NAMES_BEFORE_52,
    PointItem,
    RecordedInput,
    RunItem,
    ScratchItem,
    StorageSample,
    WarmupControl,
)
from cutover_prep.dal.records.units import UnitProgress
from cutover_prep.models.status import RunStatus, UnitStatus
from cutover_prep.models.thresholds import Thresholds
from cutover_prep.workflows import TABLE_KEYS, table_definition  # noqa: F401  (the key schema, written once)

RUN_SK = "RUN"
UNIT_PREFIX = "UNIT#"
POINT_PREFIX = "POINT#"
SCRATCH_PREFIX = "SCRATCH#"
WARMUP_CONTROL_SK = "WARMUP#CONTROL"
STORAGE_SAMPLE_PREFIX = "RDSINIT#"
STORAGE_CLAIM_SK = "RDSINIT-CLAIM"  # not under the prefix: never read as a sample

__all__ = ["INPUT_SECTIONS", "DeploymentTable", "Store", "now_iso", "records"]


def recorded_input(run_item: RunItem) -> RecordedInput:
    """The run input's sections as the run item records them (``records.run.RecordedInput``)."""
    return RecordedInput.of(run_item)


def recorded_thresholds(run_item: RunItem) -> Thresholds:
    """The verdict's thresholds the run item records (what Finalize judges by)."""
    return RecordedInput.of(run_item).thresholds()


def read_object(s3: Any, bucket: str, key: str) -> bytes | None:
    """An object's bytes, read with the caller's own S3 client (the command line's credentials: a deployed
    run's findings and report); None when there is no such object."""
    try:
        return s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as exc:
        if exc.response["Error"]["Code"] in ("NoSuchKey", "404"):
            return None
        raise


class StaleProgress(Exception):
    """Another invocation already committed this unit's progress (or finished it)."""


MAX_CHUNK_SAMPLES = 1000  # [iso, bytes, seconds] is ~50 bytes: 50 KB at most per unit item


def run_pk(run_id: str) -> str:
    return f"RUN#{run_id}"


_Read = TypeVar("_Read", bound=Record)  # a record read from its item

# Written by ``cutover-prep local`` alone (the emulated restored volume's evidence); Finalize reads it.
EMULATION_EVIDENCE = evidence.STORAGE_EMULATION


def evidence_key(run_id: str, name: str) -> str:
    """The S3 key of a run's evidence object ``name`` (``records.evidence``)."""
    return evidence.key(run_id, name)


class Store:
    """A run's records in DynamoDB and its evidence in S3; the deployment's items through ``deployment``
    (``dal.deployment``). Clients are injected (boto3 in Lambda, moto in tests) and not exposed."""

    def __init__(self, *, dynamodb: Any, s3: Any, table: str, bucket: str) -> None:
        self._ddb, self._s3, self.table, self.bucket = dynamodb, s3, table, bucket
        self.deployment = DeploymentTable(dynamodb=dynamodb, table=table)

    # -- runs --------------------------------------------------------------------------
    def start_run(self, config: dict[str, Any]) -> bool:
        """Create the run item; on a restart of the same run id mark it RUNNING again, with this
        attempt's options (``dal.restart.check_restart`` has made sure only those that may change do).

        Returns True when the run is new."""
        run_id, target = config["run_id"], config["target"]
        item = RunItem.new(
            pk=run_pk(run_id), sk=RUN_SK, run_id=run_id, status=RunStatus.RUNNING, step="validated",
            gsi1pk=f"DB#{target['db_instance_identifier']}", gsi1sk=f"{config['started_at']}#{run_id}",
            target=target, restore=config.get("restore"),
            input={s: config.get(s) or {} for s in INPUT_SECTIONS},
            started_at=config["started_at"], updated_at=now_iso(), restarts=0,
            units_done=0, units_failed=0, bytes_read=0, blocks_read=0,
            **({"started_by": config["started_by"]} if config.get("started_by") else {}),
        )
        try:
            self._ddb.put_item(TableName=self.table, Item={k: _dyn(v) for k, v in item.stored().items()},
                               ConditionExpression="attribute_not_exists(pk)")
            return True
        except ClientError as exc:
            if not failed_condition(exc):
                raise
        old_names = {f"#old{i}": name for i, name in enumerate(NAMES_BEFORE_52.values())}
        self._ddb.update_item(  # a record of before decision 52 is rewritten in the new names
            TableName=self.table, Key=self._key(run_id, RUN_SK),
            UpdateExpression="SET #s = :running, updated_at = :now, units_failed = :zero, #e = :null, #i = :i "
                             f"REMOVE {', '.join(old_names)} ADD restarts :one",
            ExpressionAttributeNames={"#s": "status", "#e": "error", "#i": "input", **old_names},
            ExpressionAttributeValues={":running": _dyn(RunStatus.RUNNING), ":now": _dyn(now_iso()),
                                       ":zero": _dyn(0), ":one": _dyn(1), ":null": {"NULL": True},
                                       ":i": _dyn(item.stored()["input"])},
        )
        return False

    def update_run(self, run_id: str, **attrs: Any) -> None:
        """Set ``attrs`` of the run item (``RunItem``'s names; checked: a name it does not know is refused)."""
        unknown = sorted(set(attrs) - set(RunItem.model_fields))
        if unknown:
            raise TypeError(f"update_run: the run item has no attribute {', '.join(unknown)} (records.run.RunItem)")
        self._ddb.update_item(TableName=self.table, Key=self._key(run_id, RUN_SK),
                              **set_expression({**attrs, "updated_at": now_iso()}))

    def get_run(self, run_id: str) -> RunItem | None:
        raw = self._ddb.get_item(TableName=self.table, Key=self._key(run_id, RUN_SK), ConsistentRead=True)
        # an item update_run made alone has no run_id: its key's
        return RunItem.read({"run_id": run_id, **_item(raw["Item"])}) if "Item" in raw else None

    def get_run_fields(self, run_id: str, fields: tuple[str, ...]) -> RunItem | None:
        """Only ``fields`` of the run item (a ProjectionExpression): what a poller needs, not the whole item (its
        plan summary, estimate and hot-set ids), which moto serializes in the local run's own interpreter.
        The record's ``run_id`` is ``run_id`` when ``fields`` leaves it out."""
        raw = self._ddb.get_item(TableName=self.table, Key=self._key(run_id, RUN_SK), ConsistentRead=True,
                                ProjectionExpression=", ".join(f"#f{i}" for i in range(len(fields))),
                                ExpressionAttributeNames={f"#f{i}": name for i, name in enumerate(fields)})
        return RunItem.read({"run_id": run_id, **_item(raw["Item"])}) if "Item" in raw else None

    def runs_of_instance(self, db_instance_identifier: str, limit: int = 20) -> list[RunItem]:
        raw = self._ddb.query(
            TableName=self.table, IndexName=TABLE_KEYS["gsi"], Limit=limit, ScanIndexForward=False,
            KeyConditionExpression="gsi1pk = :pk",
            ExpressionAttributeValues={":pk": _dyn(f"DB#{db_instance_identifier}")},
        )
        return [RunItem.read(_item(i)) for i in raw["Items"]]

    # -- units -------------------------------------------------------------------------
    def get_unit(self, run_id: str, unit_id: str) -> UnitProgress | None:
        return self._get(run_id, UNIT_PREFIX + unit_id, UnitProgress)

    def units(self, run_id: str) -> Iterator[UnitProgress]:
        return self._children(run_id, UNIT_PREFIX, UnitProgress)

    # -- benchmark points --------------------------------------------------------------
    def put_point(self, run_id: str, point: PointItem) -> None:
        """The point (or probe) as measured (``PointItem.new``; None attributes left out)."""
        self._put(run_id, POINT_PREFIX + point.point_id, point)

    def get_point(self, run_id: str, point_id: str) -> PointItem | None:
        return self._get(run_id, POINT_PREFIX + point_id, PointItem)

    def points(self, run_id: str) -> Iterator[PointItem]:
        return self._children(run_id, POINT_PREFIX, PointItem)

    # -- scratch objects of the write test ---------------------------------------------
    def put_scratch(self, run_id: str, scratch: ScratchItem) -> None:
        self._put(run_id, SCRATCH_PREFIX + scratch.name, scratch)

    def scratch_objects(self, run_id: str) -> Iterator[ScratchItem]:
        return self._children(run_id, SCRATCH_PREFIX, ScratchItem)

    # -- RDS storage progress samples (rds/progress.py) ----------------------------
    def put_storage_sample(self, run_id: str, record: StorageSample) -> None:
        """One sample (``StorageSample.new``), written with UpdateItem (every step that samples may update items;
        not every one may put them); None attributes are left out."""
        attrs = {k: v for k, v in record.stored().items() if v is not None}
        self._ddb.update_item(TableName=self.table,
                              Key=self._key(run_id, f"{STORAGE_SAMPLE_PREFIX}{record.at}#{record.step}"),
                              **set_expression(attrs))

    def storage_samples(self, run_id: str) -> list[StorageSample]:
        """The samples in time order (``StorageSample.summary()``: what this returned before the records)."""
        return list(self._children(run_id, STORAGE_SAMPLE_PREFIX, StorageSample))

    def claim_storage_sample(self, run_id: str, at: str, min_interval_seconds: float) -> bool:
        """True for the one caller that may sample now: no sample was claimed in the last
        ``min_interval_seconds`` (a conditional update of the claim item, so concurrent units agree)."""
        cutoff = (datetime.fromisoformat(at) - timedelta(seconds=min_interval_seconds)).isoformat()
        try:
            self._ddb.update_item(
                TableName=self.table, Key=self._key(run_id, STORAGE_CLAIM_SK),
                UpdateExpression="SET claimed_at = :at",
                ConditionExpression="attribute_not_exists(claimed_at) OR claimed_at <= :cutoff",
                ExpressionAttributeValues={":at": _dyn(at), ":cutoff": _dyn(cutoff)})
        except ClientError as exc:
            if failed_condition(exc):
                return False
            raise
        return True

    def _get(self, run_id: str, sk: str, record: type[_Read]) -> _Read | None:
        """The item ``sk`` of the run read as ``record`` (None: there is none)."""
        raw = self._ddb.get_item(TableName=self.table, Key=self._key(run_id, sk), ConsistentRead=True)
        return record.read(_item(raw["Item"])) if "Item" in raw else None

    def _put(self, run_id: str, sk: str, record: records.run.TableItem) -> None:
        item = {"pk": run_pk(run_id), "sk": sk, "updated_at": now_iso(), **record.stored()}
        self._ddb.put_item(TableName=self.table, Item={k: _dyn(v) for k, v in item.items() if v is not None})

    def _children(self, run_id: str, prefix: str, record: type[_Read]) -> Iterator[_Read]:
        """The run's items whose sort key starts with ``prefix``, each read as ``record``, in key order."""
        start = None
        while True:
            page = self._ddb.query(
                TableName=self.table, ConsistentRead=True,
                KeyConditionExpression="pk = :pk AND begins_with(sk, :prefix)",
                ExpressionAttributeValues={":pk": _dyn(run_pk(run_id)), ":prefix": _dyn(prefix)},
                **({"ExclusiveStartKey": start} if start is not None else {}))
            yield from (record.read(_item(i)) for i in page["Items"])
            if "LastEvaluatedKey" not in page:
                return
            start = page["LastEvaluatedKey"]

    def commit_progress(self, run_id: str, unit_id: str, *, seq: int, cursor: dict[str, Any] | None,
                        blocks: int, bytes_: int, seconds: float, method: str, done: bool,
                        planned_bytes: int, retries: int = 0,
                        gone: tuple[str, int, int, int, str] | None = None, reconnects: int = 0,
                        longest_outage_seconds: float | None = None, chunks: int = 1) -> None:
        """Move the unit's cursor from ``seq`` to ``seq + 1`` and count what was read, once.

        ``gone``: ``(segment key, range index, blocks, bytes, reason)`` of the chunk's planned blocks that no
        longer existed (``ReadResult.gone``; reason ``engines.base.GONE_TRUNCATED`` or ``GONE_REBUILT``),
        appended to the unit's ``gone`` and added to ``gone_blocks`` / ``gone_bytes``: neither read nor unread
        (``findings.coverage``).

        ``reconnects``: outages ridden out before this chunk (added); ``longest_outage_seconds``: the unit's
        longest so far (set when given: the unit's invocations run one after the other). ``chunks``: how many
        chunks the commit holds (``warmup.unit.Batch``: small ranges are committed together), added to the run's
        ``chunks_read``.

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
                                + (", gone = list_append(if_not_exists(gone, :empty), :gone)" if gone else "")
                                + (", longest_outage_seconds = :outage" if longest_outage_seconds is not None else "")
                                + " ADD blocks_read :blocks, bytes_read :bytes, seconds :secs, retries :retries"
                                + (", gone_blocks :gone_blocks, gone_bytes :gone_bytes" if gone else "")
                                + (", reconnects :reconnects" if reconnects else ""),
            "ConditionExpression": "(attribute_not_exists(seq) AND :seq = :zero) OR (seq = :seq AND #s <> :done)",
            "ExpressionAttributeNames": {"#s": "status", "#c": "cursor", "#m": "method"},
            "ExpressionAttributeValues": {
                ":status": _dyn(UnitStatus.DONE if done else UnitStatus.RUNNING), ":next": _dyn(seq + 1),
                ":seq": _dyn(seq),
                ":zero": _dyn(0), ":done": _dyn(UnitStatus.DONE), ":cursor": _dyn(cursor) if cursor else {"NULL": True},
                ":method": _dyn(method), ":now": _dyn(now), ":blocks": _dyn(blocks), ":bytes": _dyn(bytes_),
                ":secs": _dyn(round(seconds, 3)), ":planned": _dyn(planned_bytes), ":retries": _dyn(retries),
                **({":empty": {"L": []}, ":chunk": {"L": [_dyn([now, bytes_, round(seconds, 3)])]}}
                   if seq < MAX_CHUNK_SAMPLES else {}),
                **({":empty": {"L": []}, ":gone": {"L": [_dyn(list(gone))]}, ":gone_blocks": _dyn(gone[2]),
                    ":gone_bytes": _dyn(gone[3])} if gone else {}),
                **({":reconnects": _dyn(reconnects)} if reconnects else {}),
                **({":outage": _dyn(round(longest_outage_seconds, 3))} if longest_outage_seconds is not None else {}),
            },
        }
        run_update = {
            "Key": self._key(run_id, RUN_SK), "TableName": self.table,
            # chunks_read: how many chunks all units committed (the concurrency controller's window, slots.py)
            "UpdateExpression": "SET updated_at = :now ADD bytes_read :bytes, blocks_read :blocks, chunks_read :chunk"
                                + (", units_done :one" if done else "")
                                + (", bytes_gone :gone_bytes" if gone else ""),  # no longer to read (steps.live_emit)
            "ExpressionAttributeValues": {":now": _dyn(now), ":bytes": _dyn(bytes_), ":blocks": _dyn(blocks),
                                          ":chunk": _dyn(chunks if bytes_ else 0),
                                          **({":one": _dyn(1)} if done else {}),
                                          **({":gone_bytes": _dyn(gone[3])} if gone else {})},
        }
        try:
            self._ddb.transact_write_items(TransactItems=[{"Update": unit_update}, {"Update": run_update}])
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
            "ExpressionAttributeValues": {":failed": _dyn(UnitStatus.FAILED), ":done": _dyn(UnitStatus.DONE),
                                          ":error": _dyn(error), ":cause": _dyn(cause[:2000]), ":now": _dyn(now)},
        }
        run_update = {
            "Key": self._key(run_id, RUN_SK), "TableName": self.table,
            "UpdateExpression": "SET updated_at = :now ADD units_failed :one",
            "ExpressionAttributeValues": {":now": _dyn(now), ":one": _dyn(1)},
        }
        try:
            self._ddb.transact_write_items(TransactItems=[{"Update": unit_update}, {"Update": run_update}])
            return True
        except ClientError as exc:
            if exc.response["Error"]["Code"] == "TransactionCanceledException":
                return False
            raise

    # -- warm-up concurrency control (warmup/slots.py) ----------------------------------
    def get_warmup_control(self, run_id: str) -> WarmupControl | None:
        return self._get(run_id, WARMUP_CONTROL_SK, WarmupControl)

    def put_warmup_control(self, run_id: str, control: WarmupControl, *, version: int | None) -> bool:
        """Write the control item as ``version + 1`` if it is still at ``version`` (None: only if there is none).
        False when another writer came first: read it again and decide again."""
        record = WarmupControl.new(**{**control.state(), "pk": run_pk(run_id), "sk": WARMUP_CONTROL_SK,
                                      "version": (version or 0) + 1, "updated_at": now_iso()})
        condition = ({"ConditionExpression": "attribute_not_exists(pk)"} if version is None else
                     {"ConditionExpression": "version = :v", "ExpressionAttributeValues": {":v": _dyn(version)}})
        try:
            self._ddb.put_item(TableName=self.table,
                               Item={k: _dyn(v) for k, v in record.stored().items() if v is not None}, **condition)
            return True
        except ClientError as exc:
            if failed_condition(exc):
                return False
            raise

    # -- evidence in S3 ----------------------------------------------------------------
    def put_json(self, key: str, data: Any) -> str:
        self._s3.put_object(Bucket=self.bucket, Key=key, ContentType="application/json",
                           Body=json.dumps(data, indent=1, default=str).encode())
        return key

    def get_json(self, key: str) -> Any:
        return json.loads(self._s3.get_object(Bucket=self.bucket, Key=key)["Body"].read())

    def put_text(self, key: str, text: str, content_type: str) -> str:
        """A text object (a page, Markdown, CSV): ``records.evidence`` names its content type."""
        self._s3.put_object(Bucket=self.bucket, Key=key, ContentType=content_type, Body=text.encode())
        return key

    def uri(self, key: str) -> str:
        return f"s3://{self.bucket}/{key}"

    def json_lines_writer(self, key: str) -> JsonLinesWriter:
        """A JSON Lines object written row by row, in parts (``with store.json_lines_writer(key) as w: w.write(r)``)."""
        return JsonLinesWriter(self._s3, self.bucket, key)

    def json_array_writer(self, key: str) -> JsonLinesWriter:
        """A JSON array written item by item, in parts, one item a line (``units.json``: the Map's ItemReader reads
        it as JSON, ``json_array`` as a stream)."""
        return JsonLinesWriter(self._s3, self.bucket, key, array=True)

    def json_array(self, key: str) -> Iterator[Any]:
        """The items of a JSON array: streamed when ``json_array_writer`` wrote it (one item a line), else (an
        object ``put_json`` wrote, e.g. a run of before) parsed whole."""
        return array_rows(self._s3.get_object(Bucket=self.bucket, Key=key)["Body"])

    def put_json_lines(self, key: str, rows: Iterable[Any]) -> int:
        """Write ``rows`` as one JSON Lines object, in parts; the number of rows."""
        with self.json_lines_writer(key) as writer:
            for row in rows:
                writer.write(row)
        return writer.rows

    def json_lines(self, key: str) -> Iterator[Any]:
        """The rows of a JSON Lines object, read as a stream (one read buffer and one row in memory)."""
        body = self._s3.get_object(Bucket=self.bucket, Key=key)["Body"]
        rest = b""
        try:
            while chunk := body.read(JSON_LINES_READ_BYTES):
                lines = (rest + chunk).split(b"\n")
                rest = lines.pop()
                yield from (json.loads(line) for line in lines if line)
            if rest.strip():
                yield json.loads(rest)
        finally:
            body.close()

    def exists(self, key: str) -> bool:
        try:
            self._s3.head_object(Bucket=self.bucket, Key=key)
            return True
        except ClientError as exc:
            if exc.response["Error"]["Code"] in ("404", "NoSuchKey", "NotFound"):
                return False
            raise

    @staticmethod
    def _key(run_id: str, sk: str) -> dict[str, Any]:
        return {"pk": _dyn(run_pk(run_id)), "sk": _dyn(sk)}
