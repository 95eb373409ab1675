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
from cutover_prep.engines.retry import Retries
from cutover_prep.findings.failures import KNOWN_ERRORS


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


def test_mysql_and_mariadb_bound_lock_waits_in_whole_seconds_and_the_holder_query_is_cut() -> None:
    """MySQL 8.0 manual, "Server System Variables": ``lock_wait_timeout`` (seconds, 1..31536000, default a
    year) and "Optimizer Hints" (``MAX_EXECUTION_TIME(N)``, milliseconds, SELECT only); MariaDB, "SET
    STATEMENT" (``SET STATEMENT max_statement_time = N FOR ...``, seconds)."""
    from cutover_prep.engines.mysql import sql as q

    maria, mysql = q.Dialect.from_version("10.11.19-MariaDB"), q.Dialect.from_version("8.0.36")
    assert q.lock_timeout_sql(0) == "SET SESSION lock_wait_timeout = 1, SESSION innodb_lock_wait_timeout = 1"
    assert q.lock_timeout_sql(30) == "SET SESSION lock_wait_timeout = 30, SESSION innodb_lock_wait_timeout = 30"
    holders = q.MDL_INFO_HOLDERS_SQL.strip()
    assert maria.bounded(holders, 5).startswith("SET STATEMENT max_statement_time = 5 FOR SELECT m.THREAD_ID")
    assert mysql.bounded(q.PS_MDL_HOLDERS_SQL.strip(), 5).startswith(
        "SELECT /*+ MAX_EXECUTION_TIME(5000) */ t.PROCESSLIST_ID")
    for statement in (q.MDL_INFO_HOLDERS_SQL, q.PS_MDL_HOLDERS_SQL, q.SCHEMA_SESSIONS_SQL):
        assert "INFO" not in statement.replace("METADATA_LOCK_INFO", "")  # never another session's statement text
        assert statement.count("%s") == (1 if statement is q.SCHEMA_SESSIONS_SQL else 2)  # bind variables


def test_every_oracle_session_has_a_call_timeout_also_without_a_lambda(monkeypatch) -> None:
    """python-oracledb, ``Connection.call_timeout``: milliseconds each round trip may take, 0 (the default)
    waits for ever. The command line's sessions (no Lambda) had none."""
    from cutover_prep.engines.oracle.engine import OracleEngine
    from tests.unit.test_oracle import _connect_with

    monkeypatch.delenv(STATEMENT_ENV, raising=False)
    spec, _ = _connect_with(monkeypatch, "require", [None], tls_port=2484)
    assert OracleEngine.connect(spec).conn.call_timeout == 900_000
    monkeypatch.setenv(STATEMENT_ENV, "120")
    spec, _ = _connect_with(monkeypatch, "require", [None], tls_port=2484)
    assert OracleEngine.connect(spec).conn.call_timeout == 120_000
    spec, _ = _connect_with(monkeypatch, "require", [None], tls_port=2484)
    assert OracleEngine.connect(spec, call_timeout_seconds=42.5).conn.call_timeout == 42_500


def test_discover_and_end_census_open_sessions_bounded_by_the_invocation_s_remaining_time(monkeypatch) -> None:
    """Their handlers opened engines without a call timeout (no statement bound at all in a Lambda)."""
    from cutover_prep import deps

    opened: list[float | None] = []
    monkeypatch.setattr(deps, "open_engine", lambda _spec, _warmup, *, call_timeout_seconds=None:
                        opened.append(call_timeout_seconds))

    class Context:
        left_ms = 600_000

        def get_remaining_time_in_millis(self) -> int:
            return self.left_ms

    context = Context()
    opener = deps.engine_opener(context, 30)
    opener("spec", "warmup")
    context.left_ms = 100_000  # taken again later in the invocation (a retry): what is left then
    opener("spec", "warmup")
    context.left_ms = 10_000
    opener("spec", "warmup")
    assert opened == [570.0, 70.0, 1.0]  # never below 1 s


def test_the_postgres_version_probe_opens_a_bounded_session_too(monkeypatch) -> None:
    """``cutover-prep local`` asks the server's version on a session of its own: bounded as the others."""
    import psycopg

    from cutover_prep.engines import ConnectionSpec
    from cutover_prep.engines.postgres import server_version

    seen: dict = {}

    def refuse(**kwargs):
        seen.update(kwargs)
        raise psycopg.OperationalError("refused")

    monkeypatch.setattr(psycopg, "connect", refuse)
    monkeypatch.setenv(LOCK_ENV, "3")
    monkeypatch.delenv(STATEMENT_ENV, raising=False)
    assert server_version(ConnectionSpec("postgres", "127.0.0.1", 5432, "db", "u", "", tls="disable")) is None
    assert "-c lock_timeout=3000" in seen["options"] and "-c statement_timeout=900000" in seen["options"]


def test_the_mysql_version_probe_opens_a_bounded_session_too(monkeypatch) -> None:
    """PyMySQL: ``init_command`` runs when the connection is made; ``read_timeout`` bounds each socket read."""
    import pymysql

    from cutover_prep.engines import ConnectionSpec
    from cutover_prep.engines.mysql import server_version

    seen: dict = {}

    def refuse(**kwargs):
        seen.update(kwargs)
        raise pymysql.err.OperationalError(2003, "refused")

    monkeypatch.setattr(pymysql, "connect", refuse)
    monkeypatch.setenv(LOCK_ENV, "3")
    monkeypatch.delenv(STATEMENT_ENV, raising=False)
    assert server_version(ConnectionSpec("mariadb", "127.0.0.1", 3306, "db", "u", "", tls="disable")) is None
    assert seen["init_command"] == "SET SESSION lock_wait_timeout = 3, SESSION innodb_lock_wait_timeout = 3"
    assert seen["read_timeout"] == 900


def test_the_holders_of_a_postgres_lock_in_words() -> None:
    """A holder, and a request queued ahead of ours with the pid it waits for (``pg_blocking_pids``)."""
    from cutover_prep.engines.postgres.session import holders_words

    rows = [('public."We ird"', "AccessExclusiveLock", True, 41, "app", "psql", "10.0.0.5", "idle in transaction",
             "2026-11-27 18:00:00+00", "2026-11-27 18:00:01+00", []),
            ('public."We ird"', "AccessExclusiveLock", False, 42, "dba", None, None, "active", None, None, [7])]
    words = holders_words(rows)
    assert words.startswith('public."We ird": held in AccessExclusiveLock by pid 41 (user app, application '
                            "'psql', client 10.0.0.5, idle in transaction, transaction started 2026-11-27")
    assert words.endswith(", pid 42 queued for AccessExclusiveLock ahead of ours, waiting for pid 7 (user dba, active)")
