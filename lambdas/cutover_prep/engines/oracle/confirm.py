"""What the server says a read read (issue 35 §1, §2): the session's counters (V$MYSTAT) and the read
segment's own (V$SEGMENT_STATISTICS), taken before and after each read, and the verdict on them.

- Confirmed: the segment's own delta ('physical reads' or 'physical reads direct', or 'logical reads' for blocks
  already cached) is at
  least the planned blocks less the tolerance. When the read's blocks were planned to the segment's
  high-water mark (``reads.hwm_pieces``) the tolerance is ``tolerance(planned)``; when the mark is not known
  (no ANALYZE) the planned extents may hold free blocks above it that no query reads, so the old bound stays:
  half the planned blocks (``UNKNOWN_MARK_FRACTION``). Fewer: ``ShortRead``, with both deltas.
- Over-read: a statement that read more than planned plus the tolerance (a FULL scan where a rowid range was
  meant: every chunk would read the whole table) is ``OverRead``, never "confirmed". Measured by the session's
  'physical reads' (this session's own, whatever else runs) for the reads that touch their segment only (rowid
  ranges, index fast full scans), and by the segment's delta for the reads whose statement also reads another
  segment by design (a LOB's table and LOB index, an overflow's IOT).
- Without SELECT on a view the read is not confirmed by it and ``details`` says so (the preflight fails then).

V$SEGMENT_STATISTICS is the instance's, so another session reading the same segment at the same time only
adds to it: it can hide a short read of ours, never make one, so it is not the over-read measure of reads
that have a session-only one. Its 'logical reads' may be a sampled statistic (V$SEGSTAT_NAME.SAMPLED says
which), so it only ever confirms (blocks already cached), never measures an over-read. The counters "before"
are taken right before the read's data statements, after the dictionary look-ups the read needs (DBA_EXTENTS,
DBMS_SPACE, DBA_IND_COLUMNS: on a cold volume their recursive reads are physical too, and not the read's).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, NamedTuple

import oracledb

from cutover_prep.engines.base import PermanentReadError, ReadRange, ShortRead
from cutover_prep.engines.locators import OracleLocator
from cutover_prep.engines.oracle import read_sql as rq

NO_PRIVILEGE_CODES = {942, 1031}
TOLERANCE_FRACTION = 0.10  # of the planned blocks, either way
TOLERANCE_BLOCKS = 16  # at least: segment header and space-management blocks, a few recursive reads
UNKNOWN_MARK_FRACTION = 0.5  # the confirmation bound when the high-water mark is not known
SESSION_MEASURED = {"rowid_range_scan", "index_ffs"}  # statements that read their own segment only
# what a read's details say when a view's counters are not readable
NO_MYSTAT = "no SELECT on V$MYSTAT/V$STATNAME: the read is not confirmed by the server"
NO_SEGMENT_STATISTICS = "no SELECT on V$SEGMENT_STATISTICS: the read is not confirmed by its segment's counters"


class OverRead(PermanentReadError):  # noqa: N818 (the name the workflow reports, beside ShortRead)
    """A read read more blocks than planned, beyond the stated tolerance: its statement did not take the
    planned access path (a full scan for a rowid range), so it is named, not confirmed."""

    error_type = "OverRead"


def tolerance(planned: int) -> int:
    return max(TOLERANCE_BLOCKS, math.ceil(planned * TOLERANCE_FRACTION))


def _no_privilege(exc: oracledb.DatabaseError) -> bool:
    return getattr(exc.args[0] if exc.args else None, "code", 0) in NO_PRIVILEGE_CODES


@dataclass
class Taken:
    """A read's counters before and after it: the session's (V$MYSTAT) and its segment's (V$SEGMENT_STATISTICS),
    each None where the view is not readable."""

    session_before: dict[str, int] | None
    segment_before: dict[str, int] | None
    session_after: dict[str, int] | None = None
    segment_after: dict[str, int] | None = None


class Confirmation(NamedTuple):
    """What the counters say of one read: both deltas and the path it took (None: not readable), the blocks that
    confirm it and by which view (None: no counter), and the error when they refuse it (``ShortRead``,
    ``OverRead``; None: confirmed, or nothing to confirm it by)."""

    session: dict[str, int] | None
    segment: dict[str, int] | None
    path: dict[str, str | int] | None
    confirmed: int | None = None
    by: str | None = None
    refused: PermanentReadError | None = None


class Counters:
    """Reads V$MYSTAT and V$SEGMENT_STATISTICS for one engine; remembers a view it may not read."""

    def __init__(self) -> None:
        self.mystat_readable = True
        self.segment_readable = True

    def session(self, cur: Any) -> dict[str, int] | None:
        """This session's read counters, or None without SELECT on V$MYSTAT (``NO_MYSTAT``)."""
        if not self.mystat_readable:
            return None
        try:
            return {str(name): int(value) for name, value in cur.execute(rq.MYSTAT_SQL)}
        except oracledb.DatabaseError as exc:
            if not _no_privilege(exc):
                raise
            self.mystat_readable = False
            return None

    def segment(self, cur: Any, loc: OracleLocator) -> dict[str, int] | None:
        """The read segment's counters (no row yet: 0, a segment not read since startup), or None without
        SELECT on V$SEGMENT_STATISTICS (``NO_SEGMENT_STATISTICS``)."""
        if not self.segment_readable:
            return None
        try:
            rows = cur.execute(rq.SEGMENT_STATISTICS_SQL, owner=loc.owner, name=loc.segment or loc.table,
                               partition=loc.partition)
            found = {str(name): int(value or 0) for name, value in rows}
        except oracledb.DatabaseError as exc:
            if not _no_privilege(exc):
                raise
            self.segment_readable = False
            return None
        return {name: found.get(name, 0) for name in rq.SEGMENT_STATISTIC_NAMES}


