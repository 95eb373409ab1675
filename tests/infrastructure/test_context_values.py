"""Issue 32 §8.5: every CDK context value is checked, and a bad one is one line naming its key
(``ConfigError``, which ``cdk/app.py`` prints as ``cutover-prep: ...`` with a non-zero exit), never a
traceback and never a value taken silently for another.

``-c key=value`` gives strings; ``cdk.json`` may hold any JSON value (a boolean, a fraction, a list, an
object). The judges: CloudFormation's stack name rule (``[A-Za-z][-A-Za-z0-9]*``, at most 128 characters,
AWS CloudFormation User Guide, "Stack name"), Step Functions' state machine name (1-80 characters, no
whitespace, brackets, wildcards or ``"#%\\^|~`$&,;:/``, Step Functions API Reference, CreateStateMachine
``name``), an AWS account id (12 digits), and what a number or a switch is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = {"dashboard_instance_class": "db.m5.large", "dashboard_storage_type": "gp3",
             "dashboard_allocated_gb": "500"}


@pytest.mark.parametrize(("context", "key"), [
    ({**DASHBOARD, "dashboard_iops": "1e400"}, "dashboard_iops"),  # OverflowError traceback before
    ({**DASHBOARD, "dashboard_allocated_gb": "inf"}, "dashboard_allocated_gb"),  # accepted before
    ({**DASHBOARD, "dashboard_storage_throughput": "Infinity"}, "dashboard_storage_throughput"),
    ({**DASHBOARD, "dashboard_allocated_gb": True}, "dashboard_allocated_gb"),  # true is not 1 GiB
    ({**DASHBOARD, "dashboard_allocated_gb": "1000000"}, "dashboard_allocated_gb"),  # RDS: gp3 20-65,536 GiB
    ({"warm_concurrency": True}, "warm_concurrency"),  # a JSON boolean was taken as 1
    ({"log_retention_days": 90.5}, "log_retention_days"),  # a fraction was cut to 90
    ({"evidence_retention_days": {"days": 30}}, "evidence_retention_days"),
    ({"restore_trigger": "flase"}, "restore_trigger"),  # a typo turned the trigger off
    ({"restore_sweep": "ture"}, "restore_sweep"),
    ({"notifications": "maybe"}, "notifications"),
    ({"skip_layer_build": "sometimes"}, "skip_layer_build"),
    ({"allowed_db_hosts": 5}, "allowed_db_hosts"),  # TypeError traceback before
    ({"notify_emails": {"to": "dba@example.com"}}, "notify_emails"),  # an object's keys were taken as addresses
    ({"notify_emails": "dba at example.com"}, "notify_emails"),
    ({"stack_name": "bad name"}, "stack_name"),  # the CDK's own RuntimeError traceback before
    ({"stack_name": "s" * 129}, "stack_name"),
    ({"state_machine_name": "bad name!"}, "state_machine_name"),
    ({"state_machine_name": "n" * 81}, "state_machine_name"),
    ({"account": "abc"}, "account"),  # accepted before, refused by CloudFormation at deploy
    ({"region": "nowhere 1"}, "region"),
])
def test_a_bad_context_value_is_a_config_error_naming_its_key(context: dict[str, Any], key: str) -> None:
    from cutover_prep_cdk import build_app
    from cutover_prep_cdk.config import ConfigError

    with pytest.raises(ConfigError) as raised:
        build_app({"skip_layer_build": True, **context}, nag=False)
    message = str(raised.value)
    assert f"context {key}" in message and "\n" not in message, message


@pytest.mark.parametrize("context", [
    {**DASHBOARD, "dashboard_iops": "12000", "dashboard_storage_throughput": 500},
    {"warm_concurrency": 0, "log_retention_days": "90", "evidence_retention_days": 30.0},
    {"restore_trigger": False, "restore_sweep": "false", "notifications": "true", "skip_layer_build": "1"},
    {"notify_emails": ["dba@example.com", "oncall@example.com"], "allowed_db_hosts": ["proxy.example.internal"]},
    {"stack_name": "Cutover-Prep-2", "state_machine_name": "cutover-prep.warmup_2", "account": "111122223333",
     "region": "us-gov-west-1"},
])
def test_good_context_values_still_build(context: dict[str, Any]) -> None:
    from cutover_prep_cdk import build_app

    build_app({"skip_layer_build": True, **context}, nag=False)


def test_the_app_prints_one_line_for_a_number_beyond_a_float() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "lambdas"),
           "JSII_SILENCE_WARNING_DEPRECATED_NODE_VERSION": "1", "JSII_SILENCE_WARNING_UNTESTED_NODE_VERSION": "1",
           "CDK_CONTEXT_JSON": json.dumps({"skip_layer_build": True, **DASHBOARD, "dashboard_iops": "1e400"})}
    done = subprocess.run([sys.executable, str(ROOT / "cdk" / "app.py")], env=env, capture_output=True,
                          text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr[-2000:]
    ours = [line for line in done.stderr.splitlines() if not line.startswith("b'!!")]  # not node's banner
    assert ours == ["cutover-prep: context dashboard_iops must be a finite number, got '1e400'"], ours


@pytest.mark.parametrize("host", ["fe80::1%eth0", "fe80::1%25eth0", "proxy.example.com:5432", "10.0.0.5,10.0.0.6"])
def test_an_allowed_db_host_no_run_could_name_is_refused(host: str) -> None:
    # the same class (one host rule, not two): an allow-list entry that no run input may put in target.host
    # (the run input's rule, models.run_input.host_problem) could never be used; refuse it at deploy time
    from cutover_prep.models.run_input import InvalidInput, parse_run_input
    from cutover_prep_cdk.config import Config, ConfigError

    target = {"db_instance_identifier": "db", "host": host,
              "secret_arn": "arn:aws:secretsmanager:eu-west-1:111122223333:secret:x"}
    with pytest.raises(InvalidInput):  # the judge: the run input refuses it
        parse_run_input({"target": target})
    from aws_cdk import App

    with pytest.raises(ConfigError, match="allowed_db_hosts"):
        Config.from_node(App(context={"skip_layer_build": True, "allowed_db_hosts": [host]}).node)
