"""Issue 21's judge for MariaDB: the emulated restored volume. A private MariaDB on the emulated
mount holds a database the run's user may read (every object kind of the sample catalogue, an
IGNORED index, a FULLTEXT index) and one it may not; the volume is restored (every chunk cold),
the server restarted, the census taken and every readable planned segment read as the warm-unit
Lambda reads it. The emulator knows, per file, which chunks were never read: every file of a
database below 99 % hydrated must then be named by the census as not read (no privilege, not
readable by SQL, free space, or not planned), and the files of what was read must be hydrated.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pymysql
import pytest

from cutover_prep.engines import ConnectionSpec, DiscoveryOptions
from cutover_prep.engines.mysql.engine import MySQLEngine
from cutover_prep.engines.mysql.sample_db import create_sample
from cutover_prep.warmup.planning import MIB, PlanOptions, plan_units
from cutover_prep.warmup.unit import chunks

pytestmark = pytest.mark.mysql
FUSE_OPTIONS = ("--innodb-flush-method=fsync", "--innodb-use-native-aio=0")  # as benchmarks/mysql_emulated.py


def connect(port: int, user: str = "root", password: str = "") -> Any:
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=password, autocommit=True,
                           charset="utf8mb4")


def test_every_cold_file_of_a_database_is_named_by_the_census(tmp_path: Path) -> None:
    from cutover_prep.engines.mysql.sample_db import PrivateServer, PrivateServerUnavailable
    from cutover_prep.local.volume import EmulatedVolume, VolumeProfile, fuse_unavailable

    reason = fuse_unavailable()
    if reason:
        pytest.skip(reason)
    # no caps and no latencies: the judge is the hydration map, which the daemon keeps whatever its profile
    with EmulatedVolume(tmp_path / "vol", VolumeProfile.unlimited()) as vol:
        try:
            server = PrivateServer(buffer_pool_mb=32, performance_schema=False, data_dir=vol.mountpoint / "data",
                                   options=FUSE_OPTIONS).start()
        except PrivateServerUnavailable as exc:
            pytest.skip(str(exc))
        try:
            conn = connect(server.port)
            create_sample(conn, "app", rows=400, blob_kib=8)
            with conn.cursor() as cur:
                cur.execute("CREATE TABLE app.kinds (id INT PRIMARY KEY, a INT, body TEXT, KEY ign (a) IGNORED, "
                            "FULLTEXT KEY ft (body)) ENGINE=InnoDB")
                cur.execute("INSERT INTO app.kinds SELECT seq, seq, CONCAT('word ', seq) FROM app.seq_1_to_500")
                cur.execute("CREATE DATABASE hidden")
                cur.execute("CREATE TABLE hidden.big (id INT PRIMARY KEY, pad CHAR(255) NOT NULL) ENGINE=InnoDB")
                cur.execute("INSERT INTO hidden.big SELECT seq, REPEAT('x', 255) FROM hidden.seq_1_to_3000")
                cur.execute("CREATE USER 'cutover_prep'@'127.0.0.1' IDENTIFIED BY 'pw-least'")
                cur.execute("GRANT SELECT ON app.* TO 'cutover_prep'@'127.0.0.1'")
                cur.execute("GRANT PROCESS ON *.* TO 'cutover_prep'@'127.0.0.1'")
            conn.close()
            server.stop()
            vol.restore()  # every chunk cold, as on a volume just created from a snapshot
            server.start()
            spec = ConnectionSpec(engine="mariadb", host="127.0.0.1", port=server.port, database="app",
                                  user="cutover_prep", password="pw-least", tls="disable")
            engine = MySQLEngine.connect(spec, call_timeout_seconds=600)
            try:
                census = engine.census(DiscoveryOptions())
                segments = engine.discover(DiscoveryOptions(include_schemas=("app",)))
                read: set[str] = set()
                readable = [s for s in segments if s.locator.to_json()["read"] != "not_readable"]
                for unit in plan_units(readable, PlanOptions(unit_bytes=64 * MIB)).units:
                    for chunk in chunks(unit.ranges, {"range": 0, "extent": 0, "offset": 0}, 8 * MIB):
                        engine.read_range(chunk.rng)
                        read.add(chunk.rng.segment_key)
            finally:
                engine.close()
            named_unread = {o.file for o in census if o.file and (o.reason or o.key not in read)}
            hydration = {}
            for db in ("app", "hidden"):
                for f in sorted((vol.backing / "data" / db).iterdir()):
                    if f.is_file() and f.stat().st_size:
                        hydration[f"{db}/{f.name}"] = vol.hydrated_pct(f"data/{db}/{f.name}")
            cold = {f: pct for f, pct in hydration.items() if pct is not None and pct < 99}
            unnamed = {f: pct for f, pct in cold.items() if f not in named_unread}
            assert not unnamed, f"cold and named nowhere: {unnamed}"
            assert "hidden/big.ibd" in cold and "hidden/big.ibd" in named_unread
            # a cold file is never named as empty: its size, or "size unknown" (MariaDB says FILE_SIZE 0 for a
            # tablespace it has not opened since the start; the file on the volume is not empty)
            empty = {o.key: o.file for o in census if o.file in cold and o.bytes == 0 and o.size_known
                     and (vol.backing / "data" / o.file).stat().st_size > 0}
            assert not empty, f"cold files named with 0 bytes: {empty}"
            read_files = {o.file for o in census if o.file and not o.reason and o.key in read}
            assert read_files and all(hydration.get(f, 100) >= 99 for f in read_files - named_unread), \
                {f: hydration.get(f) for f in read_files}
            print({"cold": cold, "app_hydrated_pct": vol.hydrated_pct("data/app"),
                   "hidden_hydrated_pct": vol.hydrated_pct("data/hidden"),
                   "unread_named_bytes": {o.key: o.bytes for o in census if o.file in cold}})
        finally:
            server.close()
    assert not os.path.ismount(tmp_path / "vol" / "mnt")
