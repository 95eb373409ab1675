"""``warmup.hot_set_cache`` (default true): the hot set's ranges marked ``cache`` (read into the engine's buffer
cache, ``planning.cache_hot_set``) when the engine says how big its cache is; false marks nothing, the hot set read
once as the rest. The engine here is a fake that says it (PostgreSQL's ``cache_bytes()``: shared_buffers)."""

from __future__ import annotations

from typing import Any

import pytest

from cutover_prep.engines import ConnectionSpec
from cutover_prep.engines.base import Extent, Segment
from cutover_prep.models.warmup import Warmup
from cutover_prep.warmup.discovery import make_plan

MIB = 2**20


class PlanEngine:
    """One hot table and one other, 128 MiB of buffer cache."""

    def discover(self, _options: Any) -> list[Segment]:
        return [Segment(schema="app", name=name, kind="table", bytes=4 * MIB, block_size=8192,
                        extents=(Extent(0, 0, 512),), locator={"database": "app", "oid": oid, "fork": "main",
                                                               "relkind": "r", "schema": "app", "relname": name})
                for oid, name in ((1, "hot"), (2, "cold"))]

    def cache_bytes(self) -> int:
        return 128 * MIB

    def close(self) -> None:
        return None


HOT = {"engine": "postgres", "server": "s", "taken_at": "t", "sources": ["the test"], "relations": 1,
       "names": ["app.hot"]}


@pytest.mark.parametrize(("setting", "marked"), [(None, True), (True, True), (False, False)])
def test_hot_set_cache_false_reads_the_hot_set_once(setting, marked) -> None:
    warmup = Warmup.model_validate({"hot_set": HOT, **({} if setting is None else {"hot_set_cache": setting})})
    spec = ConnectionSpec(engine="postgres", host="h", port=5432, database="app", user="u", password="")
    planned = make_plan(spec, warmup, lambda _s, _w: PlanEngine(), attempts=1)
    cached = {r.segment_key: bool(r.locator.cache) for u in planned.plan.units for r in u.ranges}
    assert cached == {"app.hot#table": marked, "app.cold#table": False}
    assert planned.hot_set_cache.marked is marked
