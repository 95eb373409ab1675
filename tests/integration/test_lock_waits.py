"""Issue 32, finding 3: nothing bounded a wait on a lock.

With ``LOCK TABLE t IN ACCESS EXCLUSIVE MODE`` held by another session, the census, the read of a unit
of ``t`` and ``cutover-prep estimate`` waited as long as the lock was held (the census 66 s instead of
~20 s; ``estimate`` still hung at 80 s). Every session now sets the engine's own bounds
(PostgreSQL ``lock_timeout``/``statement_timeout``, MariaDB ``lock_wait_timeout``/``max_statement_time``),
here made small by the setting ``CUTOVER_PREP_LOCK_TIMEOUT_SECONDS``; a wait that hits one is a
``LockWaitTimeout`` that names the relation and who holds the lock.

The judges: the lock is still held when the operation ends (so it ended by its bound, not because the
lock went away), and the holder's pid / connection id as the server reports it to the test
(``pg_locks`` joined with ``pg_stat_activity``; MariaDB's ``CONNECTION_ID()``), read independently of
the code under test. The old code never ended while the lock was held: each operation runs in a thread
(the CLI in a child process) given a generous deadline, so the old code fails instead of hanging the run;
the lock is released in ``finally``, which lets the old code's wait end too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from cutover_prep.engines import DiscoveryOptions, LockWaitTimeout, ReadRange
from cutover_prep.engines.postgres.engine import PostgresEngine
from tests.conftest import conninfo

HANG_DEADLINE_S = 60  # the old code waited as long as the lock was held: past this, it is a failure
# the lock wait bound the tests set (CUTOVER_PREP_LOCK_TIMEOUT_SECONDS): a quarter of a second, not 1 s (every
# PostgreSQL test waits it out at least once, the census and the local run several times). The test holds its lock
# until the operation has ended, and the judge is that it is still held then: a smaller bound ends the wait sooner
# and proves the same, on a loaded machine too. MariaDB's lock_wait_timeout takes whole seconds: 1 s there.
BOUND_S = "0.25"
REPO = Path(__file__).resolve().parents[2]


def ends_while_locked(fn: Callable[[], Any], still_locked: Callable[[], bool],
                      release: Callable[[], None], deadline_s: float = HANG_DEADLINE_S) -> BaseException | Any:
    """Run ``fn`` in a thread; return what it raised (or returned). Fails the test when it has not ended within
    ``HANG_DEADLINE_S`` (the old code: it waits for the lock; then the lock is released first, so the waiting
    thread ends and its connection can be closed), or when the lock was no longer held when it ended (then it
    did not end by its bound)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["value"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(deadline_s)
    if worker.is_alive():
        release()
        worker.join(deadline_s)
        pytest.fail(f"still waiting for the lock after {deadline_s} s: nothing bounds the wait")
    assert still_locked(), "the lock was released before the operation ended: it was not bounded by its own bound"
    return box["value"]


# -- PostgreSQL ---------------------------------------------------------------------------------------------


def _table_t(pg_admin: Any, spec: Any, columns: str) -> Any:
    """Table ``t`` of 20,000 rows (``columns`` of ``generate_series ... g``) in ``spec``'s database, pg_prewarm
    where the server has it, and t's planned main-fork segment as discovery plans it."""
    with psycopg.connect(conninfo(pg_admin, spec.database), autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'pg_prewarm'").fetchone():
            conn.execute("CREATE EXTENSION pg_prewarm")  # the embedded pgserver has none: tid_range_scan
        conn.execute(f"CREATE TABLE t AS SELECT {columns} FROM generate_series(1, 20000) g")
    engine = PostgresEngine.connect(spec)
    try:
        only_t = DiscoveryOptions(databases=(spec.database,), include_schemas=("public",))
        return next(s for s in engine.discover(only_t) if s.name == "t" and s.kind == "table.main")
    finally:
        engine.close()


@pytest.fixture
def pg_locked(pg_admin: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A fresh database with table ``t`` (and pg_prewarm, which locks what it reads); its planned segment;
    then another session holding ``LOCK TABLE t IN ACCESS EXCLUSIVE MODE`` in an open transaction."""
    monkeypatch.setenv("CUTOVER_PREP_LOCK_TIMEOUT_SECONDS", BOUND_S)
    tag = uuid.uuid4().hex[:8]
    database, app = f"cutover_prep_test_{tag}", f"lock-holder-{tag}"
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    spec = replace(pg_admin, database=database)
    holder = None
    try:
        segment = _table_t(pg_admin, spec, "g AS id, md5(g::text) AS v")
        holder = psycopg.connect(conninfo(pg_admin, database), application_name=app)
        holder.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE")  # returns once granted; the transaction stays open
        observer = psycopg.connect(conninfo(pg_admin, database), autocommit=True)
        pid = observer.execute(
            "SELECT l.pid FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
            "WHERE l.locktype = 'relation' AND l.relation = 'public.t'::regclass AND l.granted "
            "AND l.mode = 'AccessExclusiveLock' AND a.application_name = %s", (app,)).fetchone()[0]

        def still_locked() -> bool:
            return observer.execute("SELECT count(*) FROM pg_locks WHERE pid = %s AND relation = 'public.t'::regclass "
                                    "AND granted", (pid,)).fetchone()[0] == 1

        def release() -> None:
            holder.rollback()

        yield {"spec": spec, "segment": segment, "pid": pid, "still_locked": still_locked, "database": database,
               "hold": (still_locked, release)}
        observer.close()
    finally:
        if holder is not None:
            holder.rollback()
            holder.close()
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


@pytest.mark.postgres
def test_every_session_starts_with_its_bounds_and_a_reset_returns_to_them(
        sample_db: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server's own SHOW is the judge. The benchmark's IO-size points ``SET statement_timeout`` to the
    point's deadline and then ``RESET`` it: on the old code that left the session with none (0) for the rest
    of the invocation. ``idle_in_transaction_session_timeout``: a session of ours left in an open transaction
    (a frozen or killed Lambda) releases its locks on the customer's relations within the statement bound."""
    monkeypatch.setenv("CUTOVER_PREP_LOCK_TIMEOUT_SECONDS", "7")
    engine = PostgresEngine.connect(sample_db, call_timeout_seconds=120)
    try:
        conn = engine.connection(sample_db.database)

        def show(name: str) -> str:
            return str(conn.execute(sql.SQL("SHOW {}").format(sql.Identifier(name))).fetchone()[0])

        assert (show("statement_timeout"), show("lock_timeout")) == ("2min", "7s")
        assert show("idle_in_transaction_session_timeout") == "2min"
        conn.execute("SET statement_timeout = 5")
        conn.execute("RESET statement_timeout")
        assert show("statement_timeout") == "2min"
    finally:
        engine.close()


def _named(message: str, pid: int) -> None:
    assert 'public.t' in message or '"public"."t"' in message, message
    assert f"pid {pid}" in message, message


@pytest.mark.postgres
def test_the_census_ends_within_its_bound_naming_the_table_and_the_holder(pg_locked: dict[str, Any]) -> None:
    engine = PostgresEngine.connect(pg_locked["spec"])
    try:
        only_this = DiscoveryOptions(databases=(pg_locked["database"],))  # the server is shared: not the others'
        got = ends_while_locked(lambda: engine.census(only_this), *pg_locked["hold"])
    finally:
        engine.close()
    assert isinstance(got, LockWaitTimeout), got
    _named(str(got), pg_locked["pid"])


@pytest.mark.postgres
def test_reading_a_unit_of_the_table_ends_within_its_bound_naming_it_and_the_holder(pg_locked: dict[str, Any]) -> None:
    segment = pg_locked["segment"]
    rng = ReadRange(segment_key=segment.key, locator=segment.locator, extents=segment.extents,
                    block_size=segment.block_size)
    engine = PostgresEngine.connect(pg_locked["spec"])
    try:
        assert engine.read_method(pg_locked["database"]) == "pg_prewarm"  # it takes the relation's lock
        got = ends_while_locked(lambda: engine.read_range(rng), *pg_locked["hold"])
    finally:
        engine.close()
    assert isinstance(got, LockWaitTimeout), got
    _named(str(got), pg_locked["pid"])


@pytest.mark.postgres
def test_estimate_ends_within_its_bound_with_one_line_naming_the_table_and_the_holder(
        pg_locked: dict[str, Any]) -> None:
    spec = pg_locked["spec"]
    if spec.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "lambdas"), str(REPO)]),
           "CUTOVER_PREP_LOCK_TIMEOUT_SECONDS": BOUND_S}
    dsn = f"postgresql://{spec.user}:{spec.password}@{spec.host}:{spec.port}/{spec.database}"
    argv = [sys.executable, "-c", "import sys; from cutover_prep.cli.main import main; sys.exit(main(sys.argv[1:]))",
            "estimate", "--dsn", dsn, "--database", spec.database, "--evidence", str(REPO / "no-such-dir")]

    def run() -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=HANG_DEADLINE_S)
        except subprocess.TimeoutExpired:
            pytest.fail(f"cutover-prep estimate still waiting for the lock after {HANG_DEADLINE_S} s")

    done = ends_while_locked(run, *pg_locked["hold"])
    assert not isinstance(done, BaseException), done
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0 and len(lines) == 1 and lines[0].startswith("cutover-prep: "), done.stderr
    assert "lock" in lines[0]
    _named(lines[0], pg_locked["pid"])


