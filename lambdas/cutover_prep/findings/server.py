"""The findings' ``server`` section: did the database restart, or fail over, under the run?

Discover and the end census each read when the server last started (``engines.registry.server_started``: PostgreSQL's
``pg_postmaster_start_time()``, MySQL/MariaDB's clock less ``Uptime``, Oracle's ``V$INSTANCE.STARTUP_TIME``). The two
differ when it restarted in between: a reboot, a crash, or a Multi-AZ failover. The run rides a restart out (issue 32
§4), and what the warm-up read of the volume stays read, but the server's buffer cache starts empty again.

A Multi-AZ failover is another matter: the database is then served from the standby's volume, which this run did not
read. RDS fails over to "a standby replica in another Availability Zone" (RDS User Guide, "Multi-AZ DB instance
deployments"), so the instance's ``AvailabilityZone`` moves; the run's DescribeInstance read it before Discover and
Finalize reads it again. A different zone at the end is a failover (the verdict's FAILED_OVER fails). The same zone
proves nothing more: "it can take additional time for the RDS console to reflect the new Availability Zone" (the same
page), and a failover and a fail-back end in the first zone. So a restart without a moved zone, or where RDS gave no
zone (a local run), keeps the note that says to check the instance's events.
"""

from __future__ import annotations

from datetime import datetime

from cutover_prep.dal.records.findings import HotSet, ServerStarts
from cutover_prep.dal.records.run import RunItem

# two readings of one start may differ this much (MySQL/MariaDB: the clock less Uptime, whole seconds each)
SAME_START_SECONDS = 2.0


def _at(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def restarted(first: str | None, last: str | None) -> bool | None:
    """Whether two start times are two starts (None: either is unknown or unreadable)."""
    a, b = (_at(first) if first else None), (_at(last) if last else None)
    if a is None or b is None or (a.tzinfo is None) != (b.tzinfo is None):
        return None
    return abs((b - a).total_seconds()) > SAME_START_SECONDS


def server_section(run: RunItem, hot_set: HotSet | None = None, zone_end: str | None = None) -> ServerStarts:
    """The section from the run item's two start times and the instance's zone before Discover (``run.instance``)
    and at Finalize (``zone_end``); the note says what a restart or a failover means for the run."""
    first, last = run.server_started_at, run.server_started_at_end
    zone = (run.instance or {}).get("availability_zone")
    moved = None if not zone or not zone_end else zone != zone_end
    again = restarted(first, last)
    notes = []
    if moved:
        notes.append(f"the instance failed over during the run (availability zone {zone}, then {zone_end}): the "
                     "database is served from the standby's volume, which this run did not read")
    if again:
        cache = f"the database server restarted during the run (started {first}, then {last}): its buffer cache " \
                "started empty again"
        warm_at = _at(hot_set.warm_at) if hot_set is not None and hot_set.buffer_cache and hot_set.warm_at else None
        end = _at(last or "")
        if warm_at is not None and end is not None and warm_at.tzinfo and end.tzinfo and warm_at < end:
            cache += ", so the hot set read into it before the restart is no longer there"
        notes.append(cache)
        if not moved:
            same = f" (RDS reports the zone it was in before Discover, {zone}, but may show a new one late)" \
                if moved is False else ""
            notes.append("the blocks read stay read on the same volume, but a Multi-AZ failover serves the database "
                         f"from the standby's volume, which this run did not read{same}: check the instance's events")
    return ServerStarts(started_at=first, started_at_end=last, restarted=again, availability_zone=zone,
                        availability_zone_end=zone_end, failed_over=moved, note="; ".join(notes) or None)
