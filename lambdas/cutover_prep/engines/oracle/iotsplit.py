"""An IOT's overflow segment read in slices of its key (issue 35 §3): no call must read a whole overflow.

An overflow segment (SYS_IOT_OVER_n) cannot be named in a query (ORA-25191) and its IOT has no physical rowids
to slice it by; its rows are reached through the IOT, by key. DBMS_PARALLEL_EXECUTE chunks a table by a NUMBER
column the same way (PL/SQL Packages and Types Reference 19c, "DBMS_PARALLEL_EXECUTE",
CREATE_CHUNKS_BY_NUMBER_COL, https://docs.oracle.com/en/database/oracle/oracle-database/19/arpls/DBMS_PARALLEL_EXECUTE.html:
from the column's minimum and maximum, in equal ranges). A planned piece of the overflow (blocks ``lo..hi`` of
its ``L``) reads the rows whose leading primary key column lies in the same share of ``[MIN, MAX]``:
``MIN + (MAX - MIN + 1) * lo / L`` up to (not including) the same at ``hi``, the last piece to ``MAX``
inclusive. The pieces' key ranges follow each other, so every row is read once by the pieces together; a
piece's share is a proportion of the key's range, not an address (keys unevenly spread make one piece read more
than it planned, another less: ``details["key_slice"]``).

An IOT whose leading key column is not a NUMBER cannot be sliced this way: the piece at the overflow's start
reads the whole overflow, and the others read nothing and say so (``details["unconfirmed"]``)."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal, localcontext
from typing import Any

from cutover_prep.engines.base import ReadRange
from cutover_prep.engines.locators import OracleLocator
from cutover_prep.engines.oracle import lobsplit
from cutover_prep.engines.oracle import read_sql as rq


def key_bounds(lo: int, hi: int, blocks: int, low: Decimal, high: Decimal) -> tuple[Decimal, Decimal | None]:
    """The key range of overflow blocks [lo, hi) of ``blocks``: [from, to), ``to`` None for the last piece
    (up to the maximum, inclusive). Adjacent pieces compute their shared bound from the same numbers."""
    with localcontext() as ctx:
        ctx.prec = 60
        span = high - low + 1

        def at(share: int) -> Decimal:
            return low + span * Decimal(share) / Decimal(blocks)

        return at(lo), (None if hi >= blocks else at(hi))


def read(cur: Any, rng: ReadRange, columns: list[str], partition: str | None,
         begin: Callable[[], None] = lambda: None) -> lobsplit.Sliced:
    """Read the overflow rows of ``rng``'s share of its IOT's key; the planned blocks gone from the segment.
    ``begin``: called right before the statement that reads data (``lobsplit.read``)."""
    loc = OracleLocator.of(rng.locator)
    # any segment's extents, in order
    overflow = lobsplit.lob_extents(cur, loc.model_copy(update={"segment": loc.overflow}))
    where = lobsplit.window(rng.extents, overflow) if rng.extents and overflow else None
    if where is None:
        return lobsplit.Sliced(rng.blocks, None)
    blocks = sum(e.blocks for e in overflow)
    whole = rq.iot_overflow_sql(loc.owner, loc.table, columns, partition)
    if where == (0, blocks):
        begin()
        cur.execute(whole)
        cur.fetchone()
        return lobsplit.Sliced(0, {"whole": True})
    key = cur.execute(rq.IOT_KEY_SQL, owner=loc.owner, table_name=loc.table).fetchone()
    if key is None or key[1] != "NUMBER":
        shown = {"key": None if key is None else str(key[0]), "type": None if key is None else key[1]}
        if where[0] != 0:  # the first piece reads it all; the others read nothing and say so
            return lobsplit.Sliced(0, shown, "the IOT's leading key is not a NUMBER: its first piece read the "
                                             "whole overflow")
        begin()
        cur.execute(whole)
        cur.fetchone()
        return lobsplit.Sliced(0, shown)
    column = str(key[0])
    low, high = cur.execute(rq.iot_key_range_sql(loc.owner, loc.table, column, partition)).fetchone()
    if low is None:  # no row: nothing to read
        return lobsplit.Sliced(0, {"key": column, "rows": 0})
    start, end = key_bounds(*where, blocks, Decimal(str(low)), Decimal(str(high)))
    begin()
    bounded = rq.iot_overflow_sql(loc.owner, loc.table, columns, partition, key=column, bounded=end is not None)
    cur.execute(bounded, key_from=start, **({"key_to": end} if end is not None else {}))
    cur.fetchone()
    return lobsplit.Sliced(0, {"key": column, "from": str(start), "to": None if end is None else str(end),
                               "overflow_blocks": [*where], "of": blocks})
