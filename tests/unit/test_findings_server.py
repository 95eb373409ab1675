"""The findings' ``server`` section (``findings.server``): a restart under the run, from two start times.

The start times are what the servers themselves report (``pg_postmaster_start_time()``; MySQL/MariaDB's clock less
``Uptime``, whole seconds; Oracle's ``V$INSTANCE.STARTUP_TIME``, no zone). The integration tests judge the readings
against the servers (test_restart_outage: a real restart; test_cli: none); these judge the comparison and the note.
"""

from __future__ import annotations

from cutover_prep.dal.records.findings import HotSet
from cutover_prep.dal.records.run import RunItem
from cutover_prep.findings.server import restarted, server_section


def test_one_start_read_twice_is_no_restart_two_starts_are() -> None:
    assert restarted("2026-11-28T10:00:00.123456Z", "2026-11-28T10:00:00.123456Z") is False
    # MySQL/MariaDB: the clock less Uptime, each in whole seconds, so one start may read a second apart
    assert restarted("2026-11-28T10:00:00Z", "2026-11-28T10:00:01Z") is False
    assert restarted("2026-11-28T10:00:00Z", "2026-11-28T10:05:00Z") is True
    # Oracle's, with no zone, against each other
    assert restarted("2026-11-28T10:00:00", "2026-11-28T11:00:00") is True


def test_a_start_not_read_is_not_known_never_no_restart() -> None:
    assert restarted(None, "2026-11-28T10:00:00Z") is None
    assert restarted("2026-11-28T10:00:00Z", None) is None
    assert restarted("not a time", "2026-11-28T10:00:00Z") is None
    assert restarted("2026-11-28T10:00:00", "2026-11-28T10:00:00Z") is None  # one with a zone, one without
    section = server_section(RunItem(run_id="r", server_started_at="2026-11-28T10:00:00Z"))
    assert section.restarted is None and section.note is None


def test_a_restart_says_the_cache_is_cold_and_names_a_failover() -> None:
    run = RunItem(run_id="r", server_started_at="2026-11-28T10:00:00Z", server_started_at_end="2026-11-28T10:30:00Z")
    section = server_section(run)
    assert section.restarted is True
    assert "buffer cache started empty again" in section.note and "failover" in section.note
    assert "hot set" not in section.note


def test_a_restart_after_the_hot_set_went_into_the_buffer_cache_says_it_is_gone_from_it() -> None:
    run = RunItem(run_id="r", server_started_at="2026-11-28T10:00:00Z", server_started_at_end="2026-11-28T10:30:00Z")
    before = HotSet(buffer_cache=True, warm_at="2026-11-28T10:10:00.000000Z")
    after = HotSet(buffer_cache=True, warm_at="2026-11-28T10:40:00.000000Z")
    not_cached = HotSet(buffer_cache=False, warm_at="2026-11-28T10:10:00.000000Z")
    assert "hot set read into it before the restart is no longer there" in server_section(run, before).note
    assert "hot set" not in server_section(run, after).note  # read into the cache after the restart: still there
    assert "hot set" not in server_section(run, not_cached).note
