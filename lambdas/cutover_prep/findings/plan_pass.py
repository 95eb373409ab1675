"""The plan's units and segments read once each, in bounded memory (issue 32 §8), for the findings.

A plan of a million census objects holds about as many segments and ranges: Finalize neither holds them nor a dict
keyed by them. ``PlanPass`` takes the units (``units.json``, a stream) and the segments (``plan-segments.jsonl``, a
stream) one at a time into a SQLite file of its own in the temporary directory (Lambda's ``/tmp``; SQLite sorts and
groups there, its page cache bounded), and keeps in memory only what is per unit (a unit's id, bytes, blocks, rank
and range count: the units are few) and bounded lists. Then:

- ``segments``: each planned segment with what was read of it (``coverage.segment_reads``' rules), in plan order;
- ``reads``: the same reads per segment key, for the census (``census.census_section``), looked up in key order;
- ``relations``: the ``coverage.LARGEST`` relations (table with its indexes, TOAST and forks) and how many there are;
- ``segment_done``: whether every unit holding each of a few keys is done (the oversized segments).

Every figure is the one ``coverage`` computes from lists (the same functions per range and per unit).
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
from collections.abc import Iterable, Iterator
from typing import Any

from cutover_prep.dal.records.census import SegmentRead
from cutover_prep.dal.records.findings import Relation, SegmentRow, UnreadUnit
from cutover_prep.dal.records.plan import PlanSegment, PlanUnit, UnitSummary
from cutover_prep.dal.records.units import progress_by_unit
from cutover_prep.engines.base import GONE_TRUNCATED
from cutover_prep.findings.coverage import (
    FAILED,
    LARGEST,
    NOT_READ,
    NOT_STARTED,
    PARTLY,
    READ,
    Items,
    _label,
    _pct,
    _read_of_range,
    gone_of,
    segment_status,
    unread_units,
)
from cutover_prep.models.status import UnitStatus

BATCH = 5000  # rows per executemany
_READS = ("SELECT key, SUM(planned), SUM(read), SUM(gone), MIN(done), MAX(failed) FROM reads")


class KeyOrderedReads:
    """``coverage.segment_reads``' dict, answered from the pass's file: lookups in ascending key order walk one
    sorted cursor (the census reads side by side in key order); any other lookup is one indexed query."""

    def __init__(self, db: sqlite3.Connection, gone_reason: dict[str, str]) -> None:
        self.db, self.gone_reason = db, gone_reason
        self._rows = db.execute(_READS + " GROUP BY key ORDER BY key")
        self._at: tuple[Any, ...] | None = next(self._rows, None)
        self._last: tuple[str, SegmentRead | None] | None = None

    def _entry(self, row: tuple[Any, ...]) -> SegmentRead:
        key, planned, read, gone, done, failed = row
        return {"planned": planned, "read": read, "gone": gone, "done": bool(done), "failed": bool(failed),
                **({"gone_reason": self.gone_reason[key]} if key in self.gone_reason else {})}

    def get(self, key: str, default: SegmentRead | None = None) -> SegmentRead | None:
        key = str(key)
        if self._last is not None and self._last[0] == key:
            found = self._last[1]
        elif self._last is None or key > self._last[0]:
            while self._at is not None and self._at[0] < key:
                self._at = next(self._rows, None)
            found = self._entry(self._at) if self._at is not None and self._at[0] == key else None
            self._last = (key, found)
        else:  # out of order: one query
            row = self.db.execute(_READS + " WHERE key = ? GROUP BY key", (key,)).fetchone()
            found = self._entry(row) if row else None
        return default if found is None else found

    def __contains__(self, key: object) -> bool:
        return self.get(str(key)) is not None


class PlanPass:
    """See the module's docstring. A context manager: the file is removed on leaving."""

    def __init__(self, unit_items: Items, *, hot_names: Iterable[str] = (), listed: int = 1000) -> None:
        self.unit_items, self.listed = progress_by_unit(unit_items), listed
        self.hot_names = set(hot_names)
        self.hot_matched: set[str] = set()
        self.units: list[UnitSummary] = []  # each unit without its ranges, in plan order
        self.unread_units: list[UnreadUnit] = []  # the first ``listed`` units not DONE
        self.gone_reason: dict[str, str] = {}
        self.segments_total = 0
        self._dir = tempfile.TemporaryDirectory(prefix="cprep-findings-")
        self.db = sqlite3.connect(os.path.join(self._dir.name, "plan.sqlite"))
        self.db.executescript(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE;"
            "CREATE TABLE reads (key TEXT, planned INT, read INT, gone INT, done INT, failed INT, ranged INT);"
            "CREATE TABLE segs (pos INTEGER PRIMARY KEY, key TEXT, database, schema, name, kind, bytes INT,"
            " blocks INT, units TEXT);"
            )
        # the relations in a file of their own: written while the segments are read from the first
        self.rels = sqlite3.connect(os.path.join(self._dir.name, "relations.sqlite"))
        self.rels.executescript(
            "PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; PRAGMA temp_store = FILE;"
            "CREATE TABLE rels (database, schema, name, label, bytes INT, bytes_read INT, status TEXT);")

    def __enter__(self) -> PlanPass:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.db.close()
        self.rels.close()
        self._dir.cleanup()

    # -- input ---------------------------------------------------------------------------------------------------
    def add_units(self, units: Iterable[PlanUnit]) -> None:
        """Each unit's ranges as reads of their segments (``coverage.segment_reads``' rule per range)."""
        rows: list[tuple[Any, ...]] = []
        for unit in units:
            item = self.unit_items.get(unit.unit_id) or NOT_STARTED
            status = item.status
            done, failed = int(status == UnitStatus.DONE), int(status == UnitStatus.FAILED)
            gone = gone_of(item)
            for g in item.gone_entries():  # why (the engine's word; PostgreSQL's before it said: truncated)
                self.gone_reason[g.segment] = g.reason
                rows.append((g.segment, 0, 0, 0, 1, 0, 0))
            for i, rng in enumerate(unit.ranges):
                read = max(0, _read_of_range(rng, i, status, item.cursor) - gone.get(i, 0))
                rows.append((rng.segment, rng.bytes, read, gone.get(i, 0), done, failed, 1))
            if not done and len(self.unread_units) < self.listed:
                self.unread_units.extend(unread_units([unit], self.unit_items))
            self.units.append(unit.summary())
            if len(rows) >= BATCH:
                self._insert("reads", rows)
        self._insert("reads", rows)
        self.db.execute("CREATE INDEX reads_key ON reads (key)")

    def add_segments(self, segments: Iterable[PlanSegment]) -> None:
        """The plan's segments, in plan order; the hot set's names they carry (``planning.hot_set_labels``)."""
        rows: list[tuple[Any, ...]] = []
        for s in segments:
            self.segments_total += 1
            if self.hot_names:
                self.hot_matched.update(n for n in s.names() if n in self.hot_names)
            rows.append((s.key, s.database, s.schema_, s.name, s.kind, s.bytes, s.blocks, json.dumps(s.units)))
            if len(rows) >= BATCH:
                self._insert("segs", rows)
        self._insert("segs", rows)

    def _insert(self, table: str, rows: list[tuple[Any, ...]]) -> None:
        if rows:
            (self.rels if table == "rels" else self.db).executemany(_INSERT[table], rows)
            rows.clear()

    # -- output --------------------------------------------------------------------------------------------------
    def reads(self) -> KeyOrderedReads:
        return KeyOrderedReads(self.db, self.gone_reason)

    def segments(self) -> Iterator[SegmentRow]:
        """Each planned segment as findings' ``segments`` lists it, in plan order; counted into ``relations``."""
        rows = self.db.execute(
                "SELECT s.key, s.database, s.schema, s.name, s.kind, s.bytes, s.blocks, s.units, r.p, r.r, r.g, r.d,"
                " r.f FROM segs s LEFT JOIN (SELECT key, SUM(planned) AS p, SUM(read) AS r, SUM(gone) AS g,"
                " MIN(done) AS d, MAX(failed) AS f FROM reads GROUP BY key) r ON r.key = s.key ORDER BY s.pos")
        rels: list[tuple[Any, ...]] = []
        for key, database, schema, name, kind, nbytes, blocks, units, *read in rows:
            entry: SegmentRead | None = (None if read[0] is None else
                                         {"planned": read[0], "read": read[1], "gone": read[2], "done": bool(read[3]),
                                          "failed": bool(read[4])})
            gone = (entry["gone"] or 0) if entry else 0
            seg = SegmentRow(key=key, database=database, schema=schema, name=name, kind=kind, bytes=nbytes,
                             blocks=blocks, status=segment_status(entry),
                             bytes_read=min(nbytes, entry["read"] if entry else 0),
                             **({"bytes_gone": gone, "gone_reason": self.gone_reason.get(key) or GONE_TRUNCATED}
                                if gone else {}),
                             units=json.loads(units))
            rels.append((database, schema, name, _label(seg), nbytes - gone, seg.bytes_read, seg.status))
            if len(rels) >= BATCH:
                self._insert("rels", rels)
            yield seg
        self._insert("rels", rels)

    def relations(self) -> tuple[list[Relation], int]:
        """The ``LARGEST`` relations (``coverage.coverage_section``'s ``largest``) and how many there are, of the
        segments ``segments`` gave."""
        count = self.rels.execute("SELECT COUNT(*) FROM (SELECT 1 FROM rels GROUP BY database, schema, name)"
                                  ).fetchone()
        rows = self.rels.execute(
            "SELECT database, schema, name, label, MIN(rowid) AS first, COUNT(*), SUM(bytes) AS b, SUM(bytes_read),"
            " SUM(status = 'READ'), SUM(status = 'FAILED'), SUM(status = 'NOT_READ') FROM rels"
            " GROUP BY database, schema, name ORDER BY b DESC, CAST(schema AS TEXT), CAST(name AS TEXT), first"
            " LIMIT ?", (LARGEST,)).fetchall()
        out = []
        for database, schema, name, label, _, segments, nbytes, nread, read, failed, not_read in rows:
            status = (READ if read == segments else FAILED if failed else NOT_READ if not_read == segments
                      else PARTLY)
            out.append(Relation(database=database, schema=schema, name=name, label=label, segments=segments,
                                bytes=nbytes, bytes_read=nread, status=status, pct=_pct(nread, nbytes)))
        return out, int(count[0])

    def segment_done(self, keys: Iterable[str]) -> dict[str, bool]:
        """Key -> every unit holding a range of it is DONE (keys with no range: absent)."""
        out = {}
        for key in set(keys):
            row = self.db.execute("SELECT MIN(done) FROM reads WHERE key = ? AND ranged = 1", (key,)).fetchone()
            if row and row[0] is not None:
                out[key] = bool(row[0])
        return out


_INSERT = {"reads": "INSERT INTO reads (key, planned, read, gone, done, failed, ranged) VALUES (?, ?, ?, ?, ?, ?, ?)",
           "segs": "INSERT INTO segs (key, database, schema, name, kind, bytes, blocks, units)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
           "rels": "INSERT INTO rels (database, schema, name, label, bytes, bytes_read, status)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?)"}
