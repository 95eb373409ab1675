"""What lives on the volume and what of it was not read (issue 21), pure.

The census (``engines.base.CensusObject``, taken by the engine at discovery and, when the workflow
takes it, again after the warm-up) is the denominator: every object the engine can name, including
what the run's user may not read. Each object is either read (its key is a planned segment whose
units all finished) or *unread*, with its bytes and why:

- ``no privilege`` / ``not readable by SQL``: the census said so (the object was not planned);
- ``read by the datafile pass only``: the census said so, and the run's datafile pass was not complete (once it
  is, the object was read);
- ``excluded by input``: the input's database or schema selection left it out, an explicit waiver;
- ``engine-internal``: a file of the engine itself that no SQL reads and no application query touches (InnoDB's
  system, undo and temporary tablespaces, free extents, the redo log): counted apart (``engine_internal_bytes``,
  per kind), never in ``unread_bytes``; the verdict's ENGINE_INTERNAL judges it by RDS's initialization;
- ``planned, not read``: planned, but a unit holding it failed, was cut off or never started;
- ``not in the plan``: readable and selected, yet not planned (the plan is older than the census);
- ``created after the census``: in the end census only, and not read; ``grew after the census``: read as
  planned, but larger at the end census (the growth is unread).

An object of the start census that the end census no longer holds was dropped while the run ran:
it leaves the denominator and is listed under ``dropped``. One the end census holds under the same key but
another engine identity (``CensusObject.identity``: PostgreSQL's OID and file, InnoDB's space id) was
dropped and created again, or rewritten: the old one is ``dropped``, the new one ``created`` (what the
warm-up read was the old one's blocks). An object that grew counts the growth as
unread unless it was read after the growth. Planned blocks the units found gone (``coverage.segment_reads``
``gone``: truncated while the run ran) left the object: the end census no longer counts them; without an end
census they leave the start census's size.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Protocol

from cutover_prep.dal.records.census import CatchUp, CensusEntry, CensusObjectJson, SegmentRead
from cutover_prep.dal.records.findings_census import (
    CensusDatabase,
    CensusObjectRow,
    CensusSection,
    EndCensusFailure,
    UnreadMore,
    UnreadObject,
)

WAIVER = "excluded by input"
ENGINE_INTERNAL = "engine-internal"  # engines.base.ENGINE_INTERNAL (findings import no engine)
# an object no SQL statement reads, which the engine's datafile pass does (Oracle: clusters, nested tables, LOB
# indexes): read once the datafile pass is complete, else unread for this reason
DATAFILE_ONLY = "read by the datafile pass only"
DATAFILE = "DATAFILE"  # the kind of a datafile in a census (engines with the datafile pass)
FIELDS = ("key", "database", "schema", "name", "kind", "bytes", "size_known", "reason", "file")
# findings.json names at most this many unread objects (the largest un-waived first), and as many created and dropped
# keys; the rest are counted, and every unread object is in census-unread.jsonl (issue 32)
LISTED = 1000


class Reads(Protocol):
    """Segment key -> what the units read of it (``coverage.segment_reads``, or ``plan_pass.KeyOrderedReads``)."""

    def get(self, key: str, default: SegmentRead | None = None, /) -> SegmentRead | None: ...

    def __contains__(self, key: object, /) -> bool: ...


def _gone(read: SegmentRead | None) -> int:
    """Planned bytes of a segment the units found gone (truncated while the run ran)."""
    return int(read["gone"] or 0) if read and "gone" in read else 0


def gone_bytes(obj: CensusEntry, reads: Reads, end_census: bool) -> int:
    """Bytes of a start-census object the units found gone (0 with an end census: it measured what is left)."""
    return 0 if end_census else _gone(reads.get(obj.key))


def _unread_of(obj: CensusEntry, reads: Reads, by_datafiles: bool = False,
               end_census: bool = False) -> tuple[int, str | None]:
    """Unread bytes of one object and why (0, None: read). ``by_datafiles``: a complete datafile pass read
    every block of every datafile, so a readable segment it holds was read even though not planned."""
    read = reads.get(obj.key)
    size = int(obj.bytes or 0) - gone_bytes(obj, reads, end_census)
    if read is not None:
        planned = read["planned"] - _gone(read)  # what exists of the plan
        if read["done"] and planned >= size:
            return 0, None
        if read["done"]:  # read, but it grew since it was planned (or since it was truncated)
            return size - planned, "grew after the census"
        return max(0, size - int(read["read"])), "planned, not read"
    if obj.reason:
        if by_datafiles and obj.reason == DATAFILE_ONLY:
            return 0, None
        return size, obj.reason
    if by_datafiles and obj.kind != DATAFILE:
        return 0, None
    return size, "not in the plan"


def catch_up_reads(catch_up: list[CatchUp] | None) -> dict[str, SegmentRead]:
    """What the end census's catch-up pass read (``warmup.end_census``), as ``coverage.segment_reads`` says it."""
    return {c.key: {"planned": c.bytes, "read": c.bytes_read, "done": c.status == "READ", "failed": False}
            for c in catch_up or [] if c.status == "READ"}


