"""Issue 32, finding 5, on MariaDB: a table rebuilt (``OPTIMIZE TABLE``, ``ALTER TABLE ... FORCE``) after the plan.

What "read what exists now" means here: the MySQL engine reads a clustered segment by key ranges (``pk_walk``:
block ``b`` stands for row ordinal ``round(b * rows / pages)``, the last chunk reads to the end of the key range)
and a secondary index by a covering scan of the whole index. A rebuild writes every row into new pages (a new
tablespace, usually fewer pages), but the rows and their keys stay: a key range planned before it still names
the rows, and reading them reads the pages that hold them now. So nothing planned is gone, every unit ends DONE,
and the end census's size (the rebuilt table's) is what the read is judged against.

Judges: the server's ``Innodb_pages_read`` (pages read from storage while the units read; the private server is
restarted after the rebuild so its buffer pool is empty), the rebuilt clustered index's size in pages
(``mysql.innodb_index_stats`` ``size`` after ``ANALYZE``), and the rows every read counted against ``COUNT(*)``.
A private MariaDB is used: the machine's server is shared and its buffer pool cannot be emptied.

These tests passed on the code before issue 32's fix as well: MySQL/MariaDB had no such fault (key ranges, not
page numbers); they hold the behaviour. Measured here: 609 pages planned, 353 after the rebuild, 352-353 pages
read from storage by the 9 later units after the restart.
"""

from __future__ import annotations

import pymysql
import pytest

from cutover_prep.dal.store import Store
from cutover_prep.engines import ConnectionSpec, DiscoveryOptions
from cutover_prep.engines.mysql.engine import MySQLEngine
from cutover_prep.engines.mysql.sample_db import PrivateServer, PrivateServerUnavailable
from cutover_prep.engines.mysql.sql import qualified, quote_ident
from cutover_prep.warmup.planning import PlanOptions, plan_units
from cutover_prep.warmup.unit import Budget
from tests.unit.conftest import store  # noqa: F401 - the moto Store fixture
from tests.unit.contexts import warm_json

pytestmark = pytest.mark.mysql
DB, ROWS = "cp_rebuilt", 12000


@pytest.fixture(autouse=True)
def _private_server_has_no_tls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CUTOVER_PREP_TLS", "disable")


@pytest.fixture
def private() -> ConnectionSpec:
    try:
        server = PrivateServer().start()
    except PrivateServerUnavailable as exc:
        pytest.skip(f"no private MariaDB: {exc}")
    try:
        yield server, ConnectionSpec(engine="mariadb", host="127.0.0.1", port=server.port, database=DB,
                                     user="root", password="", tls="disable")
    finally:
        server.close()


def _admin(spec: ConnectionSpec):
    return pymysql.connect(host=spec.host, port=spec.port, user=spec.user, password=spec.password, autocommit=True)


def _scalar(spec: ConnectionSpec, statement: str) -> int:
    conn = _admin(spec)
    try:
        with conn.cursor() as cur:
            cur.execute(statement)
            return int(cur.fetchone()[-1])
    finally:
        conn.close()


def _run(spec: ConnectionSpec, *statements: str) -> None:
    conn = _admin(spec)
    try:
        with conn.cursor() as cur:
            for statement in statements:
                cur.execute(statement)
                cur.fetchall()
    finally:
        conn.close()


def _make_table(spec: ConnectionSpec) -> None:
    t = qualified(DB, "t")
    _run(spec, f"DROP DATABASE IF EXISTS {quote_ident(DB)}", f"CREATE DATABASE {quote_ident(DB)}",
         f"CREATE TABLE {t} (id INT NOT NULL PRIMARY KEY, k INT NOT NULL, body TEXT, KEY k_idx (k)) ENGINE=InnoDB")
    conn = _admin(spec)
    with conn.cursor() as cur:
        cur.executemany(f"INSERT INTO {t} VALUES (%s, %s, %s)", [(i, i % 97, "z" * 700) for i in range(ROWS)])
    conn.close()
    # half the rows deleted: the rebuild has much less to write, so its page count really changes
    _run(spec, f"DELETE FROM {t} WHERE id % 2 = 1", f"ANALYZE TABLE {t}")


