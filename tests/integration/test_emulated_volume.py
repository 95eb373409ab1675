"""The emulated restored volume, mounted for real (FUSE): lazy loading, counters, persistence,
ownership, dying with its parent, and a PostgreSQL tablespace on it. Skipped where FUSE cannot be
used, with fuse_unavailable()'s reason."""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import uuid
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from cutover_prep.local.volume import EmulatedVolume, VolumeProfile, fuse_unavailable
from tests.conftest import conninfo

pytestmark = pytest.mark.skipif(fuse_unavailable() is not None, reason=fuse_unavailable() or "")

MIB = 1024 * 1024
# Fast enough for a test: the real caps (gp3 100 GiB, 125 MiB/s) unscaled, a short first touch.
PROFILE = VolumeProfile(time_scale=1.0, first_touch_p50_ms=2.0, io_latency_ms=0.2)


@pytest.fixture
def workdir():
    # world-traversable: PostgreSQL (another OS user) must reach the mountpoint
    path = Path(tempfile.mkdtemp(prefix="cutover-volume-test-"))  # tests/tmp_guard.py: world-traversable
    path.chmod(0o755)
    yield path
    if os.path.ismount(path / "mnt"):
        subprocess.run(["fusermount3", "-u", "-z", str(path / "mnt")], check=False)
    shutil.rmtree(path, ignore_errors=True)


def _read_all(path: Path, block: int = MIB) -> str:
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        while chunk := f.read(block):
            digest.update(chunk)
    return digest.hexdigest()


FILE_MIB = 16  # 32 snapshot chunks of 512 KiB, 64 IOs of 256 KiB: what is counted is per chunk and per IO


def test_cold_then_warm_read_and_the_state_survives_a_remount(workdir):
    chunks, size = FILE_MIB * MIB // PROFILE.chunk_bytes, FILE_MIB * MIB
    assert chunks == 32
    payload = os.urandom(size)
    with EmulatedVolume(workdir, PROFILE, seed=1) as vol:
        target = vol.mountpoint / "data" / "file.bin"
        target.parent.mkdir()
        target.write_bytes(payload)
        assert (vol.backing / "data" / "file.bin").stat().st_size == size
        vol.restore()
        before = vol.counters()
        assert before["chunks_total"] == chunks and before["chunks_hydrated"] == 0 and before["hydrated_pct"] == 0
        # the daemon serves the caps its parent computed for the profile (it no longer imports the analyser)
        assert before["profile"] == PROFILE.describe()
        assert before["bytes_written"] == size

        assert _read_all(target) == hashlib.sha256(payload).hexdigest()
        cold = vol.counters()
        assert cold["hydrated_pct"] == 100.0
        assert cold["fetches"] - before["fetches"] == chunks  # one per chunk
        assert cold["bytes_served"] - before["bytes_served"] == size
        assert cold["fetch_wait_s"] > 0 and cold["first_touch_ms_p50"] > 0
        assert cold["ios_counted"] - before["ios_counted"] == size // (256 * 1024)  # in 256 KiB IOs

        _read_all(target)
        warm = vol.counters()
        assert warm["fetches"] == cold["fetches"] and warm["fetch_wait_s"] == cold["fetch_wait_s"]
        assert warm["bytes_served"] - cold["bytes_served"] == size
        assert vol.hydrated_pct("/data") == 100.0 and vol.hydrated_pct("/nothing") is None
    assert not os.path.ismount(workdir / "mnt")

    with EmulatedVolume(workdir, PROFILE) as vol:  # a restarted run sees the same volume
        assert vol.counters()["chunks_hydrated"] == chunks
        _read_all(vol.mountpoint / "data" / "file.bin")
        assert vol.counters()["fetches"] == 0
    vol.restore()  # unmounted: the state file is rewritten
    assert vol.hydrated_pct("/data") == 0.0
    with vol:
        assert vol.counters()["chunks_hydrated"] == 0
        with open(vol.mountpoint / "data" / "file.bin", "rb", buffering=0) as f:
            f.seek(3 * MIB + 100)
            f.read(8192)
        counters = vol.counters()
        assert counters["fetches"] == 1 and counters["chunks_hydrated"] == 1


