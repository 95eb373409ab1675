"""Issue 21's judge for PostgreSQL: the emulated restored volume knows, per file, which chunks were never
read. A database with every object kind (large objects, TOAST, an unlogged table, a partitioned table,
btree/hash/GIN/GiST/BRIN indexes, a materialized view, a sequence) and a second database the run cannot
connect to (``ALLOW_CONNECTIONS false``) live in a tablespace on the volume; the volume is restored
cold; ``cutover-prep local --dsn`` warms it. Then every file on the volume below 99 % hydrated must be
named in the findings (the census's unread objects: by its file, or its database as a whole), and the
verdict is READY exactly when nothing un-waived is unread.

Skipped where FUSE cannot be had or the PostgreSQL server under test is not on this machine.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from cutover_prep.cli.main import main
from cutover_prep.local.volume import EmulatedVolume, VolumeProfile, fuse_unavailable
from cutover_prep.local.volume.state import HydrationState
from tests.conftest import conninfo

pytestmark = [pytest.mark.postgres,
              pytest.mark.skipif(fuse_unavailable() is not None, reason=fuse_unavailable() or "")]

PROFILE = VolumeProfile(time_scale=1.0, first_touch_p50_ms=0.5, io_latency_ms=0.05)
OBJECTS = [
    "CREATE TABLE docs (id int PRIMARY KEY, body text, tags text[], span int4range, created date)",
    "INSERT INTO docs SELECT g, repeat(md5(g::text), 300), ARRAY[md5(g::text)], int4range(g, g + 10), "
    "date '2026-01-01' + g % 300 FROM generate_series(1, 3000) g",  # body ~9.6 KB: TOAST
    "CREATE INDEX docs_hash ON docs USING hash (id)",
    "CREATE INDEX docs_gin ON docs USING gin (tags)",
    "CREATE INDEX docs_gist ON docs USING gist (span)",
    "CREATE INDEX docs_brin ON docs USING brin (created)",
    "CREATE UNLOGGED TABLE scratchpad AS SELECT g AS id, md5(g::text) AS v FROM generate_series(1, 20000) g",
    "CREATE TABLE orders (id int, at date, total numeric) PARTITION BY RANGE (at)",
    "CREATE TABLE orders_2025 PARTITION OF orders FOR VALUES FROM ('2025-01-01') TO ('2026-01-01')",
    "CREATE TABLE orders_2026 PARTITION OF orders FOR VALUES FROM ('2026-01-01') TO ('2027-01-01')",
    "INSERT INTO orders SELECT g, date '2025-01-01' + g % 700, g FROM generate_series(1, 40000) g",
    "CREATE INDEX orders_at ON orders (at)",
    "CREATE MATERIALIZED VIEW totals AS SELECT at, sum(total) FROM orders GROUP BY at",
    "CREATE SEQUENCE ticket_no",
    "SELECT lo_from_bytea(0, (SELECT decode(string_agg(md5(random()::text || g), ''), 'hex') "
    "FROM generate_series(1, 65536 * 4) g))",  # a 4 MiB large object
]


def _cold_files(vol: EmulatedVolume, below_pct: float = 99.0) -> dict[str, float]:
    """Volume path -> hydrated % of every file below ``below_pct`` (the emulator's own map)."""
    vol.counters()  # the daemon writes its state now
    state = HydrationState.load(vol.state_path, vol.profile.chunk_bytes)
    out = {}
    for rel, bits in state._files.items():  # noqa: SLF001 - the judge reads the map as the daemon saved it
        if bits and 100.0 * bits.count(1) / len(bits) < below_pct:
            out[rel] = round(100.0 * bits.count(1) / len(bits), 1)
    return out


@pytest.fixture
def volume_databases(pg_admin: Any) -> Any:
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        data_dir = Path(conn.execute("SHOW data_directory").fetchone()[0])
    if pg_admin.host.startswith("/") or not data_dir.exists():
        pytest.skip("the PostgreSQL server under test is not on this machine (or listens on a socket only)")
    owner = data_dir.stat()
    tag = uuid.uuid4().hex[:8]
    space, judged, hidden = f"cutover_census_{tag}", f"cutover_prep_test_{tag}", f"cutover_prep_hidden_{tag}"
    work = Path(tempfile.mkdtemp(prefix="cutover-census-test-"))  # tests/tmp_guard.py: world-traversable
    work.chmod(0o755)
    vol = EmulatedVolume(work, PROFILE).mount()
    admin = psycopg.connect(conninfo(pg_admin), autocommit=True)
    try:
        location = vol.mountpoint / "tblspc"
        location.mkdir()
        os.chown(location, owner.st_uid, owner.st_gid)
        admin.execute(sql.SQL("CREATE TABLESPACE {} LOCATION {}").format(sql.Identifier(space),
                                                                         sql.Literal(str(location))))
        for name in (judged, hidden):
            admin.execute(sql.SQL("CREATE DATABASE {} TABLESPACE {}").format(sql.Identifier(name),
                                                                             sql.Identifier(space)))
        with psycopg.connect(conninfo(pg_admin, hidden), autocommit=True) as conn:
            conn.execute("CREATE TABLE kept AS SELECT g, md5(g::text) FROM generate_series(1, 50000) g")
        admin.execute(sql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(sql.Identifier(hidden)))
        with psycopg.connect(conninfo(pg_admin, judged), autocommit=True) as conn:
            for statement in OBJECTS:
                conn.execute(statement)
            conn.execute("VACUUM ANALYZE")  # fsm and vm forks
        admin.execute("CHECKPOINT")
        oids = dict(admin.execute("SELECT oid::text, datname FROM pg_database WHERE datname IN (%s, %s)",
                                  (judged, hidden)).fetchall())
        yield {"vol": vol, "judged": judged, "hidden": hidden, "oids": oids, "pg_admin": pg_admin}
    finally:
        for name in (judged, hidden):
            admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        admin.execute(sql.SQL("DROP TABLESPACE IF EXISTS {}").format(sql.Identifier(space)))
        admin.close()
        vol.unmount()
        if os.path.ismount(work / "mnt"):
            subprocess.run(["fusermount3", "-u", "-z", str(work / "mnt")], check=False)
        shutil.rmtree(work, ignore_errors=True)


def _run(env: dict[str, Any], tmp_path: Path, databases: list[str]) -> tuple[int, dict[str, Any]]:
    spec = env["pg_admin"]
    args = ["local", "--dsn", f"postgresql://{spec.user}@{spec.host}:{spec.port}/{env['judged']}", "--out",
            str(tmp_path), "--no-progress", "--no-benchmark"]
    for name in databases:
        args += ["--database", name]
    code = main(args)
    return code, json.loads(next(tmp_path.rglob("findings.json")).read_text())


def _unnamed(cold: dict[str, float], findings: dict[str, Any], oids: dict[str, str]) -> list[str]:
    """Cold files that no unread census object names (by its file, or its whole database)."""
    unread = (findings.get("census") or {}).get("unread") or []
    files = {u["file"].split("/", 2)[2] for u in unread if (u.get("file") or "").startswith("pg_tblspc/")}
    whole = {u["database"] for u in unread if u["kind"] == "database"}
    out = []
    for rel in cold:  # /tblspc/PG_15_<catversion>/<database oid>/<file>
        parts = rel.strip("/").split("/")
        if len(parts) == 4 and oids.get(parts[2]) in whole:
            continue
        if "/".join(parts[1:]) not in files:
            out.append(f"{rel} ({cold[rel]} %)")
    return sorted(out)


def test_every_cold_file_is_named_and_ready_exactly_when_nothing_unwaived_is_unread(volume_databases: Any,
                                                                                  tmp_path: Path) -> None:
    env = volume_databases
    vol, oids = env["vol"], env["oids"]
    hidden_oid = next(oid for oid, name in oids.items() if name == env["hidden"])

    # 1. the judged database only: the hidden one is excluded by the input (a waiver), so READY
    vol.restore()
    code, findings = _run(env, tmp_path / "judged", [env["judged"]])
    cold = _cold_files(vol)
    assert _unnamed(cold, findings, oids) == []
    assert any(f"/{hidden_oid}/" in rel for rel in cold)  # the hidden database stayed cold, and is named:
    named = {u["database"]: u for u in findings["census"]["unread"] if u["kind"] == "database"}
    assert named[env["hidden"]]["reason"] == "excluded by input" and named[env["hidden"]]["waived"]
    assert named[env["hidden"]]["bytes"] > 2 * 2**20  # pg_database_size: its table and catalogue
    judged_cold = [rel for rel in cold if f"/{hidden_oid}/" not in rel]
    assert judged_cold == [] and findings["census"]["unread_bytes"] == 0
    assert code == 0 and findings["verdict"]["verdict"] == "READY"

    # 2. both databases asked for: the one the run cannot connect to is unread and not waived, NOT_READY
    vol.restore()
    code, findings = _run(env, tmp_path / "both", [env["judged"], env["hidden"]])
    cold = _cold_files(vol)
    assert _unnamed(cold, findings, oids) == []
    named = {u["database"]: u for u in findings["census"]["unread"] if u["kind"] == "database"}
    assert (named[env["hidden"]]["reason"], named[env["hidden"]]["waived"]) == ("not readable by SQL", False)
    assert findings["census"]["unread_bytes"] == named[env["hidden"]]["bytes"]
    failing = {r["code"] for r in findings["verdict"]["reasons"] if not r["ok"]}
    assert code == 1 and failing == {"UNREAD_OBJECTS"}
