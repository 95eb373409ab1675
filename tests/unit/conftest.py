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
CREDENTIALS = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing", "aws_session_token": "testing"}

_SESSIONS: list[boto3.session.Session] = []


def shared_session() -> boto3.session.Session:
    """One boto3 session for the clients of the ``store`` fixture. moto's ``mock_aws`` drops boto3's default
    session at every start, so ``boto3.client`` made a new session per test, which loaded the endpoint rules and
    the DynamoDB and S3 service models from disk again (about 80 % of the fixture's time: test_slots.py's setup).
    The session is made after moto is imported, so its clients carry moto's request hook, and its clients are
    made inside each test's ``mock_aws``, as ``boto3.client``'s were: each test still gets fresh backends."""
    if not _SESSIONS:
        _SESSIONS.append(boto3.session.Session())
    return _SESSIONS[0]


@pytest.fixture
def store(monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "testing")
    monkeypatch.delenv("AWS_PROFILE", raising=False)
    with mock_aws():
        session = shared_session()
        ddb = session.client("dynamodb", region_name="us-east-1", **CREDENTIALS)
        s3 = session.client("s3", region_name="us-east-1", **CREDENTIALS)
        ddb.create_table(**table_definition(TABLE))
        s3.create_bucket(Bucket=BUCKET)
        yield Store(dynamodb=ddb, s3=s3, table=TABLE, bucket=BUCKET)