@pytest.mark.postgres
def test_local_ends_within_its_bound_and_says_which_table_and_who_holds_it(pg_locked: dict[str, Any],
                                                                         tmp_path: Path) -> None:
    """``cutover-prep local`` showed nothing at 150 s in the issue: now Discover's census hits the bound, is
    retried, and the run fails by name (exit 3, the run failed) with the table and the holder's pid."""
    spec = pg_locked["spec"]
    if spec.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "lambdas"), str(REPO)]),
           "CUTOVER_PREP_LOCK_TIMEOUT_SECONDS": BOUND_S}
    dsn = f"postgresql://{spec.user}:{spec.password}@{spec.host}:{spec.port}/{spec.database}"
    argv = [sys.executable, "-c", "import sys; from cutover_prep.cli.main import main; sys.exit(main(sys.argv[1:]))",
            "local", "--dsn", dsn, "--database", spec.database, "--out", str(tmp_path / "out"), "--no-progress",
            "--no-benchmark"]

    def run() -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=HANG_DEADLINE_S * 2)
        except subprocess.TimeoutExpired:
            pytest.fail(f"cutover-prep local still waiting for the lock after {HANG_DEADLINE_S * 2} s")

    done = ends_while_locked(run, *pg_locked["hold"], deadline_s=HANG_DEADLINE_S * 2 + 10)
    assert not isinstance(done, BaseException), done
    last = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 3 and last.startswith("cutover-prep: run failed: LockWaitTimeout: "), done.stderr
    _named(last, pg_locked["pid"])


