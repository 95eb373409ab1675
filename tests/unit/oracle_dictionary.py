"""A fake Oracle data dictionary for discovery (issue 35 §3, §4): DBA_USERS, DBA_SEGMENTS (joined as
``sql.SEGMENTS_SQL`` joins it), DBA_EXTENTS, each answering the statement it is sent the way the view would:

- the segment types of the statement's WHERE clause (``segment_type IN (...)``) are kept;
- a statement that names ``:owner`` / ``:after`` / ``:upto`` gets the rows its WHERE clause keeps; one that
  names none (the code before issue 35) gets every row of the database, as Oracle would return it;
- DBA_EXTENTS rows carry SEGMENT_TYPE only when the statement selects it (Database Reference, "DBA_EXTENTS":
  https://docs.oracle.com/database/122/REFRN/DBA_EXTENTS.htm);
- ``PAGE_LAST_NAME_SQL``: the largest of the next ``:page_names`` distinct segment names after ``:after``.
Every statement is recorded with its binds, and each row of DBA_EXTENTS a statement returned is counted in
``extent_rows_read`` (on a cold volume each is a segment header read: what a whole-database query costs)."""

from __future__ import annotations

from typing import Any

from tests.unit.oracle_cursor import FakeCursor
from tests.unit.test_oracle import seg_row


class Cursor(FakeCursor):
    def execute(self, sql: str, parameters: Any = None, **binds: Any) -> Cursor:
        self.db.executed.append((sql, binds or parameters))
        if self.db.fail_after is not None and sum("FROM dba_extents" in s for s, _ in self.db.executed) \
                > self.db.fail_after:
            self.db.fail_after = None
            raise self.db.failure
        self._rows = self.db.answer(sql, binds)
        return self


class Dictionary:
    def __init__(self, users: list[tuple[str, str]], segments: list[dict[str, Any]]) -> None:
        """``users``: (USERNAME, ORACLE_MAINTAINED); ``segments``: dicts of seg_row's fields plus owner, name,
        partition, seg_type and ``extents`` [(relative_fno, block_id, blocks)]."""
        self.users, self.segments = users, segments
        self.executed: list[tuple[str, Any]] = []
        self.extent_rows_read = 0
        self.fail_after: int | None = None  # raise ``failure`` at the extents query after this many
        self.failure: Exception | None = None
        self.call_timeout, self.module, self.action = 0, None, None

    def cursor(self) -> Cursor:
        return Cursor(self)

    def rollback(self) -> None:
        self.executed.append(("ROLLBACK", None))

    def close(self) -> None:
        pass

    def _kept(self, seg: dict[str, Any], binds: dict[str, Any], sql: str = "") -> bool:
        where = sql.rsplit("WHERE", 1)[-1]  # the statement's own WHERE (after its joins' ON clauses)
        if "segment_type IN (" in where:
            listed = where.split("segment_type IN (")[1].split(")")[0]
            if f"'{seg['seg_type']}'" not in listed:
                return False
        if "owner" in binds and seg["owner"] != binds["owner"]:
            return False
        if binds.get("after") is not None and not seg["name"] > binds["after"]:
            return False
        return not ("upto" in binds and not seg["name"] <= binds["upto"])

    def answer(self, sql: str, binds: dict[str, Any]) -> list[tuple]:
        if "oracle_maintained = 'Y'" in sql:
            return [(u,) for u, maintained in self.users if maintained == "Y"]
        if "FROM dba_users" in sql:
            return [(u,) for u, _ in sorted(self.users)]
        if "SELECT MAX(segment_name)" in sql:
            names = sorted({s["name"] for s in self.segments if self._kept(s, binds, sql)})
            page = names[:int(binds["page_names"])]
            return [(page[-1] if page else None,)]
        if "FROM dba_extents" in sql:
            typed = "segment_type, relative_fno" in sql
            rows = []
            for s in self.segments:
                if self._kept(s, binds, sql):
                    for rfno, block, blocks in s["extents"]:
                        rows.append((s["owner"], s["name"], s["partition"], *((s["seg_type"],) if typed else ()),
                                     rfno, block, blocks))
            self.extent_rows_read += len(rows)
            return rows
        if "s.bytes, s.tablespace_name" in sql:  # the census (CENSUS_SEGMENTS_SQL): every segment
            return [(s["owner"], s["name"], s["partition"], s["seg_type"], s["size"], "USERS", s.get("index_type"),
                     s.get("locality")) for s in self.segments]
        if "FROM all_tables" in sql:  # ACCESSIBLE_SQL: the user may read every table here
            return [(s["owner"], s["name"]) for s in self.segments]
        if "FROM dba_segments s" in sql:
            width = 23 if "lt.iot_type" in sql else 22  # the columns the statement selects
            return [seg_row(s["owner"], s["name"], s["partition"], s["seg_type"],
                            **{k: v for k, v in s.items() if k not in ("owner", "name", "partition", "seg_type",
                                                                       "extents")})[:width]
                    for s in self.segments if self._kept(s, binds, sql)]
        return []


def segment(owner: str, name: str, partition: str | None, seg_type: str, extents: list[tuple[int, int, int]],
            **kw: Any) -> dict[str, Any]:
    blocks = sum(e[2] for e in extents)
    return {"owner": owner, "name": name, "partition": partition, "seg_type": seg_type, "extents": extents,
            "size": blocks * 8192, "blocks": blocks, **kw}


def dictionary_answers(segment_rows: list[tuple], extent_rows: list[tuple]) -> dict[str, Any]:
    """Answers (marker -> callable(sql, binds)) for the marker fakes (``OracleFake``, ``test_oracle.FakeConnection``)
    from a test's SEGMENTS_SQL rows (``seg_row``) and its extents (owner, name, partition, rfno, block, blocks):
    the users are the segments' owners, one page per owner, each extent typed by its segment's row. The page SQL
    markers come first (a marker fake that takes the first match)."""
    type_of = {(r[0], r[1], r[2]): r[3] for r in segment_rows}

    def kept(owner: str, name: str, binds: dict[str, Any]) -> bool:
        return owner == binds["owner"] and (binds["after"] is None or name > binds["after"]) \
            and ("upto" not in binds or name <= binds["upto"])

    def last_name(_sql: str, binds: dict[str, Any]) -> list[tuple]:
        names = [r[1] for r in segment_rows if kept(r[0], r[1], binds)]
        return [(max(names) if names else None,)]

    def extents(_sql: str, binds: dict[str, Any]) -> list[tuple]:
        return [(o, n, p, type_of.get((o, n, p), "TABLE"), *rest) for o, n, p, *rest in extent_rows
                if kept(o, n, binds)]

    return {
        "SELECT MAX(segment_name)": last_name,
        "FROM dba_users ORDER BY username": [(o,) for o in sorted({r[0] for r in segment_rows})],
        "FROM dba_extents": extents,
        # the columns the statement selects: before issue 35 §3 it did not select the LOB's table's IOT_TYPE
        "FROM dba_segments": lambda sql, binds: [r if "lt.iot_type" in sql else r[:22] for r in segment_rows
                                                 if kept(r[0], r[1], binds)],
    }