def _in_key_order(census: Iterable[CensusObjectJson] | None) -> Iterator[CensusEntry]:
    """One object per key, in key order (of two with one key, the later, as a dict of the census would keep). A
    list (a census an older run kept in its documents) is sorted here; a stream must come sorted (``census_json``)."""
    if census is None:
        return
    rows = sorted(census, key=lambda o: str(o["key"])) if isinstance(census, list) else census
    held: CensusEntry | None = None
    for row in rows:
        obj = CensusEntry.of(row)
        if held is not None and str(obj.key) != str(held.key):
            if str(obj.key) < str(held.key):
                raise ValueError(f"census not in key order at {obj.key!r}: written by census_json?")
            yield held
        held = obj
    if held is not None:
        yield held


def _side_by_side(start: Iterable[CensusObjectJson], end: Iterable[CensusObjectJson] | None
                  ) -> Iterator[tuple[CensusEntry | None, CensusEntry | None]]:
    """(start's object, end's object) per key, in key order, either None where that census has none: a merge of
    two sorted streams, one object of each in memory. Without an end census: (object, object)."""
    if end is None:
        yield from ((o, o) for o in _in_key_order(start))
        return
    a, b = _in_key_order(start), _in_key_order(end)
    x, y = next(a, None), next(b, None)
    while x is not None or y is not None:
        if y is None or (x is not None and str(x.key) < str(y.key)):
            yield x, None
            x = next(a, None)
        elif x is None or str(y.key) < str(x.key):
            yield None, y
            y = next(b, None)
        else:
            yield x, y
            x, y = next(a, None), next(b, None)


def _identity_changed(before: CensusEntry | None, after: CensusEntry | None) -> bool:
    """Both censuses hold the key, for objects of different engine identities (``CensusObject.identity``)."""
    return bool(before and after and before.identity and after.identity and before.identity != after.identity)


def recreated(start: Iterable[CensusObjectJson] | None, end: Iterable[CensusObjectJson]) -> set[str]:
    """Keys both censuses hold for objects of different engine identities (dropped and created again under the same
    names, or rewritten): a new object, whose blocks the warm-up did not read. Read side by side (key order)."""
    return {after.key for before, after in _side_by_side(start or [], end)
            if after is not None and _identity_changed(before, after)}


def _order(u: UnreadObject) -> tuple[bool, bool, int, str, str]:
    """The application's unread objects first, then the engine's own files, then the waived; largest first."""
    return u.waived, bool(u.engine_internal), -u.unread_bytes, str(u.database), str(u.key)


