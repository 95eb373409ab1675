"""moto's DynamoDB with the local harness's patches (what ``LocalAws`` starts), for the harness's unit tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

import boto3
import pytest
from moto import mock_aws

from cutover_prep.local.moto_dynamodb import serialise_dynamodb
from cutover_prep.workflows import table_definition


@contextmanager
def harness_dynamodb(monkeypatch: pytest.MonkeyPatch, table: str, *items: dict[str, Any]) -> Iterator[Any]:
    """A DynamoDB client on moto with the harness's patches, the run table ``table`` and ``items`` in it."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    with mock_aws(), ExitStack() as patches:
        for patch in serialise_dynamodb():
            patches.enter_context(patch)
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**table_definition(table))
        for item in items:
            client.put_item(TableName=table, Item=item)
        yield client
