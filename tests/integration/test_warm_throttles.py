"""A throttled WarmUnit waits for a free execution instead of failing its unit (issue 20, finding 7).

WarmUnit has reserved concurrency (CDK context warm_concurrency). Reserved concurrency is a ceiling:
above it Lambda throttles the invocation, and Step Functions sees Lambda.TooManyRequestsException
(Lambda Developer Guide, "Configuring reserved concurrency"; Step Functions, "Handling errors": Lambda
service exceptions). Runs at once may together ask for more readers than the reservation, and each one
alone may ask for all of it (ValidateInput checks one run only). A throttle is then a wait for another
unit to finish (a unit reads for up to 15 minutes), not a unit that failed.

The real ASL file runs in moto's Step Functions interpreter with the real handlers on a real PostgreSQL
database; WarmUnit is throttled by an injected Lambda.TooManyRequestsException.
"""

from __future__ import annotations

import json

import pytest

from cutover_prep.local.harness import LocalAws
from cutover_prep.workflows import CUTOVER_RUN
from tests.integration.test_workflow import finish, run_input

pytestmark = pytest.mark.postgres

Throttled = type("Lambda.TooManyRequestsException", (Exception,), {})


def _throttled(_event) -> None:
    raise Throttled("Rate Exceeded. (injected: WarmUnit's reserved concurrency is in use)")


def _throttle_patience_seconds() -> float:
    """How long the WarmUnit task keeps retrying throttles, by the retrier the ASL file gives it
    (Step Functions: the n-th retry waits IntervalSeconds * BackoffRate^(n-1), at most MaxDelaySeconds)."""
    states = json.loads(CUTOVER_RUN.asl_path.read_text())["States"]["WarmUp"]["ItemProcessor"]["States"]
    retrier = next(r for r in states["WarmUnit"]["Retry"] if "Lambda.TooManyRequestsException" in r["ErrorEquals"])
    interval, rate = retrier.get("IntervalSeconds", 1), retrier.get("BackoffRate", 2.0)
    cap = retrier.get("MaxDelaySeconds", float("inf"))
    return sum(min(interval * rate ** n, cap) for n in range(retrier.get("MaxAttempts", 3)))


def test_a_throttled_unit_waits_for_a_free_execution_and_is_read() -> None:
    # a unit reads for up to 15 minutes: a throttled one must be able to wait at least that long
    assert _throttle_patience_seconds() >= 15 * 60


@pytest.fixture
def aws():
    with LocalAws() as local:
        local.create_instance("restored-db")
        yield local


def test_a_unit_throttled_many_times_in_a_row_is_read_not_failed(aws, sample_db):
    # one reader at a time, so the throttles hit one unit in a row (more than the 5 retries Lambda's own
    # errors get)
    aws.faults["handlers.warm_unit"] = [_throttled] * 8
    desc = finish(aws, run_input(aws, sample_db, run_id="throttled", max_concurrency=1))
    assert desc["status"] == "SUCCEEDED"
    out = desc["output_json"]
    assert out["units"]["failed"] == 0 and out["coverage_pct"] == 100.0
    assert aws.invocations["handlers.warm_unit"] == out["units"]["total"] + 8
