"""Issue 32, finding 3: every session bounds its waits (``engines.bounds``), and a lock wait that hits the
bound is a named error the workflow knows.

Judges: PostgreSQL's documentation ("Client Connection Defaults": ``statement_timeout`` and
``lock_timeout`` in milliseconds, settable by any user), MariaDB's (``lock_wait_timeout``: seconds,
1 to 31536000; ``max_statement_time``: seconds with microsecond precision), python-oracledb's
(``Connection.call_timeout``: milliseconds)."""

from __future__ import annotations

import pytest

from cutover_prep.engines import EngineError, LockWaitTimeout, TransientDatabaseError, base
from cutover_prep.engines.bounds import LOCK_ENV, STATEMENT_ENV, session_bounds
from cutover_prep.findings.failures import KNOWN_ERRORS
from cutover_prep.retry import Retries


def test_a_lambda_call_timeout_is_the_statement_bound_and_the_lock_bound_is_below_it(monkeypatch) -> None:
    monkeypatch.delenv(LOCK_ENV, raising=False)
    monkeypatch.delenv(STATEMENT_ENV, raising=False)
    bounds = session_bounds(870)
    assert bounds.statement_seconds == 870 and bounds.lock_seconds == 30
    assert bounds.statement_ms == 870_000 and bounds.lock_ms == 30_000
    short = session_bounds(10)  # little time left: the lock bound is half of it, so retries fit
    assert short.lock_seconds == 5 and short.lock_whole_seconds == 5


def test_without_a_lambda_the_command_line_is_bounded_too(monkeypatch) -> None:
    monkeypatch.delenv(LOCK_ENV, raising=False)
    monkeypatch.delenv(STATEMENT_ENV, raising=False)
    assert session_bounds(None).statement_seconds == 900 and session_bounds(None).lock_seconds == 30
    monkeypatch.setenv(LOCK_ENV, "0.2")
    monkeypatch.setenv(STATEMENT_ENV, "60")
    bounds = session_bounds(None)
    assert bounds.statement_seconds == 60 and bounds.lock_ms == 200
    assert bounds.lock_whole_seconds == 1  # MariaDB's lock_wait_timeout: whole seconds, at least 1


@pytest.mark.parametrize("raw", ["0", "-3", "soon", "nan", "inf"])
def test_a_bad_setting_is_one_named_error(monkeypatch, raw: str) -> None:
    monkeypatch.setenv(LOCK_ENV, raw)
    with pytest.raises(EngineError, match=LOCK_ENV):
        session_bounds(None)


def test_a_lock_wait_timeout_is_retried_a_bounded_number_of_times() -> None:
    calls: list[int] = []

    def waits() -> None:
        calls.append(1)
        raise LockWaitTimeout("reading db/public.t#table.main: waited 1 s for a lock on public.t")

    retries = Retries(3, sleep=lambda _s: None)
    with pytest.raises(LockWaitTimeout, match="public.t"):
        retries.call(waits)
    assert len(calls) == 3 and retries.count == 2
    assert issubclass(LockWaitTimeout, TransientDatabaseError)


def test_every_engine_error_is_named_in_a_failed_run() -> None:
    """A run that ends on an engine's error keeps its name (not CutoverPrepFailed): the Lambda runtime's
    errorType is the exception's class name."""
    names = {cls.__name__ for cls in vars(base).values()
             if isinstance(cls, type) and issubclass(cls, EngineError) and cls is not EngineError}
    assert "LockWaitTimeout" in names
    assert names <= KNOWN_ERRORS, names - KNOWN_ERRORS
