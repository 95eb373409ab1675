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


def test_benchmark_probe_sweep_and_write_test_against_oracle(spec):
    from cutover_prep.sweep.model import PointSpec, SweepOptions
    from cutover_prep.sweep.oracle import SCRATCH_TABLE, OracleBench
    from cutover_prep.sweep.runner import run_point, run_probe
    from cutover_prep.sweep.sample import BlockPicker, scan_target

    engine = OracleEngine.connect(spec, call_timeout_seconds=120)
    cur = engine.conn.cursor()
    cur.execute('CREATE TABLE "CP Bench" (id NUMBER, pad VARCHAR2(400))')
    try:
        cur.execute("INSERT INTO \"CP Bench\" SELECT LEVEL, RPAD('x', 400, 'x') FROM dual CONNECT BY LEVEL <= 20000")
        engine.conn.commit()
        owner = engine.conn.username.upper()
        segments = [s for s in engine.discover(DiscoveryOptions(include_schemas=(owner,))) if s.name == "CP Bench"]
        units = [u.to_json() for u in plan_units(segments, PlanOptions(unit_bytes=2**20)).units]
        bench = OracleBench.from_spec(spec, call_timeout_seconds=120)
        caps = bench.capabilities()
        assert caps["knobs"]["db_file_multiblock_read_count"]
        ranges = [r for u in units for r in u["ranges"]]
        probe = run_probe(bench, BlockPicker(ranges, seed=1).sample(20), phase="cold", max_seconds=60)
        assert probe["blocks_read"] == 20
        target = scan_target(units)
        (point,) = bench.io_size_points(SweepOptions(mbrc_values=(16,), seconds_per_point=2), target)
        m = run_point(bench, point, target=target, picker=None, block_size=target.block_size)
        assert m.client["bytes"] > 0
        r = run_point(bench, PointSpec("random-02s", "random", 1, sessions=2), target=None,
                      picker=lambda i: BlockPicker(ranges, seed=i), block_size=target.block_size)
        assert r.client["requests"] > 0
        run_point(bench, PointSpec("w", "write_direct", 1), target=None, picker=None, block_size=8192)
        cur.execute("SELECT COUNT(*) FROM user_tables WHERE table_name = :t", t=SCRATCH_TABLE)
        assert cur.fetchone()[0] == 0
        bench.close()
    finally:
        cur.execute('DROP TABLE "CP Bench" PURGE')
        engine.close()