@pytest.mark.parametrize("rebuild", ["OPTIMIZE TABLE {t}", "ALTER TABLE {t} FORCE"])
def test_units_of_a_table_rebuilt_after_the_plan_end_done_and_read_its_pages(private, store: Store,  # noqa: F811
                                                                             rebuild: str) -> None:
    server, spec = private
    _make_table(spec)
    engine = MySQLEngine.connect(spec)
    try:
        segments = [s for s in engine.discover(DiscoveryOptions(include_schemas=(DB,))) if s.name == "t"]
    finally:
        engine.close()
    clustered = next(s for s in segments if s.kind == "clustered")
    units = plan_units(segments, PlanOptions(unit_bytes=2**20)).units
    assert len(units) >= 4
    store.start_run({"run_id": "rebuilt", "target": {"db_instance_identifier": "db1"},
                     "started_at": "2026-11-27T00:00:00+00:00", "warmup": {}})
    rows: list[int] = []

    def warm(unit) -> None:
        engine = MySQLEngine.connect(spec)
        try:
            def read(rng, engine=engine):
                result = engine.read_range(rng)
                rows.append(result.details["rows"] if rng.segment_key == clustered.key else 0)
                return result
            reader = type("Reader", (), {"read_range": staticmethod(read), "close": engine.close,
                                         "name": engine.name})()
            event = {"run": {"run_id": "rebuilt", "warmup": {"assumed_cold_mib_per_s": 1000.0, "chunk_mb": 1}},
                     "unit": unit.to_json()}
            warm_json(event, store=store, engine=lambda: reader, budget=Budget(lambda: 10_000.0, 30.0),
                      sleep=lambda s: None)
        finally:
            engine.close()

    warm(units[0])  # the first unit, then the rebuild, mid-plan
    t = qualified(DB, "t")
    _run(spec, rebuild.format(t=t), f"ANALYZE TABLE {t}")
    pages_now = _scalar(spec, "SELECT stat_value FROM mysql.innodb_index_stats WHERE database_name = "
                              f"'{DB}' AND table_name = 't' AND index_name = 'PRIMARY' AND stat_name = 'size'")
    assert pages_now < clustered.blocks  # the rebuild changed the pages: fewer than planned
    server.restart()  # an empty buffer pool: every page the later units need is read from storage
    before = _scalar(spec, "SHOW GLOBAL STATUS LIKE 'Innodb_pages_read'")
    for unit in units[1:]:
        warm(unit)
    pages_read = _scalar(spec, "SHOW GLOBAL STATUS LIKE 'Innodb_pages_read'") - before
    items = [i.stored() if (i := store.get_unit("rebuilt", u.unit_id)) else {} for u in units]
    assert {i.get("status") for i in items} == {"DONE"}, [(i.get("error"), i.get("cause")) for i in items]
    # every row of the rebuilt table was read once (the first unit's rows before the rebuild included)
    assert sum(rows) == _scalar(spec, f"SELECT COUNT(*) FROM {t}")
    first_share = units[0].ranges[0].blocks / clustered.blocks if units[0].ranges[0].segment_key == clustered.key \
        else 0.0
    # the server read at least the rebuilt clustered index's pages the later units cover (the rest of the index
    # and the secondary index: more)
    assert pages_read >= int(pages_now * (1 - first_share)) - 2, (pages_read, pages_now, first_share)


def test_a_run_whose_table_is_rebuilt_after_its_first_unit_reads_every_unit_and_the_rebuilt_table(
        private) -> None:
    """The whole workflow (local harness): ``OPTIMIZE TABLE`` runs when the store says the table's first unit is
    DONE (a hook before each WarmUnit invocation; one unit at a time). Every unit ends DONE, coverage is 100 %,
    and the end census (the rebuilt table's size) names none of the table's indexes unread."""
    from cutover_prep.dal.store import evidence_key
    from cutover_prep.local.harness import LocalAws
    from tests.integration.test_workflow import finish, store_of

    server, spec = private
    _make_table(spec)
    run_id, seen = "rebuilt-run", {}
    with LocalAws() as aws:
        aws.create_instance("restored-db", engine="mariadb", engine_version="10.11.6", db_name=DB)
        store = store_of(aws)
        aws.allow_db_host(spec.host)

        def rebuild_after_the_first_unit() -> None:
            if "pages" in seen or not store.exists(evidence_key(run_id, "units.json")):
                return
            units = store.get_json(evidence_key(run_id, "units.json"))
            mine = [u["unit_id"] for u in units if any(r["segment"].endswith(".t#clustered") for r in u["ranges"])]
            if any(getattr(store.get_unit(run_id, u), "status", None) == "DONE" for u in mine):
                seen["units"] = len(mine)
                _run(spec, f"OPTIMIZE TABLE {qualified(DB, 't')}")
                seen["pages"] = True

        aws.hooks["handlers.warm_unit"] = rebuild_after_the_first_unit
        secret = aws.create_secret("db", {"username": spec.user, "password": spec.password, "engine": "mariadb",
                                          "dbInstanceIdentifier": "restored-db"})
        desc = finish(aws, {"run_id": run_id,
                            "target": {"db_instance_identifier": "restored-db", "secret_arn": secret,
                                       "engine": "mariadb", "host": spec.host, "port": spec.port, "database": DB},
                            "warmup": {"unit_mb": 1, "chunk_mb": 1, "include_schemas": [DB], "max_concurrency": 1},
                            "benchmark": {"enabled": False}})
        findings = store.get_json(evidence_key(run_id, "findings.json"))
    assert desc["status"] == "SUCCEEDED", desc.get("cause")
    assert seen.get("pages") and seen["units"] >= 3  # rebuilt mid-plan, with units of the table still to read
    assert findings["units"]["failed"] == 0 and findings["units"]["done"] == findings["units"]["total"]
    assert findings["coverage_pct"] == 100.0
    unread = [u for u in findings["census"]["unread"] if u["key"].startswith(f"{DB}.t")]
    assert all(u["reason"] == "engine-internal" for u in unread), unread  # the free extents only, if any
