"""The hot set into InnoDB's young sublist (issue 36 §1, decision 0094).

InnoDB inserts a page read from disk at the midpoint of its LRU list, the head of the *old* sublist
(``innodb_old_blocks_pct`` of the pool, 37 % by default). A page in the old sublist accessed again at least
``innodb_old_blocks_time`` ms (1000 by default) after its first access moves to the head of the *new* (young)
sublist; the pages of a scan, each touched only within that time, stay old and are the first evicted (MySQL 8.4
Reference Manual, 17.5.1 "Buffer Pool" and 17.8.3.3 "Making the Buffer Pool Scan Resistant"; MariaDB, "InnoDB
Buffer Pool"). So a hot set read once lives in the old sublist, and the warm-up's own scans of the rest of the
database push it out before the application touches it again (``benchmarks/yielding_mariadb.py``: the application
read from the volume after its hot set had been read). Read a second time once ``innodb_old_blocks_time`` has
passed, its pages are young, and the scans that follow pass through the old sublist without evicting them.

``cache_bytes``: the young sublist's bytes (what ``planning.cache_hot_set`` fills to ``HOT_SET_CACHE_SHARE``), or
None when ``innodb_old_blocks_time`` is longer than this read waits (``MAX_WAIT_MS``: nothing is marked, nothing is
claimed). ``make_young``: the wait and the second read of one chunk, with the server's own counters of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, NamedTuple

from cutover_prep.engines.mysql.evidence import delta, status

POOL_SQL = "SELECT @@innodb_buffer_pool_size, @@innodb_old_blocks_pct, @@innodb_old_blocks_time"
# Innodb_buffer_pool_pages_made_young: pages moved from the old sublist to the new (MariaDB's status variable;
# where the server has no such variable it is absent from the evidence, not 0)
YOUNG_SQL = ("SHOW GLOBAL STATUS WHERE Variable_name IN ('Innodb_buffer_pool_pages_made_young', "
             "'Innodb_buffer_pool_reads')")
MAX_WAIT_MS = 10_000  # a longer innodb_old_blocks_time: the hot set is read once, as the rest (not marked)
MARGIN_S = 0.05  # past the threshold: InnoDB compares whole milliseconds


class Pool(NamedTuple):
    """The InnoDB buffer pool's size (bytes) and its old sublist's settings, as the server has them now."""

    bytes: int
    old_pct: int
    old_blocks_ms: int

    @property
    def young_bytes(self) -> int:
        return self.bytes * (100 - self.old_pct) // 100

    @property
    def can_make_young(self) -> bool:
        return self.old_blocks_ms <= MAX_WAIT_MS


def read_pool(cur: Any) -> Pool:
    cur.execute(POOL_SQL)
    size, pct, ms = cur.fetchone()
    return Pool(int(size), int(pct), int(ms))


def make_young(cur: Any, read_again: Callable[[], None], *,
               sleep: Callable[[float], None] = time.sleep) -> dict[str, Any]:
    """Wait ``innodb_old_blocks_time`` (read now: the server's setting, not an assumed 1000 ms) since the chunk's
    first read ended, then ``read_again`` (the same statements); what the server counted meanwhile: pages made
    young, and pages it read from storage again (evicted before the second read: those stay old). A setting
    longer than ``MAX_WAIT_MS`` skips the second read and says so."""
    pool = read_pool(cur)
    if not pool.can_make_young:
        return {"skipped": f"innodb_old_blocks_time is {pool.old_blocks_ms} ms, longer than the "
                           f"{MAX_WAIT_MS} ms a chunk waits to read its pages again"}
    sleep(pool.old_blocks_ms / 1000 + MARGIN_S)
    before = status(cur, YOUNG_SQL)
    started = time.monotonic()
    read_again()
    moved = delta(before, status(cur, YOUNG_SQL))
    return {"innodb_old_blocks_time_ms": pool.old_blocks_ms, "second_read_s": round(time.monotonic() - started, 3),
            **{k.removeprefix("innodb_buffer_pool_"): v for k, v in moved.items()}}
