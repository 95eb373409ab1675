"""Issue 20, finding 2, through the workflow: the run ASL executed by moto, the real handlers in-process.

A tagged secret that belongs to orders-prod, aimed at another instance, fails the run with the named
error ``SecretNotBound`` before anything connects. The judge of "nothing connected" is the operating
system: a TCP listener in this test, where the run is pointed, counts the connections it accepts. The
same run with a secret that names its target does connect there (so the listener can see one)."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import pytest

from cutover_prep.local.harness import LocalAws

PASSWORD = "pw-never-sent-7f3a"
ACCESS_TAG = [{"Key": "cutover-prep:access", "Value": "read"}]  # the stack's IAM condition


# The listener's loop, in a process of its own: the engine asks libpq's PQping whether a failed connection may
# answer later, and psycopg's binary PGconn.ping holds the GIL until it returns, so a listener thread in this
# process could not accept the ping's connection and close it: the ping waited its whole connect_timeout
# (10 s) with every thread of the run frozen. It prints its port, then, when its stdin closes, the count.
_SERVE = """
import select, socket, sys
server = socket.create_server(("127.0.0.1", 0))
print(server.getsockname()[1], flush=True)
accepted = 0
while True:
    ready = select.select([server, sys.stdin], [], [])[0]
    if server in ready:
        server.accept()[0].close()
        accepted += 1
    elif sys.stdin in ready:
        break
server.setblocking(False)
try:  # anything still waiting in the backlog was a connection too
    while True:
        server.accept()[0].close()
        accepted += 1
except OSError:
    pass
print(accepted, flush=True)
"""


class Listener:
    """Accepts TCP connections on 127.0.0.1 and closes them at once, counting them (in a child process)."""

    def __init__(self) -> None:
        self._proc = subprocess.Popen([sys.executable, "-I", "-S", "-c", _SERVE], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
        self.port, self.accepted = int(self._proc.stdout.readline()), 0
        self._closed = False

    def close(self) -> int:
        if self._closed:
            return self.accepted
        self._closed = True
        out, _ = self._proc.communicate(timeout=30)  # closes its stdin: it counts the backlog and says how many
        self.accepted = int(out.split()[-1])
        return self.accepted


@pytest.fixture
def listener():
    server = Listener()
    yield server
    server.close()


def run_with(aws: LocalAws, listener: Listener, binding: dict[str, Any], name: str) -> dict[str, Any]:
    aws.create_instance("orders-rehearsal")
    secret = aws.client("secretsmanager").create_secret(
        Name=f"orders-{name}", Tags=ACCESS_TAG,
        SecretString=json.dumps({"username": "warmer", "password": PASSWORD, "engine": "postgres", **binding}))["ARN"]
    run_input = {"run_id": name, "target": {"db_instance_identifier": "orders-rehearsal", "secret_arn": secret,
                                            "engine": "postgres", "host": "127.0.0.1", "port": listener.port,
                                            "database": "app"}}
    return aws.wait(aws.start(run_input, name=name), timeout_s=300)


def history_text(aws: LocalAws, desc: dict[str, Any]) -> str:
    events = aws.client("stepfunctions").get_execution_history(executionArn=desc["executionArn"])["events"]
    return json.dumps(events, default=str)


def test_a_secret_of_another_instance_fails_the_run_by_name_and_nothing_connects(listener: Listener) -> None:
    with LocalAws() as aws:
        desc = run_with(aws, listener, {"dbInstanceIdentifier": "orders-prod"}, "bound-elsewhere")
        history = history_text(aws, desc)
    assert listener.close() == 0  # before any connection
    assert desc["status"] == "FAILED" and desc["error"] == "SecretNotBound", desc
    assert "orders-prod" in desc["cause"] and "orders-rehearsal" in desc["cause"]
    assert PASSWORD not in history and PASSWORD not in desc["cause"]


def test_a_secret_naming_no_instance_fails_unless_the_deployment_allows_it(listener: Listener) -> None:
    with LocalAws() as aws:
        desc = run_with(aws, listener, {}, "unbound")
    assert listener.close() == 0
    assert desc["status"] == "FAILED" and desc["error"] == "SecretNotBound", desc
    assert "allow_unbound_secrets" in desc["cause"]
    allowed = Listener()
    with LocalAws(env={"ALLOW_UNBOUND_SECRETS": "true"}) as aws:
        desc = run_with(aws, allowed, {}, "unbound-allowed")
    assert allowed.close() >= 1  # allowed: the run went on to connect
    assert desc["error"] != "SecretNotBound", desc


def test_the_secret_of_the_target_does_reach_it(listener: Listener) -> None:
    with LocalAws() as aws:
        desc = run_with(aws, listener, {"dbInstanceIdentifier": "orders-rehearsal"}, "bound-here")
    assert desc["error"] != "SecretNotBound", desc  # it failed later: the listener is not a database
    assert listener.close() >= 1
