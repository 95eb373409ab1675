"""The fixtures of the ``start | status | report`` tests (test_remote_cli*.py), written once. Module scope: each
test file gets its own moto server and secret, made once for the file, so that pytest-xdist's
``--dist loadfile`` can give the two files to two workers, each with its own server."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from cutover_prep.local.harness import LocalAws
from tests.integration.remote.remote_cli import PASSWORD_MARK


@pytest.fixture(scope="module")
def aws() -> Iterator[LocalAws]:
    """A moto server that runs the real ASL with the real handlers, with the instance and the stack the CLI
    looks up."""
    with LocalAws(server=True) as local:
        local.create_instance("restored-db")
        local.create_stack("CutoverPrep")
        yield local


@pytest.fixture(scope="module")
def secret_arn(aws: LocalAws, sample_db: Any) -> str:
    # With trust authentication the marker is never checked: it only proves no output carries it.
    return aws.create_secret("restored-db-ro", {"username": sample_db.user, "engine": "postgres",
                                                "password": sample_db.password or PASSWORD_MARK,
                                                "dbInstanceIdentifier": "restored-db"})
