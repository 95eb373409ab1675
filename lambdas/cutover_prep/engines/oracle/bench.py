"""Oracle implementation of the benchmark driver (``engines/bench.py``'s ``BenchDriver``), as in seeds 000/002:

- IO-size sweep: ``db_file_multiblock_read_count`` per point (capped at the platform's 1 MiB maximum I/O size,
  each point noting the value V$PARAMETER says Oracle used): rowid-range scans (``read_sql.rowid_range_count_sql``,
  the warm-up's own statement) of the biggest table, piece by piece, until the point's time is up (wrapping around
  a small table). Each scan runs in its own session, so its setting dies with it. No session setting asks for
  direct path reads (issue 35: the documented session settings only; an underscore parameter is none, and parallel
  execution would change the statement's plan): Oracle chooses, per scan, direct path reads or reads through the
  buffer cache, and each point says which from its session's V$SESSION_EVENT (``direct path read`` or ``db file
  scattered read``) and V$MYSTAT (``physical reads direct`` or ``physical reads cache``); a point that read its
  target more than once through the buffer cache is ``cached`` (its later passes may have come from memory).
- Random single-block reads, one block's rowid range per read, in sessions that set nothing: ``db file sequential
  read`` where Oracle reads the block through the buffer cache; the point's notes say when it read some by direct
  path instead.
- Counters: ``v$sysstat`` physical read/write totals; latency histogram of
  ``db file sequential read`` from ``v$event_histogram_micro`` (12c+) or
  ``v$event_histogram`` (ms buckets). Without the privilege (ORA-00942) the point is
  measured by the client alone and a note says so.
- Opt-in write test: the run's own scratch table in the connecting user's schema (no
  CREATE USER needed), named for the run and commented with its marker, direct path
  inserts or single-row updates up to the size cap, dropped with PURGE in ``finally``
  only when it carries the marker (see ``cutover_prep.engines.scratch``).
"""

# ruff: noqa: S608 -- SQL text from identifiers, each through quote_identifier; values are binds
from __future__ import annotations

import random
import time
from collections.abc import Callable
from typing import Any, NamedTuple

import oracledb

from cutover_prep.engines.base import ConnectionSpec
from cutover_prep.engines.bench import BenchCapabilities, PointSpec, ScanResult, SweepOptions, SweepTarget
from cutover_prep.engines.locators import BaseLocator, OracleLocator
from cutover_prep.engines.oracle import read_sql as rq
from cutover_prep.engines.oracle import rowids as rid
from cutover_prep.engines.oracle import sql as q
from cutover_prep.engines.oracle.engine import OracleEngine, allow_writes, map_error
from cutover_prep.engines.scratch import Dropped, Scratch, ScratchExists, refuse_drop

PIECE_BLOCKS = 8192
SIZE_CHECK_EVERY = 100  # single-row updates between two size checks
SCRATCH_MARKER_SQL = "SELECT comments FROM user_tab_comments WHERE table_name = :name AND table_type = 'TABLE'"
SCRATCH_BYTES_SQL = "SELECT COALESCE(SUM(bytes), 0) FROM user_segments WHERE segment_name = :name"
SYSSTAT = {
    "physical read total IO requests": "read_requests",
    "physical read total bytes": "read_bytes",
    "physical read total multi block requests": "multiblock_read_requests",
    "physical reads direct": "direct_reads",
    "physical write total IO requests": "write_requests",
    "physical write total bytes": "write_bytes",
}
SYSSTAT_SQL = "SELECT name, value FROM v$sysstat WHERE name IN (" + ", ".join(f"'{n}'" for n in SYSSTAT) + ")"
HIST_MICRO_SQL = ("SELECT wait_time_micro, wait_count FROM v$event_histogram_micro "
                  "WHERE event = 'db file sequential read'")
HIST_MILLI_SQL = "SELECT wait_time_milli, wait_count FROM v$event_histogram WHERE event = 'db file sequential read'"
PARAMS_SQL = ("SELECT name, value FROM v$parameter WHERE name IN "
              "('db_block_size', 'db_file_multiblock_read_count', 'filesystemio_options')")