def _delta(before: dict[str, int] | None, after: dict[str, int] | None, names: tuple[str, ...]
           ) -> dict[str, int] | None:
    if before is None or after is None:
        return None
    return {name: max(0, after.get(name, 0) - before.get(name, 0)) for name in names}


def read_path(session: dict[str, int] | None, segment: dict[str, int] | None) -> dict[str, str | int] | None:
    """Which path the read took, as the server counts it (issue 35: no session setting chooses it, Oracle does):
    blocks read by direct path (around the buffer cache, into the session's memory) and through the buffer cache
    (Database Reference, "Statistics Descriptions": ``physical reads direct``, ``physical reads cache``). By the
    read segment's own V$SEGMENT_STATISTICS (``physical reads`` less ``physical reads direct``) where it was
    readable, else by the session's V$MYSTAT (its recursive dictionary reads included). Either path reads a block
    from storage; no physical read at all means the blocks were in the buffer cache, read from storage since the
    instance started."""
    if segment is not None:
        direct = segment["physical reads direct"]
        cached = max(0, segment["physical reads"] - direct)
        logical, by = segment["logical reads"], "V$SEGMENT_STATISTICS"
    elif session is not None:
        direct, cached = session["physical reads direct"], session["physical reads cache"]
        logical, by = session["session logical reads"], "V$MYSTAT"
    else:
        return None
    if direct and cached:
        path = "direct path and buffer cache"
    elif direct or cached:
        path = "direct path" if direct else "buffer cache"
    else:
        path = "no physical read (the blocks were in the buffer cache)" if logical else "no read"
    return {"path": path, "direct": direct, "buffer_cache": cached, "by": by}


# Why a slice of a LOB (its table's rowid share, engines.oracle.lobsplit) or of an IOT's overflow (a share of its
# key, engines.oracle.iotsplit) is never confirmed: V$SEGMENT_STATISTICS counts per segment (OWNER, OBJECT_NAME,
# SUBOBJECT_NAME: no block address; Database Reference 19c, "V$SEGMENT_STATISTICS"), and V$MYSTAT per session, so
# a count is confirmation only where the statement's documented access path bounds which blocks it can read, as
# TABLE ACCESS BY ROWID RANGE bounds a rowid chunk to its own. A slice's statement reaches its blocks through its
# rows: a LOB value through the row's LOB locator (no documented view maps a value to the LOB segment's blocks),
# an overflow piece through the physical rowid in the IOT's index entry (Concepts, "Index-Organized Tables with
# Row Overflow Area", https://docs.oracle.com/cd/E11882_01/server.112/e40540/indexiot.htm: "a physical rowid that
# points to the overflow part of the row"; the pieces lie where they were stored, not in key order). So its
# counters say how many of the segment's blocks it read, never that they were its planned ones.
SLICE_WHY = {
    "lob_read": "its LOB values are reached through their rows' LOB locators, and no documented view says which "
                "blocks of the LOB segment hold them",
    "iot_overflow": "its overflow pieces are reached through the rowids in the IOT's index entries and lie where "
                    "they were stored, not in key order",
}


