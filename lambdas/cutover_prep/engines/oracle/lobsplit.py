"""A LOB read in slices of its table (issue 35 §3): one call no longer has to read a whole LOB (sub)partition.

A LOB segment's blocks cannot be addressed by SQL; its values can, through the rows that hold them. So a
planned piece of a LOB segment (blocks ``lo..hi`` of its ``L`` blocks, in discovery's order: relative file,
block) is read as the LOB values of the rows in the same share of its table (sub)partition's ``T`` blocks:
table blocks ``lo*T//L .. hi*T//L`` (the last piece to ``T``), found by rowid ranges the way
DBMS_PARALLEL_EXECUTE's rowid chunks are (``read_sql.lob_read_block(rowid_range=True)``). The pieces of one LOB
are consecutive and together cover blocks ``0..L``, so their table slices cover the table once, every row
once: every LOB value is read exactly once by the pieces of its LOB together. A piece's own share is a
proportion, not an address: where the values' sizes differ across the table, one piece reads more LOB blocks
than it planned and another fewer (``details["lob_slice"]`` says which table blocks each read).

A piece that covers the whole LOB reads the whole column (no rowid predicate). Planned blocks the LOB segment
no longer holds (it shrank, it was rebuilt) are gone, as for a table (``ReadResult.gone``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import oracledb

from cutover_prep.engines.base import Extent, ReadRange
from cutover_prep.engines.locators import OracleLocator
from cutover_prep.engines.oracle import read_sql as rq
from cutover_prep.engines.oracle import rowids as rid

GONE_LOB_FREE = "free or retained LOB space (DBMS_SPACE.SPACE_USAGE), never read by a query"
SPACE_OUTS = ("size_blocks", "size_bytes", "used_blocks", "used_bytes", "expired_blocks", "expired_bytes",
              "unexpired_blocks", "unexpired_bytes")


class Sliced(NamedTuple):
    """What one slice read: the planned blocks gone (all of them when the segment no longer holds them: then
    ``shown`` is None), what the read's details say of the slice (``lob_slice``, ``key_slice``), and why it is
    not confirmed, when its counters cannot judge it (None otherwise)."""

    gone: int
    shown: dict[str, str | int | bool | list[int] | None] | None
    unconfirmed: str | None = None


def reachable(cur: Any, rng: ReadRange) -> tuple[int, dict[str, int] | str | None]:
    """The planned blocks of ``rng`` no DBMS_LOB read reaches (issue 35 §3): its share of the SecureFiles LOB
    segment's blocks that its values do not use (expired and unexpired retained versions, free and unformatted
    space; ``read_sql.LOB_SPACE_USAGE_SQL``), and what the read's details say of the segment's space
    (``lob_space``). 0 when the server does not say (a BasicFiles LOB, no ANALYZE privilege: ``lob_space`` says
    why); no ``lob_space`` for a piece that names no segment."""
    loc = OracleLocator.of(rng.locator)
    if not loc.segment:
        return 0, None
    outs = {name: cur.var(oracledb.DB_TYPE_NUMBER) for name in SPACE_OUTS}
    try:
        cur.execute(rq.LOB_SPACE_USAGE_SQL, owner=loc.owner, name=loc.segment,
                    segment_type=rq.LOB_SPACE_TYPES.get(loc.segment_type, loc.segment_type),
                    partition=loc.partition, **outs)
    except oracledb.DatabaseError as exc:
        err = exc.args[0] if exc.args else None
        return 0, f"not known: {(getattr(err, 'message', None) or str(exc)).splitlines()[0]}"
    got = {name: int(var.getvalue() or 0) for name, var in outs.items()}
    space = {k: got[k] for k in ("size_blocks", "used_blocks", "expired_blocks", "unexpired_blocks")}
    if got["size_blocks"] <= 0:
        return 0, space
    used = min(rng.blocks, -(-rng.blocks * got["used_blocks"] // got["size_blocks"]))  # its share, rounded up
    return rng.blocks - used, space


def lob_extents(cur: Any, loc: OracleLocator) -> list[Extent]:
    rows = cur.execute(rq.LOB_EXTENTS_SQL, owner=loc.owner, name=loc.segment, segment_type=loc.segment_type,
                       partition=loc.partition)
    return [Extent(int(f), int(b), int(n)) for f, b, n in rows]


def window(pieces: Sequence[Extent], lob: Sequence[Extent]) -> tuple[int, int] | None:
    """Where ``pieces`` (consecutive blocks of the LOB, in order) lie among the LOB's blocks: [lo, hi), or None
    when a planned block is not in the segment now."""
    def offset(file_id: int, block: int) -> int | None:
        at = 0
        for ext in lob:
            if ext.file_id == file_id and ext.first_block <= block < ext.first_block + ext.blocks:
                return at + block - ext.first_block
            at += ext.blocks
        return None

    first, last = pieces[0], pieces[-1]
    lo, end = offset(first.file_id, first.first_block), offset(last.file_id, last.first_block + last.blocks - 1)
    return None if lo is None or end is None or end < lo else (lo, end + 1)


def table_slice(lo: int, hi: int, lob_blocks: int, table: Sequence[Extent]) -> list[Extent]:
    """The table blocks of LOB blocks [lo, hi): the same share of the table's blocks, as extent pieces."""
    total = sum(e.blocks for e in table)
    first = lo * total // lob_blocks
    end = total if hi >= lob_blocks else hi * total // lob_blocks
    out, at = [], 0
    for ext in table:
        a, b = max(first, at), min(end, at + ext.blocks)
        if b > a:
            out.append(Extent(ext.file_id, ext.first_block + a - at, b - a))
        at += ext.blocks
    return out