def test_concurrent_readers_of_one_chunk_wait_on_one_fetch_and_writes_hydrate(workdir):
    # a 1 s fetch: eight threads started on a loaded machine (CI of 2026-11-27: 36 min for the suite) reach the
    # chunk up to a few hundred ms apart, and each waits only for what is left of the fetch when it arrives
    slow = VolumeProfile(time_scale=1.0, first_touch_p50_ms=1000.0, first_touch_sigma=0.0, io_latency_ms=0.1)
    with EmulatedVolume(workdir, slow) as vol:
        target = vol.mountpoint / "f"
        target.write_bytes(os.urandom(4 * MIB))
        vol.restore()

        def read_block(offset: int) -> None:
            with open(target, "rb", buffering=0) as f:
                f.seek(offset)
                f.read(8192)

        start = threading.Barrier(8)

        def together(offset: int) -> None:
            start.wait()
            read_block(offset)

        threads = [threading.Thread(target=together, args=(i * 8192,)) for i in range(8)]  # all in chunk 0
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        counters = vol.counters()
        assert counters["fetches"] == 1 and counters["chunks_hydrated"] == 1
        assert counters["fetch_wait_s"] >= 8 * 0.75  # every reader waited for it

        with open(target, "r+b", buffering=0) as f:
            f.seek(1 * 512 * 1024)
            f.write(b"\0" * 512 * 1024)  # covers chunk 1 entirely: nothing to fetch
            f.seek(2 * 512 * 1024 + 10)
            f.write(b"x" * 100)  # part of chunk 2: fetched first, as EBS does
        counters = vol.counters()
        assert counters["fetches"] == 2 and counters["chunks_hydrated"] == 3


def test_files_belong_to_the_calling_user_and_the_namespace_is_tracked(workdir):
    with EmulatedVolume(workdir, PROFILE) as vol:
        shared = vol.mountpoint / "shared"
        shared.mkdir(mode=0o777)
        shared.chmod(0o777)
        subprocess.run(["runuser", "-u", "postgres", "--", "touch", str(shared / "by-postgres")], check=True)
        subprocess.run(["runuser", "-u", "postgres", "--", "mkdir", str(shared / "dir")], check=True)
        pg_uid = int(subprocess.run(["id", "-u", "postgres"], capture_output=True, text=True).stdout)
        assert (vol.backing / "shared" / "by-postgres").stat().st_uid == pg_uid
        assert (vol.backing / "shared" / "dir").stat().st_uid == pg_uid
        (shared / "a").write_bytes(b"1" * (MIB + 1))
        vol.restore()
        assert vol.counters()["chunks_total"] == 3
        (shared / "a").rename(shared / "b")
        os.truncate(shared / "b", 512 * 1024)
        os.symlink("b", shared / "link")
        assert os.readlink(shared / "link") == "b" and (shared / "link").read_bytes() == b"1" * 512 * 1024
        counters = vol.counters()
        assert counters["chunks_total"] == 1 and counters["chunks_hydrated"] == 1
        (shared / "b").unlink()
        assert vol.counters()["chunks_total"] == 0


