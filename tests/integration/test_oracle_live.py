"""The Oracle engine against a real Oracle database; runs only when ORACLE_DSN is set
(e.g. ORACLE_DSN=user/password@localhost:1521/FREEPDB1 with the gvenzl/oracle-free image)."""

from __future__ import annotations

import os
import re

import pytest

DSN = os.environ.get("ORACLE_DSN")
if not DSN:
    pytest.skip("ORACLE_DSN is not set: no Oracle database to test against (user/password@host:port/service)",
                allow_module_level=True)

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions  # noqa: E402
from cutover_prep.engines.oracle import OracleEngine  # noqa: E402
from cutover_prep.planning import PlanOptions, plan_units  # noqa: E402

pytestmark = pytest.mark.oracle


@pytest.fixture(scope="module")
def spec() -> ConnectionSpec:
    m = re.match(r"^(?P<user>[^/]+)/(?P<pw>[^@]+)@(?P<host>[^:/]+)(:(?P<port>\d+))?/(?P<svc>.+)$", DSN)
    assert m, "ORACLE_DSN must look like user/password@host:port/service"
    return ConnectionSpec("oracle", m["host"], int(m["port"] or 1521), m["svc"], m["user"], m["pw"])


def test_warm_a_table_index_and_lob_with_hostile_names(spec):
    engine = OracleEngine.connect(spec, call_timeout_seconds=120)
    cur = engine.conn.cursor()
    cur.execute('CREATE TABLE "Mixed ""Case"" T#1" ("Id" NUMBER PRIMARY KEY, "b$" CLOB)'.replace('""', ""))
    try:
        cur.execute('INSERT INTO "Mixed Case T#1" SELECT LEVEL, RPAD(\'x\', 9000, \'y\') FROM dual '
                    "CONNECT BY LEVEL <= 500")
        engine.conn.commit()
        owner = engine.conn.username.upper()
        segments = engine.discover(DiscoveryOptions(include_schemas=(owner,)))
        ours = [s for s in segments if s.locator.get("table") == "Mixed Case T#1" or s.name == "Mixed Case T#1"]
        assert {s.locator["read"] for s in ours} >= {"rowid_range", "lob"}
        plan = plan_units(ours, PlanOptions(unit_bytes=1 << 20))
        for unit in plan.units:
            for rng in unit.ranges:
                if rng.locator["read"] != "with_lob":
                    assert engine.read_range(rng).blocks == rng.blocks
    finally:
        cur.execute('DROP TABLE "Mixed Case T#1" PURGE')
        engine.close()
