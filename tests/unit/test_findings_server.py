"""The findings' ``server`` section (``findings.server``): a restart under the run, from two start times.

The start times are what the servers themselves report (``pg_postmaster_start_time()``; MySQL/MariaDB's clock less
``Uptime``, whole seconds; Oracle's ``V$INSTANCE.STARTUP_TIME``, no zone). The integration tests judge the readings
against the servers (test_restart_outage: a real restart; test_cli: none); these judge the comparison and the note.
"""

from __future__ import annotations

from cutover_prep.dal.records.findings import HotSet
from cutover_prep.dal.records.run import RunItem
from cutover_prep.findings.server import restarted, server_section
from tests.unit.verdict_of_documents import decide


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


def _zoned(zone: str | None, restarted_too: bool = True) -> RunItem:
    return RunItem(run_id="r", instance={"availability_zone": zone} if zone else {},
                   server_started_at="2026-11-28T10:00:00Z",
                   server_started_at_end="2026-11-28T10:30:00Z" if restarted_too else "2026-11-28T10:00:00Z")


def test_a_zone_that_moved_is_a_failover_and_the_verdict_fails_it() -> None:
    # RDS User Guide, "Multi-AZ DB instance deployments": RDS fails over to a standby in another Availability Zone
    section = server_section(_zoned("eu-west-1a"), zone_end="eu-west-1b")
    assert section.failed_over is True and section.restarted is True
    assert "failed over during the run (availability zone eu-west-1a, then eu-west-1b)" in section.note
    assert "standby's volume, which this run did not read" in section.note
    said = decide({"units": {"total": 1, "done": 1}, "bytes": {"planned": 1}, "coverage_pct": 100,
                   "server": section.stored()}, benchmark_requested=False)
    failing = [r for r in said["reasons"] if not r["ok"]]
    assert said["verdict"] == "NOT_READY" and [r["code"] for r in failing] == ["FAILED_OVER"], failing
    # without a restart seen by the engine (its start time not read), the moved zone alone fails it
    alone = server_section(RunItem(run_id="r", instance={"availability_zone": "eu-west-1a"}), zone_end="eu-west-1b")
    assert alone.failed_over is True and alone.restarted is None


def test_the_same_zone_or_none_at_all_proves_no_failover() -> None:
    # "it can take additional time for the RDS console to reflect the new Availability Zone" (the same page)
    same = server_section(_zoned("eu-west-1a"), zone_end="eu-west-1a")
    assert same.failed_over is False and "check the instance's events" in same.note
    assert "may show a new one late" in same.note
    local = server_section(_zoned(None), zone_end=None)  # a local run: no zone from RDS
    assert local.failed_over is None and "check the instance's events" in local.note
    quiet = server_section(_zoned("eu-west-1a", restarted_too=False), zone_end="eu-west-1a")
    assert quiet.failed_over is False and quiet.restarted is False and quiet.note is None
