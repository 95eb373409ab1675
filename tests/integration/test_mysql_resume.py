"""The MySQL engine in the engine-neutral warm-unit loop (warmup/unit.py) with the real Store on moto:
a unit cut short by its time budget continues in a new invocation with a new engine (a new Lambda
container, nothing remembered) and ends DONE with every planned page counted once and every row
read once."""

from __future__ import annotations

from dataclasses import replace

import pymysql
import pytest

from cutover_prep.dal.store import Store
from cutover_prep.engines import DiscoveryOptions
from cutover_prep.engines.mysql.engine import MySQLEngine
from cutover_prep.engines.mysql.sql import qualified, quote_ident
from cutover_prep.models.status import UnitStatus, WarmStep
from cutover_prep.warmup.planning import PlanOptions, plan_units
from cutover_prep.warmup.unit import Budget
from tests.unit.conftest import store  # noqa: F401 - the moto Store fixture
from tests.unit.contexts import warm_json

pytestmark = pytest.mark.mysql
RUN_ID = "mysql-resume"


class Counting:
    """The engine, counting the rows each read confirmed."""

    def __init__(self, engine: MySQLEngine, rows: list[int]) -> None:
        self.engine, self.rows, self.name = engine, rows, engine.name

    def read_range(self, rng):
        result = self.engine.read_range(rng)
        self.rows.append(result.details["rows"])
        return result

    def close(self) -> None:
        self.engine.close()


def test_a_unit_cut_short_resumes_in_a_new_container_and_counts_each_page_and_row_once(
        mysql_admin, mysql_database, store: Store) -> None:  # noqa: F811
    name = mysql_database("resume")
    conn = pymysql.connect(host=mysql_admin.host, port=mysql_admin.port, user=mysql_admin.user,
                           password=mysql_admin.password, autocommit=True)
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE {quote_ident(name)}")
        cur.execute(f"CREATE TABLE {qualified(name, 'k')} (a VARCHAR(20) NOT NULL, b INT NOT NULL, "
                    "body TEXT, PRIMARY KEY (a, b)) ENGINE=InnoDB")
        cur.executemany(f"INSERT INTO {qualified(name, 'k')} VALUES (%s, %s, %s)",
                        [(f"k{i % 37:03d}", i * 17, "z" * 900) for i in range(12000)])
        cur.execute(f"ANALYZE TABLE {qualified(name, 'k')}")
        cur.fetchall()
    conn.close()
    spec = replace(mysql_admin, database=name, tls="disable")
    probe = MySQLEngine.connect(spec)
    segment = next(s for s in probe.discover(DiscoveryOptions(include_schemas=(name,))) if s.kind == "clustered")
    probe.close()
    (unit,) = plan_units([segment], PlanOptions(unit_bytes=segment.bytes)).units
    store.start_run({"run_id": RUN_ID, "target": {"db_instance_identifier": "db1"},
                     "started_at": "2024-01-01T00:00:00+00:00", "warmup": {}})
    event = {"run": {"run_id": RUN_ID, "warmup": {"assumed_cold_mib_per_s": 1000.0, "chunk_mb": 1}},
             "unit": unit.to_json()}
    clock = iter([100.0] + [0.0] * 10_000)  # time for the first chunk only, then the budget says stop
    rows: list[int] = []
    invocations = 0
    while True:
        invocations += 1
        engine = Counting(MySQLEngine.connect(spec), rows)  # every invocation: a new container
        budget = Budget(remaining_seconds=lambda: next(clock, 0.0), safety_margin_seconds=1.0)
        try:
            out = warm_json(event, store=store, engine=lambda engine=engine: engine, budget=budget,
                            sleep=lambda s: None)
        finally:
            engine.close()
        if out["status"] != WarmStep.CONTINUE:
            break
    assert out["status"] == WarmStep.DONE and invocations > 2
    item = store.get_unit(RUN_ID, unit.unit_id).stored()
    assert item["status"] == UnitStatus.DONE and int(item["blocks_read"]) == segment.blocks
    assert sum(rows) == 12000  # every row once, although each invocation walked to its bound again
