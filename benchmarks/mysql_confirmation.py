"""The MySQL engine's confirmation figure on a private MariaDB instance (never the machine's server).

Starts MariaDB from the machine's binaries in a temporary directory (``PrivateServer``), fills the
sample catalogue, restarts it (empty buffer pool: no dump or load of the pool; InnoDB reads with
O_DIRECT, so the OS page cache does not serve it either), then:

1. the warm-up: discovery, planning and every chunk read as the warm-unit Lambda would, with
   nothing else reading (the confirmation figure);
2. after another restart, a cold probe (single-row primary-key lookups over a fixed sample of
   planned pages), the warm-up again, and the same probe warm.

It prints the pages the server read (``Innodb_pages_read``, ``Innodb_buffer_pool_reads``,
performance_schema's data-file bytes) against the pages planned, and the probes' latencies.

    .venv/bin/python benchmarks/mysql_confirmation.py [--rows 40000] [--blob-kib 48] [--pool-mb 512]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

import pymysql

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions
from cutover_prep.engines.mysql import block_readable
from cutover_prep.engines.mysql.bench import MySQLBench
from cutover_prep.engines.mysql.engine import MySQLEngine
from cutover_prep.engines.mysql.sample_db import PrivateServer, create_sample
from cutover_prep.measure.sample import BlockPicker
from cutover_prep.warmup.planning import MIB, PlanOptions, plan_units
from cutover_prep.warmup.unit import chunks

DB = "cutover_prep_bench"


def server_reads(spec: ConnectionSpec) -> dict[str, int]:
    conn = pymysql.connect(host=spec.host, port=spec.port, user=spec.user, password=spec.password)
    try:
        with conn.cursor() as cur:
            cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_pages_read', 'Innodb_buffer_pool_reads', "
                        "'Innodb_data_read', 'Innodb_buffer_pool_read_ahead')")
            out = {k.lower(): int(v) for k, v in cur.fetchall()}
            cur.execute("SELECT COALESCE(SUM(SUM_NUMBER_OF_BYTES_READ), 0) FROM "
                        "performance_schema.file_summary_by_instance "
                        "WHERE EVENT_NAME = 'wait/io/file/innodb/innodb_data_file'")
            out["ps_data_file_bytes_read"] = int(cur.fetchone()[0])
            return out
    finally:
        conn.close()


def probe(spec: ConnectionSpec, blocks: list[dict[str, Any]]) -> dict[str, float]:
    bench = MySQLBench.from_spec(spec, spec.database)
    reader = bench.random_reader()
    try:
        lat = []
        for b in blocks:
            t = time.perf_counter()
            reader.read_block(b["locator"], b["file_id"], b["block"])
            lat.append((time.perf_counter() - t) * 1e3)
    finally:
        reader.close()
        bench.close()
    lat.sort()
    return {"reads": len(lat), "p50_ms": round(statistics.median(lat), 3),
            "p90_ms": round(lat[int(len(lat) * 0.9)], 3), "mean_ms": round(statistics.fmean(lat), 3)}


def delta(a: dict[str, int], b: dict[str, int]) -> dict[str, int]:
    return {k: b[k] - a.get(k, 0) for k in b}


def main() -> None:
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--rows", type=int, default=40_000)
    args.add_argument("--blob-kib", type=int, default=48)
    args.add_argument("--pool-mb", type=int, default=512)
    args.add_argument("--chunk-mb", type=int, default=8)
    args.add_argument("--probe-blocks", type=int, default=300)
    opts = args.parse_args()
    server = PrivateServer(buffer_pool_mb=opts.pool_mb, performance_schema=True).start()
    try:
        spec = ConnectionSpec(engine="mariadb", host="127.0.0.1", port=server.port, database=DB, user="root",
                              password="", tls="disable")
        conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="", autocommit=True,
                               charset="utf8mb4")
        t = time.monotonic()
        counts = create_sample(conn, DB, rows=opts.rows, blob_kib=opts.blob_kib)
        conn.close()
        print(f"sample: {sum(counts.values()):,} rows in {len(counts)} tables, {time.monotonic() - t:.0f} s")
        server.restart()  # a cold buffer pool
        engine = MySQLEngine.connect(spec, call_timeout_seconds=600)
        segments = engine.discover(DiscoveryOptions(include_schemas=(DB,)))
        plan = plan_units(segments, PlanOptions(unit_bytes=64 * MIB))
        ranges = [r.to_json() for u in plan.units for r in u.ranges]
        sample = BlockPicker(ranges, seed=1).sample(opts.probe_blocks)
        assert all(block_readable(b["locator"]) for b in sample)
        label = engine.dialect.label
        engine.close()
        server.restart()  # discovery opened every table: start the warm-up from nothing again

        per_segment: dict[str, list[int]] = {}  # key -> [pages planned, pages the server read]

        def warm_up() -> tuple[int, float]:
            engine = MySQLEngine.connect(spec, call_timeout_seconds=600)
            t = time.monotonic()
            rows = 0
            try:
                for unit in plan.units:
                    for chunk in chunks(unit.ranges, {"range": 0, "extent": 0, "offset": 0}, opts.chunk_mb * MIB):
                        result = engine.read_range(chunk.rng)
                        rows += result.details["rows"]
                        seen = per_segment.setdefault(chunk.rng.segment_key, [0, 0])
                        seen[0] += chunk.rng.blocks
                        seen[1] += result.details["innodb"].get("innodb_pages_read", 0)
            finally:
                engine.close()
            return rows, time.monotonic() - t

        before = server_reads(spec)
        rows, seconds = warm_up()
        measured = {k: list(v) for k, v in per_segment.items()}
        after = server_reads(spec)
        server.restart()
        cold = probe(spec, sample)
        warm_up()
        warm = probe(spec, sample)
        planned = sum(s.blocks for s in segments)
        innodb_planned = sum(s.blocks for s in segments if s.locator.to_json().get("engine") == "innodb")
        read = delta(before, after)
        print(json.dumps({
            "server": label, "buffer_pool_mb": opts.pool_mb, "segments": len(segments),
            "units": len(plan.units), "pages_planned": planned, "rows_read": rows,
            "warmup_seconds": round(seconds, 1),
            "warmup_server_reads": read,
            "confirmation_innodb_pages_read_over_planned": round(read["innodb_pages_read"] / planned, 4),
            "confirmation_buffer_pool_reads_over_planned": round(read["innodb_buffer_pool_reads"] / planned, 4),
            "confirmation_ps_bytes_over_planned_bytes": round(read["ps_data_file_bytes_read"] / (planned * 16384), 4),
            "innodb_pages_planned": innodb_planned,
            "confirmation_innodb_pages_read_over_innodb_planned": round(read["innodb_pages_read"] / innodb_planned, 4),
            "probe_cold": cold, "probe_warm": warm,
            "segments_by_pages_read": {k: {"planned": p, "read": r} for k, (p, r) in
                                       sorted(measured.items(), key=lambda kv: -kv[1][1])[:8]},
        }, indent=1, ensure_ascii=False))
    finally:
        server.close()


if __name__ == "__main__":
    main()