def test_the_daemon_dies_with_its_parent_and_leaves_no_mount(workdir):
    script = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from cutover_prep.local.volume import EmulatedVolume
        vol = EmulatedVolume(Path({str(workdir)!r})).mount()
        print(vol._proc.pid, flush=True)
        time.sleep(60)
    """)
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        daemon_pid = int(parent.stdout.readline())
        assert os.path.ismount(workdir / "mnt")
    finally:
        parent.send_signal(signal.SIGKILL)  # no cleanup in the parent at all
        parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (os.path.ismount(workdir / "mnt") or _alive(daemon_pid)):
        time.sleep(0.1)
    assert not os.path.ismount(workdir / "mnt")
    assert not _alive(daemon_pid)


def test_a_volume_mounted_from_a_thread_outlives_that_thread(workdir):
    vol = EmulatedVolume(workdir, PROFILE)
    worker = threading.Thread(target=vol.mount)
    worker.start()
    worker.join()
    try:
        # counters() waits for two writes of the daemon's loop after it asked; each write follows a run of the
        # watchdog, so the watchdog has looked at its parent at least once since the mounting thread ended
        assert vol.counters()["mounted"]
        assert vol.mounted and os.path.ismount(workdir / "mnt")
        (vol.mountpoint / "f").write_bytes(b"ok")
    finally:
        vol.unmount()
    assert not os.path.ismount(workdir / "mnt")


def test_the_daemon_and_every_thread_serving_requests_run_at_a_raised_cpu_priority(workdir):
    """Judged from /proc (field 19 of each thread's stat is its nice), not from the daemon's counters."""
    with EmulatedVolume(workdir, PROFILE) as vol:
        (vol.mountpoint / "f").write_bytes(os.urandom(MIB))  # libfuse starts its worker threads on demand
        threads = list(Path(f"/proc/{vol._proc.pid}/task").iterdir())
        nices = {int((t / "stat").read_text().rsplit(")", 1)[1].split()[16]) for t in threads}
        assert len(threads) > 2 and nices == {-10}
        assert vol.counters()["nice"] == -10


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:  # a zombie is dead
        return f.read().split(")")[-1].split()[0] != "Z"


def test_a_postgresql_tablespace_on_the_volume_reads_cold_then_warm(workdir, pg_admin):
    """CREATE TABLESPACE on the mount; the table's files move there (ALTER TABLE SET TABLESPACE copies
    them below the buffer cache), the volume is restored, and a scan pays the first touch once."""
    with psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        data_dir = Path(conn.execute("SHOW data_directory").fetchone()[0])
        shared_buffers = conn.execute("SELECT setting::bigint * 8192 FROM pg_settings "
                                      "WHERE name = 'shared_buffers'").fetchone()[0]
    if not data_dir.exists():
        pytest.skip("the PostgreSQL server under test is not on this machine")
    owner = data_dir.stat()
    name = f"cutover_volume_{uuid.uuid4().hex[:8]}"
    # larger than a quarter of shared_buffers: a sequential scan then reads through a small ring,
    # so the second scan reads the files again instead of shared buffers
    rows = int(max(40 * MIB, shared_buffers * 0.35) / 200)
    with EmulatedVolume(workdir, PROFILE) as vol, psycopg.connect(conninfo(pg_admin), autocommit=True) as conn:
        location = vol.mountpoint / "tblspc"
        location.mkdir()
        os.chown(location, owner.st_uid, owner.st_gid)
        ident = sql.Identifier(name)
        try:
            conn.execute(sql.SQL("CREATE TABLESPACE {} LOCATION {}").format(ident, sql.Literal(str(location))))
            conn.execute(sql.SQL("CREATE TABLE {} (id int, pad text)").format(ident))
            conn.execute(sql.SQL("INSERT INTO {} SELECT g, repeat('x', 160) FROM generate_series(1, %s) g")
                         .format(ident), (rows,))
            conn.execute(sql.SQL("ALTER TABLE {} SET TABLESPACE {}").format(ident, ident))
            conn.execute("CHECKPOINT")
            size = conn.execute("SELECT pg_relation_size(%s::regclass)", (f'"{name}"',)).fetchone()[0]
            vol.restore()
            before = vol.counters()
            assert before["hydrated_pct"] == 0 and before["chunks_total"] > 60

            count = sql.SQL("SELECT count(*) FROM {}").format(ident)
            assert conn.execute(count).fetchone()[0] == rows
            cold = vol.counters()
            main_fork_chunks = -(-size // PROFILE.chunk_bytes)  # the scan reads the main fork, not fsm/vm
            assert cold["fetches"] - before["fetches"] == main_fork_chunks
            assert cold["fetch_wait_s"] > before["fetch_wait_s"]
            assert cold["chunks_hydrated"] == main_fork_chunks

            assert conn.execute(count).fetchone()[0] == rows
            warm = vol.counters()
            assert warm["fetches"] == cold["fetches"] and warm["fetch_wait_s"] == cold["fetch_wait_s"]
            # read again from the volume (but for the few pages still in the scan's ring of shared buffers)
            assert warm["bytes_served"] - cold["bytes_served"] >= 0.95 * size
        finally:
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(ident))
            conn.execute(sql.SQL("DROP TABLESPACE IF EXISTS {}").format(ident))
    assert not os.path.ismount(workdir / "mnt")


def test_the_daemon_imports_neither_the_analyser_nor_the_engine_registry():
    """The daemon's start (each mount) is its imports: the caps come from its parent (``--caps``), so neither
    ``cutover_prep.analysis`` (its package pulled in the analysis of points and the findings records) nor the
    engine registry is imported there (1.4 s of CPU a mount before)."""
    code = ("import sys, cutover_prep.local.volume.daemon; "
            "print(sorted(m for m in sys.modules if m.startswith(('cutover_prep.analysis', 'cutover_prep.engines'))))")
    lambdas = Path(__file__).resolve().parents[2] / "lambdas"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(lambdas), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_a_profile_given_its_caps_is_the_profile_that_computed_them(monkeypatch):
    from cutover_prep.analysis import limits
    from cutover_prep.local.volume.profile import VolumeProfile as Profile

    gp2 = Profile(storage_type="gp2", allocated_gb=50, time_scale=2.0)
    monkeypatch.setattr(limits, "expected_limits", lambda *a, **k: pytest.fail("caps computed again"))
    given = Profile.from_dict(gp2.to_dict(), gp2.caps)
    assert given == gp2 and given.describe() == gp2.describe() and given.burst_credits == gp2.burst_credits
