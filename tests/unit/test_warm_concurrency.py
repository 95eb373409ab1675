"""A run may not ask its WarmUp Map for more readers than the deployment lets WarmUnit run (issue 20,
finding 7).

The stack reserves concurrency for WarmUnit (CDK context ``warm_concurrency``). Reserved concurrency is
also a ceiling: Lambda throttles an invocation above it (Lambda Developer Guide, "Configuring reserved
concurrency"), and the workflow retries a throttled WarmUnit for about a minute and then records the unit
as failed. So ValidateInput refuses such a run by name before anything is recorded or started.
"""

from __future__ import annotations

import pytest

from cutover_prep.models.run_input import InvalidInput
from cutover_prep.steps import warm_concurrency
from cutover_prep.steps.validate_input import begin_run

ARN = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:orders-ro-AbCdEf"


def _input(**warmup) -> dict:
    return {"run_id": "orders-1", "target": {"db_instance_identifier": "orders", "secret_arn": ARN},
            "warmup": warmup}


def test_more_readers_than_the_reservation_is_refused_by_name_and_nothing_is_recorded(store) -> None:
    with pytest.raises(InvalidInput) as err:
        begin_run(_input(max_concurrency=101), execution_name=None, store=store, allowed_hosts=(),
                  warm_concurrency=100)
    message = str(err.value)
    assert message.startswith("warmup.max_concurrency: 101 ") and "at most 100" in message
    assert "-c warm_concurrency=101" in message and "\n" not in message
    assert store.get_run("orders-1") is None


def test_up_to_the_reservation_is_a_run(store) -> None:
    config = begin_run(_input(max_concurrency=100), execution_name=None, store=store, allowed_hosts=(),
                       warm_concurrency=100)
    assert config.warmup.max_concurrency == 100 and store.get_run("orders-1") is not None


def test_a_run_that_does_not_warm_up_is_not_bound_by_it(store) -> None:
    begin_run(_input(max_concurrency=64, enabled=False), execution_name=None, store=store, allowed_hosts=(),
              warm_concurrency=8)
    assert store.get_run("orders-1") is not None


def test_no_reservation_no_bound(store) -> None:
    begin_run(_input(max_concurrency=1000), execution_name=None, store=store, allowed_hosts=())
    assert store.get_run("orders-1") is not None


@pytest.mark.parametrize(("value", "expected"), [(None, None), ("", None), ("0", None), ("100", 100), (" 32 ", 32)])
def test_the_reservation_from_the_environment(value, expected) -> None:
    env = {} if value is None else {warm_concurrency.ENV: value}
    assert warm_concurrency.limit(env) == expected


def test_a_bad_environment_value_names_the_variable() -> None:
    with pytest.raises(ValueError, match="WARM_CONCURRENCY must be a whole number"):
        warm_concurrency.limit({warm_concurrency.ENV: "lots"})


def test_validate_input_refuses_more_readers_than_the_deployment_reserved(monkeypatch, store) -> None:
    """The Lambda handler, with the environment the stack gives it (WARM_CONCURRENCY, workers.py)."""
    from cutover_prep.local.lambda_runtime import FakeContext
    from handlers import validate_input

    monkeypatch.setattr(validate_input.deps, "store", lambda: store)
    monkeypatch.setenv("ALLOWED_DB_HOSTS", "")
    monkeypatch.setenv(warm_concurrency.ENV, "16")
    context = FakeContext("cutover-prep-validate-input", 60, region="eu-west-1")
    with pytest.raises(InvalidInput, match=r"^warmup\.max_concurrency: 17 .*at most 16"):
        validate_input.handler({"input": _input(max_concurrency=17), "execution_name": "r-1"}, context)
    assert store.get_run("orders-1") is None
    assert validate_input.handler({"input": _input(max_concurrency=16), "execution_name": "r-1"},
                                  context)["warmup"]["max_concurrency"] == 16