class _Largest:
    """The first ``limit`` rows in ``_order`` of a stream, holding at most twice as many."""

    def __init__(self, limit: int) -> None:
        self.limit, self.rows = limit, []

    def add(self, row: UnreadObject) -> None:
        self.rows.append(row)
        if len(self.rows) >= 2 * self.limit:
            self.rows = sorted(self.rows, key=_order)[:self.limit]

    def first(self) -> list[UnreadObject]:
        return sorted(self.rows, key=_order)[:self.limit]


class _Overlay:
    """``{**reads, **caught}`` where ``reads`` is no dict (``plan_pass.KeyOrderedReads``: looked up, never held)."""

    def __init__(self, caught: dict[str, SegmentRead], reads: Reads) -> None:
        self.caught, self.reads = caught, reads

    def get(self, key: str, default: SegmentRead | None = None, /) -> SegmentRead | None:
        return self.caught[key] if key in self.caught else self.reads.get(key, default)

    def __contains__(self, key: object, /) -> bool:
        return key in self.caught or key in self.reads


@dataclass
class _Database:
    """One database's tally of the census: its objects and bytes, and what of them was not read."""

    database: str | None
    objects: int = 0
    bytes: int = 0
    unread_objects: int = 0
    unread_bytes: int = 0
    waived_bytes: int = 0
    engine_internal_bytes: int | None = None  # only where there are some

    def row(self) -> CensusDatabase:
        internal = self.engine_internal_bytes
        return CensusDatabase(database=self.database, objects=self.objects, bytes=self.bytes,
                              unread_objects=self.unread_objects, unread_bytes=self.unread_bytes,
                              waived_bytes=self.waived_bytes,
                              **({"engine_internal_bytes": internal} if internal is not None else {}))


def _row(obj: CensusEntry) -> CensusObjectRow:
    """An object as ``census.dropped`` names it."""
    return CensusObjectRow(key=obj.key, database=obj.database, schema=obj.schema, name=obj.name, kind=obj.kind,
                           bytes=obj.bytes, size_known=obj.size_known, reason=obj.reason, file=obj.file)


@dataclass
class _Counts:
    objects: int = 0
    bytes: int = 0
    unread_objects: int = 0
    unread_bytes: int = 0
    waived_objects: int = 0
    waived_bytes: int = 0
    internal_objects: int = 0
    internal_bytes: int = 0
    created: int = 0
    dropped: int = 0
    unknown: int = 0


