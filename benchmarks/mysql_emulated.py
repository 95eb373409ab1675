"""The MySQL engine on the restored-volume emulator: a private MariaDB whose datadir is on the emulated
mount (``cutover_prep.local.volume``), never the machine's server.

Creates the sample catalogue on the mount, stops the server, marks every chunk of the volume cold
(``restore()``, as a volume just created from a snapshot), starts the server again (cold buffer
pool), then: a cold probe, the warm-up (every chunk as the warm-unit Lambda reads it), a warm
probe of the same rows. Prints how much of the database's files the warm-up hydrated (the
emulator's own count, independent of the server's counters) and the pages the server read.

    .venv/bin/python benchmarks/mysql_emulated.py [--rows 15000] [--blob-kib 32]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import pymysql

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions
from cutover_prep.engines.mysql.engine import MySQLEngine
from cutover_prep.engines.mysql.sample_db import PrivateServer, create_sample
from cutover_prep.local.volume import EmulatedVolume, fuse_unavailable
from cutover_prep.measure.sample import BlockPicker
from cutover_prep.warmup.planning import MIB, PlanOptions, plan_units
from cutover_prep.warmup.unit import chunks

DB = "cutover_prep_bench"
# InnoDB on a FUSE mount: no O_DIRECT (the mount is direct_io already: no page cache), no native AIO.
FUSE_OPTIONS = ("--innodb-flush-method=fsync", "--innodb-use-native-aio=0")


def main() -> None:
    from mysql_confirmation import delta, probe, server_reads  # the sibling bench script

    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("--rows", type=int, default=15_000)
    args.add_argument("--blob-kib", type=int, default=32)
    args.add_argument("--pool-mb", type=int, default=256)
    args.add_argument("--chunk-mb", type=int, default=8)
    args.add_argument("--probe-blocks", type=int, default=200)
    opts = args.parse_args()
    reason = fuse_unavailable()
    if reason:
        raise SystemExit(f"the emulator cannot run here: {reason}")
    with tempfile.TemporaryDirectory(prefix="cutover-prep-mysql-emulated-") as work, \
            EmulatedVolume(Path(work)) as vol:
        server = PrivateServer(buffer_pool_mb=opts.pool_mb, data_dir=vol.mountpoint / "data", options=FUSE_OPTIONS)
        try:
            server.start()
            spec = ConnectionSpec(engine="mariadb", host="127.0.0.1", port=server.port, database=DB, user="root",
                                  password="", tls="disable")
            conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="", autocommit=True,
                                   charset="utf8mb4")
            counts = create_sample(conn, DB, rows=opts.rows, blob_kib=opts.blob_kib)
            conn.close()
            engine = MySQLEngine.connect(spec)
            segments = engine.discover(DiscoveryOptions(include_schemas=(DB,)))
            engine.close()
            plan = plan_units(segments, PlanOptions(unit_bytes=64 * MIB))
            sample = BlockPicker([r.to_json() for u in plan.units for r in u.ranges], seed=1).sample(opts.probe_blocks)
            server.stop()
            vol.restore()  # every chunk cold, as on a volume just restored from a snapshot
            server.start()
            cold = probe(spec, sample)
            hydrated_before = vol.hydrated_pct(f"data/{DB}")
            before = server_reads(spec)
            engine = MySQLEngine.connect(spec, call_timeout_seconds=3600)
            t, rows = time.monotonic(), 0
            for unit in plan.units:
                for chunk in chunks(unit.ranges, {"range": 0, "extent": 0, "offset": 0}, opts.chunk_mb * MIB):
                    rows += engine.read_range(chunk.rng).details["rows"]
            seconds = time.monotonic() - t
            engine.close()
            after = server_reads(spec)
            warm = probe(spec, sample)
            planned = sum(s.blocks for s in segments)
            conn = pymysql.connect(host="127.0.0.1", port=server.port, user="root", password="")
            with conn.cursor() as cur:  # what InnoDB says is free in each file (allocated, holding no rows)
                cur.execute("SELECT TABLE_NAME, DATA_LENGTH + INDEX_LENGTH, DATA_FREE FROM INFORMATION_SCHEMA.TABLES "
                            "WHERE TABLE_SCHEMA = %s AND ENGINE = 'InnoDB'", (DB,))
                used_free = {str(t): [int(u), int(f)] for t, u, f in cur.fetchall()}
            conn.close()
            files = {f.name: (f.stat().st_size, vol.hydrated_pct(f"data/{DB}/{f.name}"))
                     for f in sorted((vol.backing / "data" / DB).iterdir()) if f.is_file()}
            print(json.dumps({
                "rows_in_sample": sum(counts.values()), "rows_read": rows, "pages_planned": planned,
                "warmup_seconds": round(seconds, 1),
                "db_files_hydrated_pct_after_cold_probe": hydrated_before,
                "db_files_hydrated_pct_after_warmup": vol.hydrated_pct(f"data/{DB}"),
                "whole_volume_hydrated_pct": vol.hydrated_pct("/"),
                "innodb_pages_read_over_planned": round(delta(before, after)["innodb_pages_read"] / planned, 4),
                "probe_cold": cold, "probe_warm": warm,
                "files_bytes_and_hydrated_pct": files,
                "innodb_tables_used_and_free_bytes": used_free,
            }, indent=1, ensure_ascii=False))
        finally:
            server.close()


if __name__ == "__main__":
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    main()
