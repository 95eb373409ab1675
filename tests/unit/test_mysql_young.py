"""engines.mysql.young (decision 0094): the second read of a hot-set chunk waits the server's own
``innodb_old_blocks_time``, never a longer one than ``MAX_WAIT_MS``; ``cache_bytes()`` is the young sublist, or None
(nothing marked) when the server's setting is longer; ``warmup.hot_set_cache: false`` marks nothing. The server's
behaviour itself is judged on a real MariaDB in tests/integration/test_mysql_young.py."""

from __future__ import annotations

from typing import Any

import pytest

from cutover_prep.engines import ConnectionSpec
from cutover_prep.engines.base import Extent, Segment
from cutover_prep.engines.mysql import young
from cutover_prep.engines.mysql.engine import MySQLEngine
from cutover_prep.engines.mysql.sql import Dialect
from cutover_prep.models.warmup import Warmup
from cutover_prep.warmup.discovery import make_plan

MIB = 2**20


class Cursor:
    """Answers the pool's settings and, around the second read, the status counters (made young, pool reads)."""

    def __init__(self, pool: tuple[int, int, int], counters: list[dict[str, int]]) -> None:
        self.pool, self.counters, self.rows, self.executed = pool, counters, [], []

    def __enter__(self) -> Cursor:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def execute(self, statement: str, params: Any = None) -> None:
        self.executed.append(statement)
        if statement == young.POOL_SQL:
            self.rows = [self.pool]
        elif statement == young.YOUNG_SQL:
            self.rows = list(self.counters.pop(0).items())

    def fetchone(self) -> Any:
        return self.rows[0]

    def fetchall(self) -> list:
        return self.rows


def test_the_second_read_waits_the_servers_setting_and_says_what_the_server_counted() -> None:
    slept, again = [], []
    cur = Cursor((256 * MIB, 37, 300), [{"Innodb_buffer_pool_pages_made_young": 10, "Innodb_buffer_pool_reads": 5},
                                        {"Innodb_buffer_pool_pages_made_young": 74, "Innodb_buffer_pool_reads": 6}])
    out = young.make_young(cur, lambda: again.append(len(slept)), sleep=slept.append)
    assert slept == [pytest.approx(0.3 + young.MARGIN_S)]  # 300 ms: the server's, not InnoDB's default 1000
    assert again == [1]  # read again once, after the wait
    assert out["innodb_old_blocks_time_ms"] == 300
    assert (out["pages_made_young"], out["reads"]) == (64, 1)


def test_a_setting_longer_than_the_bound_is_not_waited_for_and_says_so() -> None:
    slept, again = [], []
    cur = Cursor((256 * MIB, 37, 60_000), [])
    out = young.make_young(cur, lambda: again.append(1), sleep=slept.append)
    assert slept == [] and again == []
    assert "60000 ms" in out["skipped"]


class Conn:
    def __init__(self, pool: tuple[int, int, int]) -> None:
        self.pool = pool

    def cursor(self) -> Cursor:
        return Cursor(self.pool, [])

    def close(self) -> None:
        return None


@pytest.mark.parametrize(("pool", "expected"), [
    ((256 * MIB, 37, 1000), 256 * MIB * 63 // 100),  # the new sublist: the pool less innodb_old_blocks_pct
    ((128 * MIB, 20, 0), 128 * MIB * 80 // 100),
    ((256 * MIB, 37, young.MAX_WAIT_MS + 1), None),  # too long to wait: nothing marked, nothing claimed
])
def test_the_engine_cache_is_the_young_sublist_or_none(pool, expected) -> None:
    engine = MySQLEngine(Conn(pool), Dialect.from_version("10.11.6-MariaDB"), 16384, "plaintext", False)
    assert engine.cache_bytes() == expected


class PlanEngine:
    """One hot table and one other, an InnoDB pool of 256 MiB."""

    def discover(self, _options: Any) -> list[Segment]:
        return [Segment(schema="app", name=name, kind="table", bytes=4 * MIB, block_size=16384,
                        extents=(Extent(0, 0, 256),), locator={"read": "pk_walk", "schema": "app", "table": name,
                                                               "engine": "innodb", "rows": 4096, "pages": 256},
                        quote_char="`") for name in ("hot", "cold")]

    def cache_bytes(self) -> int:
        return 256 * MIB * 63 // 100

    def close(self) -> None:
        return None


HOT = {"engine": "mariadb", "server": "s", "taken_at": "t", "sources": ["the test"], "relations": 1,
       "names": ["app.hot"]}


@pytest.mark.parametrize(("setting", "marked"), [(None, True), (True, True), (False, False)])
def test_hot_set_cache_false_reads_the_hot_set_once(setting, marked) -> None:
    warmup = Warmup.model_validate({"hot_set": HOT, **({} if setting is None else {"hot_set_cache": setting})})
    spec = ConnectionSpec(engine="mariadb", host="h", port=3306, database="app", user="u", password="")
    planned = make_plan(spec, warmup, lambda _s, _w: PlanEngine(), attempts=1)
    cached = {r.segment_key: bool(r.locator.cache) for u in planned.plan.units for r in u.ranges}
    assert cached == {"app.hot#table": marked, "app.cold#table": False}
    assert planned.hot_set_cache.marked is marked