def census_section(start: Iterable[CensusObjectJson] | None, reads: Reads,
                   end: Iterable[CensusObjectJson] | None = None,
                   catch_up: list[CatchUp] | None = None, *,
                   datafile_pass_complete: bool = False, listed: int = LISTED,
                   unread_sink: Callable[[UnreadObject], None] | None = None,
                   end_failure: EndCensusFailure | None = None) -> CensusSection:
    """``census``: the objects on the volume, what was read, and the unread objects named with their bytes and
    reason, grouped per database. ``reads`` is ``coverage.segment_reads`` of the run; ``catch_up`` what the end
    census's catch-up pass read; ``end_failure`` why the end census did not run (its step's error), kept only
    when there is no end census (the verdict's END_CENSUS names it).

    The censuses are read once each, side by side in key order (``census_json`` writes them so; a list is sorted
    here), so memory holds the databases and ``listed`` rows, never a census, nor the reads when they are
    ``plan_pass.KeyOrderedReads`` (a dict, or anything with ``get`` and ``in``, looked up in key order) (issue 32).
    ``unread`` names the first ``listed`` unread objects (un-waived first, largest first), ``unread_objects`` /
    ``waived_objects`` count them all, ``unread_more`` is what the list leaves out; ``unread_sink`` is given every
    unread object (in key order), for the evidence. ``created`` and ``dropped`` keep the first ``listed`` keys /
    objects in key order, ``created_objects`` and ``dropped_objects`` count them; ``unknown_size`` the first
    ``listed`` keys, ``unknown_size_objects`` counts them."""
    if start is None:
        return CensusSection(taken=False)
    caught = catch_up_reads(catch_up)
    after_recreation = caught  # a recreated object: only the catch-up pass read it, the plan read the old one
    reads = {**reads, **caught} if isinstance(reads, dict) else _Overlay(caught, reads)
    with_end = end is not None
    largest = _Largest(listed)
    dropped: list[CensusObjectRow] = []
    created: list[str] = []
    unknown: list[str] = []
    counts = _Counts()
    internal_kinds: dict[str, int] = {}
    by_db: dict[str | None, _Database] = {}
    for before, obj in _side_by_side(start, end):
        again = with_end and _identity_changed(before, obj)
        if obj is None or again:  # dropped (or dropped and created again) while the run ran: out of the denominator
            counts.dropped += 1
            if len(dropped) < listed and before is not None:
                dropped.append(_row(before))
            if obj is None:
                continue
        key = obj.key
        is_new = before is None or again
        known = after_recreation if again else reads
        if is_new:
            counts.created += 1
            if len(created) < listed:
                created.append(key)
        size = int(obj.bytes or 0) - gone_bytes(obj, known, with_end)
        counts.objects += 1
        counts.bytes += size
        missing, reason = _unread_of(obj, known, datafile_pass_complete, with_end)
        if reason not in (None, WAIVER, ENGINE_INTERNAL) and is_new and key not in known:  # a waiver holds
            reason = "created after the census"
        db = by_db.setdefault(obj.database, _Database(obj.database))
        db.objects += 1
        db.bytes += size
        if reason is None:
            continue
        waived, internal = reason == WAIVER, reason == ENGINE_INTERNAL
        db.unread_objects += 1
        if internal:
            db.engine_internal_bytes = (db.engine_internal_bytes or 0) + missing
            counts.internal_objects += 1
            counts.internal_bytes += missing
            internal_kinds[str(obj.kind)] = internal_kinds.get(str(obj.kind), 0) + missing
        elif waived:
            db.waived_bytes += missing
            counts.waived_objects += 1
            counts.waived_bytes += missing
        else:
            db.unread_bytes += missing
            counts.unread_objects += 1
            counts.unread_bytes += missing
        row = UnreadObject(key=key, database=obj.database, schema=obj.schema, name=obj.name, kind=obj.kind,
                           bytes=size, size_known=True if obj.size_known is None else obj.size_known, reason=reason,
                           file=obj.file, unread_bytes=missing, waived=waived,
                           **({"engine_internal": True} if internal else {}))
        if not waived and not internal and not row.size_known:
            counts.unknown += 1
            if len(unknown) < listed:
                unknown.append(key)
        largest.add(row)
        if unread_sink is not None:
            unread_sink(row)
    unread = largest.first()
    all_unread = counts.unread_objects + counts.waived_objects + counts.internal_objects
    databases = sorted(by_db.values(), key=lambda d: (-d.unread_bytes, -d.bytes, str(d.database)))
    return CensusSection(
        taken=True, end_census=with_end,
        **({"end_census_failure": end_failure} if not with_end and end_failure else {}),
        objects=counts.objects, bytes=counts.bytes, unread_bytes=counts.unread_bytes, waived_bytes=counts.waived_bytes,
        engine_internal_bytes=counts.internal_bytes, engine_internal_objects=counts.internal_objects,
        engine_internal_by_kind=dict(sorted(internal_kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
        unknown_size=unknown, unknown_size_objects=counts.unknown,
        by_database=[d.row() for d in databases],
        unread=unread, unread_listed_at_most=listed,
        unread_objects=counts.unread_objects, waived_objects=counts.waived_objects,
        unread_more=UnreadMore(objects=all_unread - len(unread),
                               bytes=counts.unread_bytes + counts.waived_bytes + counts.internal_bytes
                               - sum(u.unread_bytes for u in unread)),
        created=created, created_objects=counts.created,
        dropped=dropped, dropped_objects=counts.dropped,
        catch_up=catch_up or [],
    )