def read(cur: Any, rng: ReadRange, total_var: Any, begin: Callable[[], None] = lambda: None) -> Sliced:
    """Read the LOB values of ``rng``'s share of its table; the planned blocks gone from the segment.
    ``begin`` is called right before the first statement that reads data (the counters taken then, after the
    dictionary look-ups, whose recursive reads are not the read's)."""
    loc = OracleLocator.of(rng.locator)
    block = rq.lob_read_block(loc.owner, loc.table, loc.column, loc.data_type, loc.table_partition,
                             loc.table_subpartition, rowid_range=True)
    lob = lob_extents(cur, loc)
    where = window(rng.extents, lob) if rng.extents and lob else None
    if where is None:
        return Sliced(rng.blocks, None)
    lob_blocks = sum(e.blocks for e in lob)
    if where == (0, lob_blocks):  # the whole LOB: the whole column
        begin()
        cur.execute(rq.lob_read_block(loc.owner, loc.table, loc.column, loc.data_type, loc.table_partition,
                                     loc.table_subpartition), total=total_var)
        return Sliced(0, {"whole": True})
    rows = list(cur.execute(rq.LOB_TABLE_NOW_SQL, owner=loc.owner, name=loc.table,
                            segment_type=loc.table_segment_type, partition=loc.table_partition))
    table = [Extent(int(f), int(b), int(n)) for _, f, b, n, _ in rows if f is not None]
    pieces = table_slice(*where, lob_blocks, table)
    shown: dict[str, str | int | bool | list[int] | None] = {
        "lob_blocks": [*where], "of_lob": lob_blocks, "table_blocks": sum(p.blocks for p in pieces),
        "of_table": sum(e.blocks for e in table)}
    if not pieces:
        return Sliced(0, shown)
    objd, bigfile = int(rows[0][0]), str(rows[0][4]) == "YES"
    begin()
    for p in pieces:
        cur.execute(block, total=total_var,
                    **rid.rowid_range_binds(objd, p.file_id, p.first_block, p.first_block + p.blocks - 1, bigfile))
    return Sliced(0, shown)


def first_blocks(extents: Sequence[Extent], blocks: int) -> tuple[Extent, ...]:
    """The first ``blocks`` blocks of ``extents`` (what a confirmation weighs a LOB read against)."""
    out, left = [], blocks
    for ext in extents:
        if left <= 0:
            break
        take = min(left, ext.blocks)
        out.append(Extent(ext.file_id, ext.first_block, take))
        left -= take
    return tuple(out)