# Issue 35 §5: what the scan's session reads with after its ALTER SESSION (V$PARAMETER shows the session's
# values). Database Reference, "DB_FILE_MULTIBLOCK_READ_COUNT"
# (https://docs.oracle.com/database/122/REFRN/DB_FILE_MULTIBLOCK_READ_COUNT.htm: the maximum I/O size is "1MB for
# most platforms"; https://docs.oracle.com/cd/B10500_01/server.920/a96536/ch143.htm: "If you set this parameter to a
# value greater than the maximum, Oracle uses the maximum"): the sweep stops at MAX_IO_BYTES / block size, and each
# point says the value Oracle used.
MBRC_IN_EFFECT_SQL = "SELECT value FROM v$parameter WHERE name = 'db_file_multiblock_read_count'"
MAX_IO_BYTES = 1 << 20


# What this session waited on (Database Reference, "V$SESSION_EVENT"), before and after a point.
SESSION_EVENT_SQL = ("SELECT event, total_waits, time_waited_micro FROM v$session_event "
                     "WHERE sid = SYS_CONTEXT('USERENV', 'SID')")
IDLE_EVENTS = frozenset({"SQL*Net message from client", "SQL*Net message to client"})


def session_events(cur: Any) -> dict[str, tuple[int, int]] | None:
    """This session's waits so far, event -> (waits, microseconds); None without SELECT on V$SESSION_EVENT."""
    try:
        return {str(e): (int(n), int(us)) for e, n, us in cur.execute(SESSION_EVENT_SQL)}
    except oracledb.Error as exc:
        if _no_privilege(exc):
            return None
        raise


def event_delta(before: dict[str, tuple[int, int]] | None,
                after: dict[str, tuple[int, int]] | None) -> dict[str, dict[str, float]] | None:
    if before is None or after is None:
        return None
    out = {}
    for event, (waits, micros) in after.items():
        w0, us0 = before.get(event, (0, 0))
        if waits - w0 > 0:
            out[event] = {"waits": waits - w0, "seconds": round((micros - us0) / 1e6, 6)}
    return out


def session_reads(cur: Any) -> dict[str, int] | None:
    """This session's read counters (``read_sql.MYSTAT_SQL``: V$MYSTAT), None without SELECT on it."""
    try:
        return {str(name): int(value) for name, value in cur.execute(rq.MYSTAT_SQL)}
    except oracledb.Error as exc:
        if _no_privilege(exc):
            return None
        raise


def reads_delta(before: dict[str, int] | None, after: dict[str, int] | None) -> dict[str, int] | None:
    if before is None or after is None:
        return None
    return {name: max(0, after.get(name, 0) - before.get(name, 0)) for name in rq.MYSTAT_NAMES}


def scan_path(waits: dict[str, dict[str, float]] | None, reads: dict[str, int] | None) -> str:
    """How a scan's session read, as the server says: "direct", "buffered", "both" or "not known". From V$MYSTAT
    (Database Reference, "Statistics Descriptions": ``physical reads direct`` around the buffer cache, ``physical
    reads cache`` into it; no physical read but logical reads: every block came from the buffer cache), else from
    V$SESSION_EVENT (``direct path read``, ``db file scattered read``/``db file sequential read``). A share of
    ``NOISE`` or less of the other kind (the statement's own recursive reads) does not make it "both"."""
    if reads is not None:
        direct, cached = reads["physical reads direct"], reads["physical reads cache"]
        if direct + cached == 0:
            return "buffered" if reads["session logical reads"] > 0 else "not known"
        if cached <= NOISE * (direct + cached):
            return "direct"
        return "buffered" if direct <= NOISE * (direct + cached) else "both"
    if waits is None:
        return "not known"
    waited = {e for e, w in waits.items() if w["waits"]}
    direct_seen = "direct path read" in waited
    buffered_seen = bool(waited & {"db file scattered read", "db file sequential read"})
    if not (direct_seen or buffered_seen):
        return "not known"
    return "both" if direct_seen and buffered_seen else "direct" if direct_seen else "buffered"


