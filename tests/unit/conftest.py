"""Unit-test fixtures: a real ``Store`` on moto (DynamoDB table + S3 bucket), no network."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from moto import mock_aws

from cutover_prep.dal.store import Store
from cutover_prep.workflows import table_definition

TABLE = "cutover-prep-test"
BUCKET = "cutover-prep-test-evidence"


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        ddb = boto3.client("dynamodb", region_name="us-east-1")
        s3 = boto3.client("s3", region_name="us-east-1")
        ddb.create_table(**table_definition(TABLE))
        s3.create_bucket(Bucket=BUCKET)
        yield Store(dynamodb=ddb, s3=s3, table=TABLE, bucket=BUCKET)