@pytest.mark.postgres
def test_preflight_names_the_table_and_the_holder_in_each_check_the_lock_stopped(
        pg_locked: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    """The old preflight waited until its statement timeout (about its whole minute) and said only
    "canceling statement due to statement timeout"."""
    from cutover_prep.cli.main import main

    spec = pg_locked["spec"]
    if spec.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    dsn = f"postgresql://{spec.user}:{spec.password}@{spec.host}:{spec.port}/{spec.database}"
    code = ends_while_locked(lambda: main(["preflight", "--dsn", dsn, "--database", spec.database]),
                             *pg_locked["hold"])
    out, err = capsys.readouterr()
    failed = [line for line in out.splitlines() if line.startswith("FAIL ")]
    assert code == 1 and len(failed) == 3, out + err  # privileges, read method, census: each met the lock
    for line in failed:
        _named(line, pg_locked["pid"])


@pytest.mark.postgres
def test_hotset_ends_within_its_bound_with_one_line_naming_the_table_and_the_holder(
        pg_locked: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``cutover-prep hotset`` reads pg_total_relation_size of each table: the old code waited its 60 s
    statement timeout and said "QueryCanceled"."""
    from cutover_prep.cli.main import main

    spec = pg_locked["spec"]
    if spec.host.startswith("/"):
        pytest.skip("the test server listens on a unix socket only; --dsn needs host:port")
    dsn = f"postgresql://{spec.user}:{spec.password}@{spec.host}:{spec.port}/{spec.database}"
    code = ends_while_locked(lambda: main(["hotset", "--dsn", dsn, "--database", spec.database,
                                           "--out", str(tmp_path / "hot.json")]), *pg_locked["hold"])
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert code not in (0, None) and len(lines) == 1 and lines[0].startswith("cutover-prep: "), out + err
    _named(lines[0], pg_locked["pid"])


@pytest.mark.postgres
def test_a_read_queued_behind_a_waiting_alter_names_both_sessions(pg_admin: Any, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    """The common case on a live database: a long transaction reads t (AccessShareLock), an ``ALTER``/``LOCK
    TABLE`` then waits for ACCESS EXCLUSIVE, and every later reader queues behind it. The error names the
    queued session and the one it waits for (``pg_blocking_pids``). Judges: both pids from pg_locks, read by
    the test; the queue is formed by waiting on pg_locks (the exclusive request shows as not granted)."""
    monkeypatch.setenv("CUTOVER_PREP_LOCK_TIMEOUT_SECONDS", BOUND_S)
    tag = uuid.uuid4().hex[:8]
    database = f"cutover_prep_test_{tag}"
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    spec = replace(pg_admin, database=database)
    reader = alter = observer = None
    queued = threading.Thread()
    try:
        segment = _table_t(pg_admin, spec, "g AS id")
        observer = psycopg.connect(conninfo(pg_admin, database), autocommit=True)
        reader = psycopg.connect(conninfo(pg_admin, database))
        reader.execute("SELECT count(*) FROM t")  # its transaction stays open: AccessShareLock held
        alter = psycopg.connect(conninfo(pg_admin, database))
        queued = threading.Thread(target=lambda: alter.execute("LOCK TABLE t IN ACCESS EXCLUSIVE MODE"), daemon=True)
        queued.start()
        reader_pid, alter_pid = reader.info.backend_pid, alter.info.backend_pid
        waiting = "SELECT count(*) FROM pg_locks WHERE pid = %s AND relation = 'public.t'::regclass AND NOT granted"
        while observer.execute(waiting, (alter_pid,)).fetchone()[0] != 1:  # the server says it queued
            queued.join(0.05)
            assert queued.is_alive(), "the LOCK TABLE did not wait"
        held = observer.execute("SELECT count(*) FROM pg_locks WHERE pid = %s AND relation = 'public.t'::regclass "
                                "AND granted", (reader_pid,)).fetchone()[0]
        assert held == 1

        def still_queued() -> bool:
            return observer.execute(waiting, (alter_pid,)).fetchone()[0] == 1

        def release() -> None:  # the reader ends, the LOCK TABLE is granted, then ends too
            reader.rollback()
            queued.join(HANG_DEADLINE_S)
            alter.rollback()

        rng = ReadRange(segment_key=segment.key, locator=segment.locator, extents=segment.extents,
                        block_size=segment.block_size)
        engine = PostgresEngine.connect(spec)
        try:
            got = ends_while_locked(lambda: engine.read_range(rng), still_queued, release)
        finally:
            engine.close()
        assert isinstance(got, LockWaitTimeout), got
        message = str(got)
        assert f"pid {alter_pid} queued for AccessExclusiveLock ahead of ours, waiting for pid {reader_pid}" \
            in message, message
    finally:
        if reader is not None:
            reader.rollback()
            reader.close()
        if queued.ident:
            queued.join(HANG_DEADLINE_S)
        if alter is not None:
            alter.rollback()
            alter.close()
        if observer is not None:
            observer.close()
        with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database)))


class _Evidence:
    """The store as the EndCensus step uses it (evidence objects by key), in memory."""

    def __init__(self, objects: dict[str, Any]) -> None:
        self.objects = objects

    def exists(self, key: str) -> bool:
        return key in self.objects

    def get_json(self, key: str) -> Any:
        return self.objects[key]

    def put_json(self, key: str, value: Any) -> None:
        self.objects[key] = value

    def update_run(self, run_id: str, **attrs: Any) -> None:  # the server's start time, for findings.server
        self.objects.setdefault(f"run:{run_id}", {}).update(attrs)


@pytest.mark.postgres
def test_the_end_census_ends_within_its_bound_and_the_findings_name_the_table_and_the_holder(
        pg_locked: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    """The EndCensus step (66 s instead of ~20 s in the issue; in AWS, past 900 s the Lambda died): retried,
    then written to census-end.json with its error, which the findings' census section names."""
    from cutover_prep import engines
    from cutover_prep.dal.store import evidence_key
    from cutover_prep.models.steps import CensusScope, EndCensusEvent, EndCensusPlan
    from cutover_prep.steps import end_census
    from tests.unit.contexts import context
    from tests.unit.stored_sections import census_section

    spec = pg_locked["spec"]
    monkeypatch.setattr(end_census, "connection_spec", lambda *_a, **_k: spec)
    run = context("lock-run", warmup={"databases": [spec.database]})
    start = [{"key": f"{spec.database}/public.t#table.main", "database": spec.database, "schema": "public",
              "name": "t", "kind": "table.main", "bytes": pg_locked["segment"].bytes, "readable": True}]
    store = _Evidence({})
    plan = EndCensusPlan(census=start, segments=[], scope=CensusScope(databases=[spec.database]))
    summary = ends_while_locked(lambda: end_census.take_end_census(
        EndCensusEvent(run=run, plan=plan), store=store, read_secret=lambda _arn: "",
        open_engine=lambda s, _w: engines.open_engine(s),
        budget_seconds=60, attempts=2).to_json(), *pg_locked["hold"])
    assert not isinstance(summary, BaseException), summary
    assert summary["taken"] is False and summary["error"] == "LockWaitTimeout", summary
    written = store.objects[evidence_key("lock-run", end_census.END_CENSUS)]
    assert written["census"] is None
    _named(written["error"]["cause"], pg_locked["pid"])
    section = census_section(start, {}, written["census"], written["catch_up"], end_failure=written["error"])
    assert section["end_census"] is False and section["end_census_failure"]["error"] == "LockWaitTimeout"


# -- MariaDB ------------------------------------------------------------------------------------------------
# A metadata lock held by another session (``LOCK TABLES t WRITE``) blocks a read of t; MariaDB's
# lock_wait_timeout (default 86400 s) bounds the wait (error 1205). Who holds a metadata lock the server says
# through the METADATA_LOCK_INFO plugin (MariaDB, "METADATA_LOCK_INFO Plugin") or performance_schema's
# metadata_locks (with the wait/lock/metadata/sql/mdl instrument); without either, the sessions connected to
# the table's schema are named as candidates. The machine's server has neither (performance_schema is off):
# the other two ways are proven on private servers.


def _mysql_connect(spec: Any, **kw: Any) -> Any:
    import pymysql

    return pymysql.connect(host=spec.host, port=spec.port, user=spec.user, password=spec.password,
                           autocommit=True, **kw)


@pytest.fixture(params=["shared", "metadata_lock_info", "performance_schema"])
def mariadb_server(request: pytest.FixtureRequest, mysql_admin: Any) -> Iterator[Any]:
    if request.param == "shared":
        yield mysql_admin
        return
    from cutover_prep.engines.mysql.sample_db import PrivateServer, PrivateServerUnavailable

    options = (("--plugin-load-add=metadata_lock_info",) if request.param == "metadata_lock_info"
               else ("--performance-schema-instrument=wait/lock/metadata/sql/mdl=ON",))
    try:
        server = PrivateServer(performance_schema=request.param == "performance_schema", options=options).start()
    except PrivateServerUnavailable as exc:
        pytest.skip(f"no private MariaDB: {exc}")
    try:
        yield replace(mysql_admin, host="127.0.0.1", port=server.port, user="root", password="")
    finally:
        server.close()


@pytest.fixture
def mariadb_locked(mariadb_server: Any, mysql_database: Callable[[str], str], request: pytest.FixtureRequest,
                   monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    """A database with table ``t``; its planned segment; then another session holding ``LOCK TABLES t WRITE``."""
    from cutover_prep.engines.mysql.engine import MySQLEngine

    monkeypatch.setenv("CUTOVER_PREP_LOCK_TIMEOUT_SECONDS", BOUND_S)
    database = mysql_database("locks")
    admin = _mysql_connect(mariadb_server)
    holder = None
    try:
        with admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE `{database}`")
            cur.execute(f"CREATE TABLE `{database}`.t (id INT PRIMARY KEY, v VARCHAR(40)) ENGINE=InnoDB")
            cur.execute(f"INSERT INTO `{database}`.t SELECT seq, MD5(seq) FROM `{database}`.seq_1_to_5000")
            cur.execute(f"ANALYZE TABLE `{database}`.t")
        spec = replace(mariadb_server, database=database)
        engine = MySQLEngine.connect(spec)
        try:
            segment = next(s for s in engine.discover(DiscoveryOptions(include_schemas=(database,)))
                           if s.name == "t" and s.kind == "clustered")
        finally:
            engine.close()
        holder = _mysql_connect(mariadb_server, database=database)
        with holder.cursor() as cur:
            cur.execute("LOCK TABLES t WRITE")
            cur.execute("SELECT CONNECTION_ID()")  # the judge: the server's id of the holding session
            holder_id = int(cur.fetchone()[0])

        def still_locked() -> bool:  # the holder is there, and nobody else has the table (it holds it)
            with admin.cursor() as cur:
                cur.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s", (holder_id,))
                alive = cur.fetchone()[0] == 1
                cur.execute(f"SHOW OPEN TABLES FROM `{database}` WHERE `Table` = 't' AND In_use > 0")
                return alive and len(cur.fetchall()) == 1

        def release() -> None:
            with holder.cursor() as cur:
                cur.execute("UNLOCK TABLES")

        yield {"spec": spec, "segment": segment, "holder_id": holder_id, "still_locked": still_locked,
               "database": database, "way": request.node.callspec.params["mariadb_server"],
               "hold": (still_locked, release)}
    finally:
        if holder is not None:
            with holder.cursor() as cur:
                cur.execute("UNLOCK TABLES")
            holder.close()
        with admin.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS `{database}`")
        admin.close()


@pytest.mark.mysql
def test_a_mariadb_read_ends_within_its_bound_naming_the_table_and_the_holder(
        mariadb_locked: dict[str, Any]) -> None:
    from cutover_prep.engines.mysql.engine import MySQLEngine

    segment = mariadb_locked["segment"]
    rng = ReadRange(segment_key=segment.key, locator=segment.locator, extents=segment.extents,
                    block_size=segment.block_size)
    engine = MySQLEngine.connect(mariadb_locked["spec"])
    try:
        got = ends_while_locked(lambda: engine.read_range(rng), *mariadb_locked["hold"])
    finally:
        engine.close()
    assert isinstance(got, LockWaitTimeout), got
    message = str(got)
    assert f"`{mariadb_locked['database']}`.`t`" in message, message  # quoted as MariaDB quotes identifiers
    assert f"id {mariadb_locked['holder_id']}" in message, message
    if mariadb_locked["way"] == "shared":  # neither plugin nor performance_schema: candidates, said so
        assert "candidates" in message, message
    else:
        assert "held by" in message and "candidates" not in message, message