def slice_unconfirmed(method: str, seen: int | None, verdict: Exception | None) -> str:
    """What ``details["unconfirmed"]`` says of a slice: the blocks its segment's counters saw (``seen``), why that
    does not confirm the slice's planned blocks, and, when the count misses the slice's share, by how much."""
    counted = f"its segment's counters saw {seen} block(s) read" if seen is not None else "no counter was readable"
    why = SLICE_WHY.get(method, "its statement reaches its blocks through its rows, not by block address")
    text = (f"a slice (a proportional share of its table or key): {counted}, not which ones ({why}); the "
            "segment's blocks are read by its slices together")
    return text + (f"; against its share: {verdict}" if verdict is not None else "")


def floor_of(planned: int, loose: int) -> int:
    """The fewest blocks that confirm a read of ``planned`` blocks, ``loose`` of which are confirmed with the
    looser bound (half): the others within the tolerance."""
    return max(0, planned - loose - tolerance(planned)) + math.ceil(loose * UNKNOWN_MARK_FRACTION)


def confirm_read(rng: ReadRange, planned: int, method: str, counters: Taken, *, loose: int) -> Confirmation:
    """Both deltas, and the error of a read they do not confirm (``ShortRead``) or that read beyond its plan
    (``OverRead``). ``counters``: before and after the read (None: no view); ``planned``: the blocks the read was
    sent for; ``loose``: how many of them only the looser bound confirms (all when the high-water mark is not
    known; the mark's own extent's when it is: with automatic segment space management its blocks below the mark
    may not be formatted yet, and a scan skips those)."""
    session = _delta(counters.session_before, counters.session_after, rq.MYSTAT_NAMES)
    segment = _delta(counters.segment_before, counters.segment_after, rq.SEGMENT_STATISTIC_NAMES)
    path = read_path(session, segment)
    if segment is None and session is None:
        return Confirmation(session, segment, path)
    if segment is not None:
        confirmed = max(segment["physical reads"], segment["physical reads direct"], segment["logical reads"])
        by = "V$SEGMENT_STATISTICS"
    else:  # assert: session is not None here
        confirmed = max(session["physical reads"], session["session logical reads"])  # type: ignore[index]
        by = "V$MYSTAT (no V$SEGMENT_STATISTICS)"
    slack = tolerance(planned)
    if session is not None and method in SESSION_MEASURED:
        over, over_by = session["physical reads"], "V$MYSTAT physical reads"
    elif segment is not None:
        over, over_by = segment["physical reads"], "V$SEGMENT_STATISTICS physical reads"
    else:
        over, over_by = 0, ""
    seen = (f"V$MYSTAT: physical reads +{session['physical reads']}, session logical reads "
            f"+{session['session logical reads']}" if session is not None else "V$MYSTAT not readable")
    seen += (f"; V$SEGMENT_STATISTICS of {rng.segment_key}: physical reads +{segment['physical reads']}, "
             f"logical reads +{segment['logical reads']}" if segment is not None else "")
    refused: PermanentReadError | None = None
    floor = floor_of(planned, loose)
    if over > planned + slack:
        refused = OverRead(f"{rng.segment_key}: {method} read {over} blocks ({over_by}) where {planned} were planned "
                           f"(tolerance {slack}): the statement did not take its planned access path ({seen})")
    elif confirmed < floor:
        refused = ShortRead(f"{rng.segment_key}: {method} read {confirmed} of the {planned} blocks planned by {by} "
                            f"(at least {floor} confirm it; {seen}); the blocks were not read by this statement")
    return Confirmation(session, segment, path, confirmed, by, refused)
