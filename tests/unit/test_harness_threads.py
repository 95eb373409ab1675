"""moto's DynamoDB in the local harness is shared by threads: the Map's units write the run item while a poller (the
CLI's ``wait``, the local progress) reads it. The harness's lock (``local.moto_dynamodb.serialise_dynamodb``) must
cover the whole request, moto's serialization of the answer included: moto answers a GetItem with the live item,
which a concurrent UpdateItem changes in place. CI, 2026-11-28: ``RuntimeError: dictionary changed size during
iteration`` in moto's ``dynamo_to_dict`` under ``Store.get_run``, while an UpdateItem added an attribute
(test_remote_cli)."""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack

import boto3
from moto import mock_aws

from cutover_prep.local import moto_dynamodb
from cutover_prep.workflows import table_definition

TABLE = "cutover-prep-local"
KEY = {"pk": {"S": "RUN#r1"}, "sk": {"S": "RUN"}}


def test_a_get_item_is_answered_whole_while_another_thread_adds_attributes() -> None:
    with mock_aws(), ExitStack() as patches:
        for patch in moto_dynamodb.serialise_dynamodb():
            patches.enter_context(patch)
        ddb = boto3.client("dynamodb", region_name="us-east-1")
        ddb.create_table(**table_definition(TABLE))
        # an item the size of a run item (its plan summary, its estimate): its answer takes a while to build
        ddb.put_item(TableName=TABLE, Item={**KEY, "plan": {"M": {f"k{i}": {"L": [{"N": str(j)} for j in range(20)]}
                                                                 for i in range(200)}}})
        stop, errors, reads = threading.Event(), [], [0]

        def writer() -> None:
            i = 0
            while not stop.is_set():  # each update adds an attribute the item did not have
                ddb.update_item(TableName=TABLE, Key=KEY, UpdateExpression="SET #a = :v",
                                ExpressionAttributeNames={"#a": f"a{i}"}, ExpressionAttributeValues={":v": {"N": "1"}})
                i += 1

        thread = threading.Thread(target=writer)
        thread.start()
        try:
            deadline = time.monotonic() + 3.0
            while time.monotonic() < deadline:
                try:
                    item = ddb.get_item(TableName=TABLE, Key=KEY, ConsistentRead=True)["Item"]
                    assert len(item["plan"]["M"]) == 200
                    reads[0] += 1
                except RuntimeError as exc:  # moto's serializer, beside a write
                    errors.append(str(exc))
        finally:
            stop.set()
            thread.join()
        assert errors == [] and reads[0] > 0, (errors[:3], reads[0])