NOISE = 0.02
PASSES_BY = {"direct": "direct path reads: each pass from storage",
             "buffered": "through the buffer cache: a pass after the first may have come from memory",
             "both": "partly through the buffer cache: a pass after the first may have come from memory",
             "not known": "how Oracle read it is not known: a pass after the first may have come from memory"}


def read_path_note(reads: dict[str, int]) -> str:
    """The point's label from V$MYSTAT: blocks read by direct path, through the buffer cache, and got."""
    return (f"read path (V$MYSTAT): {reads['physical reads direct']:,} blocks by direct path, "
            f"{reads['physical reads cache']:,} through the buffer cache, "
            f"{reads['session logical reads']:,} logical reads")


def mbrc_sql(value: int) -> str:
    """ALTER SESSION cannot bind: the value is validated as an integer instead."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1024:
        raise ValueError(f"db_file_multiblock_read_count must be an integer 1-1024, got {value!r}")
    return f"ALTER SESSION SET db_file_multiblock_read_count = {value}"


def _mbrc_in_effect(cur: Any, asked: int, block_size: int) -> str:
    """The point's label from the server: the session's db_file_multiblock_read_count after the set (V$PARAMETER),
    named when it is not the value asked (Oracle caps it at the platform's maximum I/O size)."""
    try:
        cur.execute(MBRC_IN_EFFECT_SQL)
        row = cur.fetchone()
    except oracledb.Error as exc:
        return f"db_file_multiblock_read_count in effect not known (V$PARAMETER: {str(exc).splitlines()[0]})"
    if row is None or row[0] is None or not str(row[0]).strip().isdigit():
        return "db_file_multiblock_read_count in effect not known (V$PARAMETER gave no value)"
    used = int(str(row[0]).strip())
    kib = used * block_size // 1024
    if used != asked:
        return f"Oracle used db_file_multiblock_read_count = {used} ({kib} KiB), not the {asked} asked"
    return f"db_file_multiblock_read_count = {used} ({kib} KiB) after the set (V$PARAMETER)"


class Parameters(NamedTuple):
    """The instance's settings the benchmark records (``PARAMS_SQL``: V$PARAMETER's text values), None where
    V$PARAMETER did not say."""

    db_block_size: str | None = None
    db_file_multiblock_read_count: str | None = None
    filesystemio_options: str | None = None

    @classmethod
    def of(cls, rows: list[tuple]) -> Parameters:
        return cls(**{str(name): value for name, value in rows if name in cls._fields})


def _no_privilege(exc: oracledb.Error) -> bool:
    return getattr(exc.args[0] if exc.args else None, "code", 0) in (942, 1031)


class OracleBench:
    engine = "oracle"

    def __init__(self, connect: Callable[[], Any]) -> None:
        self._connect = connect
        self.conn = connect()
        self._notes: list[str] = []
        self._block_size: int | None = None
        self.wait_events: dict[str, dict[str, dict[str, float]]] = {}  # point id -> event -> waits, seconds
        self.reader_waits: list[dict[str, dict[str, float]]] = []  # one per closed random reader session

    @classmethod
    def from_spec(cls, spec: ConnectionSpec, *, call_timeout_seconds: float | None = None) -> OracleBench:
        def connect() -> Any:
            conn = OracleEngine.connect(spec, call_timeout_seconds=call_timeout_seconds).conn
            conn.action = "benchmark"
            return conn
        return cls(connect)

    def close(self) -> None:
        try:
            self.conn.close()
        except oracledb.Error:
            pass

    def _rows(self, sql: str) -> list[tuple]:
        with self.conn.cursor() as cur:
            return list(cur.execute(sql))

    def capabilities(self) -> BenchCapabilities:
        params = Parameters()
        notes = list(self._notes)
        try:
            params = Parameters.of(self._rows(PARAMS_SQL))
        except oracledb.Error as exc:
            notes.append(f"cannot read v$parameter ({str(exc).splitlines()[0]}): settings not recorded")
        version = None
        for sql in (q.VERSION_FULL_SQL, q.VERSION_SQL):  # VERSION_FULL from 18c, else VERSION (ORA-00904)
            try:
                version = self._rows(sql)[0][0]
                break
            except (oracledb.Error, IndexError):
                continue
        counters = "v$sysstat" if self.counters() else None
        if counters is None:
            notes.append("no SELECT on v$sysstat: rates come from the client's own count")
        fsio = params.filesystemio_options
        if fsio and fsio.lower() in ("setall", "directio"):
            notes.append(f"filesystemio_options={fsio}: direct IO, no OS page cache between Oracle and the volume")
        self._block_size = int(params.db_block_size or 8192)
        return {"server_version": version, "block_size": self._block_size,
                "knobs": {"db_file_multiblock_read_count": True},
                "db_file_multiblock_read_count": params.db_file_multiblock_read_count,
                "filesystemio_options": fsio, "counters": counters,
                "latency_histogram": "v$event_histogram" if self.latency_histogram() is not None else None,
                "read_method": "rowid_range_scan (direct path or buffered, as Oracle chooses: each point says which)",
                "notes": notes}

    def io_size_points(self, options: SweepOptions, target: SweepTarget) -> list[PointSpec]:
        """One point per value, capped at the platform's maximum I/O size (``MAX_IO_BYTES`` / block size, the
        value Oracle uses for any larger one): a capped value is measured once, at the maximum, and the point's
        knobs say what was asked above it (``requested``)."""
        bs = target.block_size or self._block_size or 8192
        cap = max(1, MAX_IO_BYTES // bs)
        used: dict[int, list[int]] = {}
        for v in options.mbrc_values:
            used.setdefault(min(int(v), cap), [])
            if v > cap:
                used[min(int(v), cap)].append(int(v))
        return [PointSpec(point_id=f"mbrc-{v:03d}", kind="sequential", seconds=options.seconds_per_point,
                          io_size_kb=v * bs / 1024,
                          knobs={"db_file_multiblock_read_count": v, **({"requested": asked} if asked else {})})
                for v, asked in used.items()]

    def counters(self) -> dict[str, float]:
        try:
            rows = self._rows(SYSSTAT_SQL)
        except oracledb.Error as exc:
            if _no_privilege(exc):
                return {}
            raise map_error(exc, "reading v$sysstat") from None
        out: dict[str, float] = {}
        for name, value in rows:
            out[name] = float(value)
            out[SYSSTAT[name]] = float(value)
        return out

    def counts_reads_of(self, spec: PointSpec) -> bool:
        return True  # V$SYSSTAT physical reads: buffered and direct path alike

    def latency_histogram(self) -> dict[str, int] | None:
        for sql, to_us in ((HIST_MICRO_SQL, 1), (HIST_MILLI_SQL, 1000)):
            try:
                return {str(int(bound) * to_us): int(count) for bound, count in self._rows(sql)}
            except oracledb.Error:
                continue
        return None

    def scan(self, spec: PointSpec, target: SweepTarget, deadline: float) -> ScanResult:
        loc = OracleLocator.of(target.locator)
        conn = self._connect()
        started = time.monotonic()
        read_bytes = calls = passes = 0
        try:
            with conn.cursor() as cur:
                asked = int(spec.knobs.get("db_file_multiblock_read_count", 128))
                cur.execute(mbrc_sql(asked))
                in_effect = _mbrc_in_effect(cur, asked, target.block_size)
                sql = rq.rowid_range_count_sql(loc.owner, loc.table, loc.partition, loc.subpartition)
                waits_before, reads_before = session_events(cur), session_reads(cur)
                while time.monotonic() < deadline:
                    passes += 1
                    for rfno, first, blocks in target.extents:
                        for lo in range(first, first + blocks, PIECE_BLOCKS):
                            if time.monotonic() >= deadline:
                                break
                            hi = min(lo + PIECE_BLOCKS, first + blocks) - 1
                            cur.execute(sql, **rid.rowid_bounds(loc.data_object_id, rfno, lo, hi, loc.bigfile))
                            cur.fetchone()
                            read_bytes += (hi - lo + 1) * target.block_size
                            calls += 1
                waits = event_delta(waits_before, session_events(cur))
                reads = reads_delta(reads_before, session_reads(cur))
        except oracledb.Error as exc:
            raise map_error(exc, f"scanning {target.segment_key}") from None
        finally:
            try:
                conn.close()
            except oracledb.Error:
                pass
        path = scan_path(waits, reads)
        notes = [f"the target was read {passes} times ({PASSES_BY[path]})"] if passes > 1 else []
        notes += [in_effect] if in_effect else []
        notes += [read_path_note(reads)] if reads is not None else []
        notes += self._record_waits(spec.point_id, waits)
        return ScanResult(bytes=read_bytes, calls=calls, seconds=time.monotonic() - started, notes=notes,
                          passes=passes, cached=passes > 1 and path != "direct")

    def _record_waits(self, point_id: str, waits: dict[str, dict[str, float]] | None, *,
                      sessions: int | None = None) -> list[str]:
        """Keep the point's wait events and say them in its notes: a sequential point's one session, or
        (``sessions``) the sum over a random point's reader sessions; and when the reads were not the
        kind the point's reads are for (a sequential point: from storage; a random one: single blocks)."""
        if waits is None:
            return ["no SELECT on V$SESSION_EVENT: the point's wait events are not recorded"]
        self.wait_events[point_id] = waits
        seen = sorted(((e, w) for e, w in waits.items() if e not in IDLE_EVENTS), key=lambda ew: -ew[1]["seconds"])
        whose = "" if sessions is None else f" of the {sessions} random session{'s' if sessions != 1 else ''}"
        notes = [f"wait events{whose} (V$SESSION_EVENT): " + (", ".join(
            f"{e} {int(w['waits'])} waits {w['seconds']:.3f} s" for e, w in seen) or "none")]
        waited = {e for e, w in waits.items() if w["waits"]}
        if sessions is None:
            if "direct path read" not in waited and waited & {"db file scattered read", "db file sequential read"}:
                notes.append("no direct path read: Oracle read the scan through the buffer cache (it chooses per "
                             "scan; no session setting asks for direct path reads), so blocks already in the buffer "
                             "cache were not read from storage")
        elif "direct path read" in waited:
            notes.append("direct path reads in the random sessions: Oracle read some blocks around the buffer "
                         "cache, so not every read was a db file sequential read (its latency histogram misses those)")
        elif "db file sequential read" not in waited:
            notes.append("no db file sequential read: the random reads were served from the buffer cache")
        return notes

    def random_point_notes(self, point_id: str) -> list[str]:
        """``BenchDriver``'s optional hook, called once a random point's (or a probe's) reader sessions are
        closed: the sum of their V$SESSION_EVENT deltas (``reader_waits``, one per session, taken since),
        kept under the point's id and said in its notes."""
        sessions = list(self.reader_waits)
        del self.reader_waits[:]  # the readers hold this list: emptied in place for the next point
        if not sessions:
            return self._record_waits(point_id, None)
        total: dict[str, dict[str, float]] = {}
        for waits in sessions:
            for event, w in waits.items():
                into = total.setdefault(event, {"waits": 0, "seconds": 0.0})
                into["waits"] += w["waits"]
                into["seconds"] = round(into["seconds"] + w["seconds"], 6)
        return self._record_waits(point_id, total, sessions=len(sessions))

    def random_reader(self) -> _BlockReader:
        return _BlockReader(self._connect(), self.reader_waits)

    def write_point(self, spec: PointSpec, deadline: float, scratch: Scratch) -> ScanResult:
        """Opt-in write test in the run's own scratch table (commented with the run's marker), capped in size.

        A table of that name without the marker is the customer's: ``ScratchExists``, never dropped."""
        conn = self._connect()
        allow_writes(conn)  # the opt-in write test, in its own session: lift the session's READ_ONLY guard (23ai+)
        table = q.quote_identifier(scratch.name)
        rng = random.Random(0)
        started = time.monotonic()
        rows = calls = 0
        notes: list[str] = []
        try:
            with conn.cursor() as cur:
                if _drop_scratch(cur, scratch) is Dropped.NOT_OURS:
                    raise ScratchExists(f"a table named {scratch.name} already exists and was not created by "
                                        "this run; it was left untouched (drop or rename it yourself, or use "
                                        "another run_id)")
                cur.execute(f"CREATE TABLE {table} (id NUMBER PRIMARY KEY, pad VARCHAR2(200)) NOLOGGING")
                cur.execute(f"COMMENT ON TABLE {table} IS {_literal(scratch.marker)}")
                while time.monotonic() < deadline:
                    if (spec.kind == "write_direct" or calls % SIZE_CHECK_EVERY == 0) \
                            and _scratch_bytes(cur, scratch) >= scratch.max_bytes:
                        notes.append(f"stopped at the size cap of {scratch.max_bytes / 2**20:,.0f} MiB")
                        break
                    if spec.kind == "write_direct" or rows == 0:
                        cur.execute(f"INSERT /*+ APPEND */ INTO {table} SELECT :base + LEVEL, RPAD('x', 200, 'x') "
                                    "FROM dual CONNECT BY LEVEL <= 10000", base=rows)
                        rows += 10_000
                    else:
                        cur.execute(f"UPDATE {table} SET pad = DBMS_RANDOM.STRING('x', 200) WHERE id = :id",
                                    id=rng.randint(1, rows))
                    conn.commit()
                    calls += 1
        except oracledb.Error as exc:
            raise map_error(exc, f"write test in table {scratch.name}") from None
        finally:
            try:
                conn.rollback()
                with conn.cursor() as cur:
                    _drop_scratch(cur, scratch)
            except oracledb.Error:
                notes.append(f"scratch table {scratch.name} could not be dropped now; the cleanup step retries")
            finally:
                conn.close()
        return ScanResult(bytes=0, calls=calls, seconds=time.monotonic() - started,
                          notes=notes + [f"{calls} commits; bytes from v$sysstat physical write totals"])

    def drop_scratch(self, scratch: Scratch) -> Dropped:
        conn = self._connect()
        allow_writes(conn)
        try:
            with conn.cursor() as cur:
                return _drop_scratch(cur, scratch)
        finally:
            conn.close()


def _literal(text: str) -> str:
    """COMMENT ON cannot bind: a string literal with its quotes doubled."""
    if "\x00" in text:
        raise ValueError("a NUL byte cannot be part of a comment")
    return "'" + text.replace("'", "''") + "'"


def _scratch_bytes(cur: Any, scratch: Scratch) -> int:
    cur.execute(SCRATCH_BYTES_SQL, name=scratch.name)
    return int(cur.fetchone()[0] or 0)


def _drop_scratch(cur: Any, scratch: Scratch) -> Dropped:
    """Drop the run's scratch table only when its comment is this run's marker."""
    cur.execute(SCRATCH_MARKER_SQL, name=scratch.name)
    row = cur.fetchone()
    if (refused := refuse_drop(row is not None, row and row[0], scratch)) is not None:
        return refused
    cur.execute(f"DROP TABLE {q.quote_identifier(scratch.name)} PURGE")
    return Dropped.DROPPED


class _BlockReader:
    """A session reading one block's rowid range at a time; it sets nothing (Oracle reads a block through the
    buffer cache or, as it chooses, by direct path: the point's wait events say which)."""

    def __init__(self, conn: Any, waits: list[dict[str, dict[str, float]]] | None = None) -> None:
        self.conn = conn
        self._waits = waits
        with conn.cursor() as cur:
            self._waits_before = session_events(cur)

    def read_block(self, locator: BaseLocator, file_id: int, block: int) -> None:
        loc = OracleLocator.of(locator)
        sql = rq.rowid_range_count_sql(loc.owner, loc.table, loc.partition, loc.subpartition)
        try:
            with self.conn.cursor() as cur:
                cur.execute(sql, **rid.rowid_bounds(loc.data_object_id, file_id, block, block, loc.bigfile))
                cur.fetchone()
        except oracledb.Error as exc:
            raise map_error(exc, f"reading block {block} of {loc.owner}.{loc.table}") from None

    def close(self) -> None:
        try:
            if self._waits is not None and self._waits_before is not None:
                with self.conn.cursor() as cur:
                    if (delta := event_delta(self._waits_before, session_events(cur))) is not None:
                        self._waits.append(delta)
            self.conn.close()
        except oracledb.Error:
            pass
