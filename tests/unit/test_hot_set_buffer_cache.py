"""findings.hot_set.buffer_cache: whether the plan asked the engine to read the hot set into its buffer cache
(a hot-set unit's range carries ``cache`` in its locator: planning.cache_hot_set)."""

from tests.unit.stored_sections import hot_set_section

HOT = {"engine": "postgres", "server": "s", "taken_at": "t", "sources": ["statistics: pg_statio_user_tables"],
       "relations": 1, "names": ["app.a"]}
SEGMENTS = [{"schema": "app", "name": "a", "database": None}]


def units(hot_cache: bool, rest_cache: bool = False) -> list[dict]:
    return [{"unit_id": "u1", "priority": 0, "bytes": 8192,
             "ranges": [{"segment": "app.a#table", "locator": {"oid": 1, **({"cache": True} if hot_cache else {})}}]},
            {"unit_id": "u2", "priority": 1, "bytes": 8192,
             "ranges": [{"segment": "app.b#table", "locator": {"oid": 2, **({"cache": True} if rest_cache else {})}}]}]


def test_the_section_says_whether_the_hot_set_was_planned_into_the_buffer_cache():
    assert hot_set_section(HOT, [], SEGMENTS, units(True), {})["buffer_cache"] is True
    assert hot_set_section(HOT, [], SEGMENTS, units(False), {})["buffer_cache"] is False
    assert hot_set_section(HOT, [], SEGMENTS, units(False, rest_cache=True), {})["buffer_cache"] is False
