"""Oracle connection errors carry their cause (issue 16): DPY-6005 alone said nothing."""

from __future__ import annotations

import socket

import oracledb
import pytest

from cutover_prep.engines import ConnectionSpec, DatabaseUnreachable
from cutover_prep.engines.oracle.engine import OracleEngine, connect_problem


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # nothing listens once closed


def _spec(host: str, port: int) -> ConnectionSpec:
    return ConnectionSpec(engine="oracle", host=host, port=port, database="FREEPDB1", user="u",
                          password="topsecret", tls="prefer")


def test_a_refused_connection_says_refused():
    with pytest.raises(DatabaseUnreachable) as info:
        OracleEngine.connect(_spec("127.0.0.1", _closed_port()))
    message = str(info.value)
    assert "DPY-6005: cannot connect to database: [Errno 111] Connection refused" in message
    assert "CONNECTION_ID" not in message and "\n" not in message and "topsecret" not in message


def test_an_unresolvable_host_is_named_not_a_traceback():
    """oracledb lets socket.gaierror through: it was a traceback, not DatabaseUnreachable."""
    with pytest.raises(DatabaseUnreachable, match=r"host name not resolved \("):
        OracleEngine.connect(_spec("no-such-host.invalid", 1521))


def test_the_cause_comes_from_the_message_when_there_is_no_chained_exception():
    class FakeError:
        message = ("DPY-6005: cannot connect to database (CONNECTION_ID=abc==).\nDPY-4011: the database or "
                   "network closed the connection\nHelp: https://python-oracledb.readthedocs.io/x#dpy-4011")
    exc = oracledb.OperationalError(FakeError())
    assert connect_problem(exc) == ("DPY-6005: cannot connect to database: DPY-4011: the database or network "
                                    "closed the connection")
